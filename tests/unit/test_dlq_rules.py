"""The DLQ handler's rules-table language (pyjms.dlq.rules), checklist Q01-Q09.

Retry bookkeeping (Q02) and the handler's runtime behaviour (Q05, Q08, Q10, Q11) belong to
the handler and are tested with it; here: parsing, validation, matching and forwarding targets.
"""

from __future__ import annotations

import pickle
import re
import string
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyjms.dlq import ControlData, Rule, RulesTable, RulesTableError, symbols
from pyjms.dlq.rules import MAX_NUMBER, NUMERIC_PATTERNS, STRING_PATTERNS, Action, PutAut
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
)
from pyjms.rules.reasons import MQRC

# IBM's published example table, as DESIGN.md quotes it.
IBM_EXAMPLE = """\
inputqm(' ') inputq(' ')
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)
REASON(MQRC_PUT_INHIBITED) ACTION(RETRY) RETRY(5)
MSGTYPE(MQMT_REQUEST) REPLYQM(AAAA.*) +
  ACTION(FWD) FWDQ(DEADQ) FWDQM(&REPLYQM)
DESTQM(bbbb.1) +
  action(fwd) fwdq(&DESTQ) fwdqm(bbbb.2) header(no)
REPLYQM(CCCC.*) +
  ACTION(FWD) FWDQ(ALARM) FWDQM(CCCC.1)
PERSIST(MQPER_NOT_PERSISTENT) ACTION(DISCARD)
REPLYQM('?*') +
  ACTION(FWD) FWDQ(DEADQ.MANUAL) FWDQM(&REPLYQM)
ACTION(FWD) FWDQ(DEADQ.MANUAL)
"""

PERSISTENT = {"persist": 1, "destq": "APP.IN", "destqm": "QM1"}


@pytest.fixture(scope="module")
def ibm() -> RulesTable:
    return RulesTable.parse(IBM_EXAMPLE)


def first(table: RulesTable, fields: dict[str, object]) -> Rule:
    found = table.first_match(fields)
    assert found is not None
    return found[1]


def problems_of(text: str) -> list[tuple[int, str]]:
    with pytest.raises(RulesTableError) as caught:
        RulesTable.parse(text)
    return caught.value.problems


def only_rule(text: str) -> Rule:
    (rule,) = RulesTable.parse(text).rules
    return rule


# --- IBM's example table ----------------------------------------------------------------


def test_ibm_example_parses_with_lines_and_default_control(ibm: RulesTable) -> None:
    assert ibm.control == ControlData(input_q=None, input_qm=None, retry_interval_s=60, wait=True)
    assert [rule.line for rule in ibm] == [2, 3, 4, 6, 8, 10, 11, 13]
    assert [rule.action for rule in ibm] == [Action.RETRY] * 2 + [Action.FWD] * 3 + [
        Action.DISCARD,
        Action.FWD,
        Action.FWD,
    ]


def test_q01_first_matching_rule_wins(ibm: RulesTable) -> None:
    # A non-persistent Q_FULL message also matches the DISCARD and catch-all rules further down.
    fields = {"reason": symbols.MQRC_SYMBOLS["MQRC_Q_FULL"], "persist": 0}
    assert ibm.first_match(fields) == (0, ibm.rules[0])
    rule = ibm.rules[0]
    assert (rule.action, rule.retry, rule.line) == (Action.RETRY, 5, 2)
    assert [r.line for r in ibm.matching(fields)] == [2, 10, 13]


def test_put_inhibited_retries_five_times(ibm: RulesTable) -> None:
    rule = first(ibm, {**PERSISTENT, "reason": 2051})
    assert (rule.line, rule.action, rule.retry) == (3, Action.RETRY, 5)


def test_request_from_aaaa_is_returned_to_its_queue_manager(ibm: RulesTable) -> None:
    fields = {**PERSISTENT, "reason": 2085, "msgtype": 1, "replyq": "R", "replyqm": "AAAA.1"}
    rule = first(ibm, fields)
    assert rule.line == 4
    assert rule.forward_target(fields) == ("DEADQ", "AAAA.1")
    assert rule.header is True and rule.putaut is PutAut.DEF


def test_reply_from_aaaa_is_not_a_request(ibm: RulesTable) -> None:
    fields = {**PERSISTENT, "msgtype": 2, "replyqm": "AAAA.1"}
    assert first(ibm, fields).line == 11


def test_destqm_rule_forwards_to_destq_at_bbbb2_without_header(ibm: RulesTable) -> None:
    fields = {**PERSISTENT, "destq": "ORDERS", "destqm": "bbbb.1"}
    rule = first(ibm, fields)
    assert rule.line == 6 and rule.header is False
    assert rule.forward_target(fields) == ("ORDERS", "bbbb.2")


def test_values_keep_their_case_unlike_ibm(ibm: RulesTable) -> None:
    # pyjms keeps case (JMS names are case-sensitive); IBM would fold DESTQM(bbbb.1) to BBBB.1.
    assert first(ibm, {**PERSISTENT, "destqm": "BBBB.1"}).line == 13


def test_cccc_messages_raise_the_alarm(ibm: RulesTable) -> None:
    fields = {**PERSISTENT, "replyqm": "CCCC.7"}
    assert first(ibm, fields).forward_target(fields) == ("ALARM", "CCCC.1")


def test_non_persistent_message_with_no_other_match_is_discarded(ibm: RulesTable) -> None:
    assert first(ibm, {**PERSISTENT, "persist": 0}).action is Action.DISCARD
    assert first(ibm, {}).action is Action.DISCARD  # missing fields count as blank / 0


def test_replyqm_nonblank_pattern_forwards_to_the_reply_queue_manager(ibm: RulesTable) -> None:
    fields = {**PERSISTENT, "replyqm": "QM9  "}
    rule = first(ibm, fields)
    assert rule.line == 11 and rule.replyqm == "?*"
    assert rule.forward_target(fields) == ("DEADQ.MANUAL", "QM9")


def test_replyqm_nonblank_pattern_skips_a_blank_replyqm(ibm: RulesTable) -> None:
    for blank in ("", "   ", None):
        assert not ibm.rules[6].matches({**PERSISTENT, "replyqm": blank})


def test_final_catch_all_forwards_to_deadq_manual(ibm: RulesTable) -> None:
    rule = first(ibm, {**PERSISTENT, "replyqm": ""})
    assert rule.line == 13
    assert rule.forward_target({}) == ("DEADQ.MANUAL", "")  # '' = the local queue manager


def test_ibm_example_round_trips_through_text(ibm: RulesTable) -> None:
    text = ibm.to_text()
    assert "REASON(MQRC_Q_FULL)" in text and "PERSIST(MQPER_NOT_PERSISTENT)" in text
    assert RulesTable.parse(text) == ibm


# --- rule order (Q01, Q03, Q04) and defaults (Q06) -------------------------------------


def test_q03_next_matching_rule_is_found_after_the_current_one() -> None:
    table = RulesTable.parse(
        "DESTQ(A*) ACTION(RETRY) RETRY(3)\nDESTQ(B) ACTION(DISCARD)\nACTION(FWD) FWDQ(HOLD)\nACTION(IGNORE)\n"
    )
    fields = {"destq": "AB"}
    assert table.first_match(fields) == (0, table.rules[0])
    assert table.first_match(fields, start=1) == (2, table.rules[2])
    assert table.first_match(fields, start=3) == (3, table.rules[3])
    assert table.first_match(fields, start=4) is None
    assert table.matching(fields) == [table.rules[0], table.rules[2], table.rules[3]]


def test_q04_no_matching_rule_gives_nothing() -> None:
    table = RulesTable.parse("REASON(MQRC_Q_FULL) ACTION(RETRY)\n")
    assert table.first_match({"reason": 2035}) is None
    assert table.matching({"reason": 2035}) == []


def test_q06_patterns_default_to_match_all() -> None:
    rule = only_rule("ACTION(IGNORE)")
    assert all(getattr(rule, name) == "*" for name in STRING_PATTERNS)
    assert all(getattr(rule, name) is None for name in NUMERIC_PATTERNS)
    assert (rule.retry, rule.header, rule.putaut, rule.fwdq, rule.fwdqm) == (1, True, PutAut.DEF, None, "")
    assert rule.matches({})
    assert rule.matches({"destq": "X", "reason": 2053, "persist": 1, "format": "MQSTR   "})


# --- validation (Q07, Q09) --------------------------------------------------------------


def test_q07_errors_name_their_lines() -> None:
    text = "\n".join(
        [
            "* a comment",
            "REASON(MQRC_Q_FULL) ACTION(RETRY)",
            "DESTQ(A) ACTION(EXPLODE)",  # line 3
            "",
            "ACTION(FWD)",  # line 5: no FWDQ
            "MSGTYPE(MQMT_NOPE) ACTION(DISCARD)",  # line 6
            "ACTION(RETRY) RETRY(0)",  # line 7
        ]
    )
    with pytest.raises(RulesTableError) as caught:
        RulesTable.parse(text)
    error = caught.value
    assert [line for line, _ in error.problems] == [3, 5, 6, 7]
    assert "EXPLODE" in error.problems[0][1] and "FWDQ" in error.problems[1][1]
    for line, problem in error.problems:
        assert f"line {line}: {problem}" in str(error)
    assert isinstance(error, InvalidArgumentRuntimeException) and isinstance(error, ValueError)


def test_q07_every_problem_of_one_rule_is_reported() -> None:
    problems = problems_of("REASON(MQRC_NOPE) PERSIST(3*) HEADER(MAYBE) ACTION(RETRY) ACTION(FWD)")
    assert len(problems) == 5 and {line for line, _ in problems} == {1}  # HEADER needs FWD, too


def test_q09_consecutive_syntax_errors_each_name_their_line() -> None:
    problems = problems_of("ACTION(DISCARD\nDESTQ(A B) ACTION(IGNORE)\n(ACTION(IGNORE)\nACTION(IGNORE)\n")
    assert [line for line, _ in problems] == [1, 2, 3]


def test_q09_one_syntax_error_per_entry_is_enough() -> None:
    # After a syntax error the rest of the entry would only echo it, so it is not reported.
    problems = problems_of("ACTION(IGNORE) DESTQ(A B) ) ((( FORMAT('")
    assert len(problems) == 1 and "DESTQ" in problems[0][1]


def test_error_in_a_continuation_names_the_physical_line() -> None:
    problems = problems_of("DESTQ(A) +\n  REASON(2053) +\n  ACTION(NOPE)\n")
    assert problems == [(3, "ACTION(NOPE) must be one of DISCARD|IGNORE|RETRY|FWD")]


def test_error_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(RulesTableError([(2, "bad"), (1, "worse")])))
    assert error.problems == [(1, "worse"), (2, "bad")]
    assert "line 1: worse" in str(error)


@pytest.mark.parametrize("text", ["", "\n\n", "* only a comment\n", "inputq(DLQ)\n"])
def test_a_table_needs_at_least_one_rule(text: str) -> None:
    assert "no rules" in problems_of(text)[0][1]


# --- syntax -----------------------------------------------------------------------------


def test_keywords_any_order_any_case_blanks_or_commas() -> None:
    a = only_rule("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)")
    b = only_rule("  retry ( 5 ),Action( retry ) , ReAsOn(mqrc_q_full)  ")
    assert a == b and b.reason == 2053


def test_a_keyword_appears_once_per_rule() -> None:
    assert "more than once" in problems_of("DESTQ(A) destq(B) ACTION(IGNORE)")[0][1]


def test_keywords_must_be_separated() -> None:
    assert "blank or a comma" in problems_of("ACTION(FWD)FWDQ(X)")[0][1]


@pytest.mark.parametrize("value", ["", "''", " ", "  "])
def test_every_value_needs_a_significant_character(value: str) -> None:
    assert "significant" in problems_of(f"FORMAT({value}) ACTION(IGNORE)")[0][1]


def test_a_keyword_needs_parentheses() -> None:
    assert "parentheses" in problems_of("FORMAT ACTION(IGNORE)")[0][1]


def test_unknown_keyword_suggests_a_close_one() -> None:
    assert "did you mean DESTQM" in problems_of("DESTQMGR(X) ACTION(IGNORE)")[0][1]


def test_plus_continues_from_the_first_nonblank_minus_from_column_one() -> None:
    assert only_rule("APPLNAME('ABC+\n    D') ACTION(IGNORE)").applname == "ABCD"
    assert only_rule("APPLNAME('ABC-\n   D') ACTION(IGNORE)").applname == "ABC   D"
    assert only_rule("ACT+  \n   ION(DIS-\nCARD)").action is Action.DISCARD


def test_continuation_at_the_end_of_the_table_is_an_error() -> None:
    assert problems_of("ACTION(IGNORE) +")[0][0] == 1


def test_comments_and_blank_lines_are_ignored_and_crlf_is_accepted() -> None:
    table = RulesTable.parse("* head\r\n\r\n   * indented comment\r\nACTION(IGNORE)\r\n\r\n")
    assert table.rules[0].line == 4


def test_quoted_values_keep_blanks_and_double_quotes() -> None:
    rule = only_rule("APPLIDAT('it''s a test') USERID(' bob') ACTION(IGNORE)")
    assert rule.applidat == "it's a test" and rule.userid == " bob"


def test_special_characters_must_be_quoted() -> None:
    assert "quote" in problems_of("DESTQ(orders-dlq) ACTION(IGNORE)")[0][1]
    assert only_rule("DESTQ('orders-dlq') ACTION(IGNORE)").destq == "orders-dlq"


def test_control_data_values() -> None:
    table = RulesTable.parse("INPUTQ(MY.DLQ) inputqm('QM 1') RETRYINT(5) WAIT(NO)\nACTION(IGNORE)")
    assert table.control == ControlData("MY.DLQ", "QM 1", 5, False)
    assert RulesTable.parse("WAIT(30)\nACTION(IGNORE)").control.wait == 30
    assert RulesTable.parse("wait(yes)\nACTION(IGNORE)").control.wait is True


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("ACTION(IGNORE)\nINPUTQ(X)", "first entry"),
        ("INPUTQ(X) ACTION(IGNORE)\nACTION(IGNORE)", "entry of its own"),
        ("INPUTQ(DLQ.*)\nACTION(IGNORE)", "wildcards"),
        ("WAIT(MAYBE)\nACTION(IGNORE)", "YES, NO"),
        ("RETRYINT(-1)\nACTION(IGNORE)", "RETRYINT"),
    ],
)
def test_control_data_errors(text: str, fragment: str) -> None:
    assert fragment in problems_of(text)[0][1]


# --- patterns ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        ("A?C", ["ABC", "A C"], ["AC", "ABBC", "abc"]),
        ("A*C", ["AC", "ABBBC", "AC  "], ["ACB", "BAC"]),
        ("'?*'", ["X", "  X"], ["", "   "]),
        ("' '", ["", "    "], ["X"]),
        ("'A '", ["A", "A    "], ["AB", " A"]),
        ("' A'", [" A"], ["A"]),
        ("*", ["", "anything"], []),
    ],
)
def test_wildcards_and_blanks(pattern: str, matching: list[str], not_matching: list[str]) -> None:
    rule = only_rule(f"DESTQ({pattern}) ACTION(IGNORE)")
    assert all(rule.matches({"destq": value}) for value in matching)
    assert not any(rule.matches({"destq": value}) for value in not_matching)


def test_numeric_patterns_take_numbers_symbols_or_star() -> None:
    rule = only_rule("MSGTYPE(1) FEEDBACK(mqfb_coa) PERSIST('*') REASON(MQFB_EXPIRATION) ACTION(IGNORE)")
    assert (rule.msgtype, rule.feedback, rule.persist, rule.reason) == (1, 259, None, 258)
    assert rule.matches({"msgtype": "1", "feedback": 259, "reason": 258})
    assert not rule.matches({"msgtype": 1, "feedback": 260, "reason": 258})


@pytest.mark.parametrize(
    "value", ["2*", "?", "1000000000", "-1", "MQMT_REQUEST", "MQRC_NO_SUCH_THING", "' '"]
)
def test_bad_numeric_patterns(value: str) -> None:
    assert problems_of(f"REASON({value}) ACTION(IGNORE)")[0][0] == 1


def test_format_accepts_mqfmt_names_unquoted_only() -> None:
    assert only_rule("FORMAT(MQFMT_STRING) ACTION(IGNORE)").matches({"format": "MQSTR   "})
    assert only_rule("FORMAT('MQFMT_STRING') ACTION(IGNORE)").format == "MQFMT_STRING"


def test_message_fields_may_be_symbolic_or_enums() -> None:
    rule = only_rule("REASON(2053) ACTION(IGNORE)")
    assert rule.matches({"reason": MQRC.Q_FULL}) and rule.matches({"reason": "MQRC_Q_FULL"})
    with pytest.raises(InvalidArgumentRuntimeException):
        rule.matches({"reason": "full"})


# --- actions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("DESTQ(A)", "no ACTION"),
        ("ACTION(FWD)", "needs FWDQ"),
        ("ACTION(FWD) FWDQ(' ')", "not valid"),
        ("ACTION(FWD) FWDQ(Q.*)", "wildcards"),
        ("ACTION(FWD) FWDQ(&DESTQM)", "unknown reference"),
        ("ACTION(FWD) FWDQ(Q) FWDQM(&REPLYQ)", "unknown reference"),
        ("ACTION(DISCARD) HEADER(NO)", "only with ACTION(FWD)"),
        ("ACTION(RETRY) FWDQ(Q)", "only with ACTION(FWD)"),
        ("ACTION(RETRY) RETRY(0)", "1..999999999"),
        ("ACTION(RETRY) RETRY(1000000000)", "1..999999999"),
        ("ACTION(FWD) FWDQ(Q) PUTAUT(ALL)", "DEF|CTX"),
    ],
)
def test_action_errors(text: str, fragment: str) -> None:
    assert fragment in problems_of(text)[0][1]


def test_forward_options() -> None:
    rule = only_rule("action(fwd) fwdq(&replyq) fwdqm(' ') header(no) putaut(ctx) retry(999999999)")
    assert (rule.fwdq, rule.fwdqm, rule.header, rule.putaut, rule.retry) == (
        "&REPLYQ",
        "",
        False,
        PutAut.CTX,
        MAX_NUMBER,
    )
    assert rule.forward_target({"replyq": "R.Q ", "replyqm": "QM2"}) == ("R.Q", "")


def test_forward_target_errors() -> None:
    with pytest.raises(IllegalStateRuntimeException):
        only_rule("ACTION(DISCARD)").forward_target({})
    with pytest.raises(InvalidDestinationRuntimeException):
        only_rule("ACTION(FWD) FWDQ(&REPLYQ)").forward_target({"replyq": "  "})


# --- symbols ----------------------------------------------------------------------------


def test_symbols_agree_with_reasons_and_ibm() -> None:
    for code in MQRC:
        assert symbols.NUMERIC_SYMBOLS[code.mq_name] == int(code)
    expected = {
        "MQRC_Q_FULL": 2053,
        "MQRC_PUT_INHIBITED": 2051,
        "MQRC_EXPIRY_ERROR": 2013,
        "MQRC_UNKNOWN_OBJECT_NAME": 2085,
        "MQRC_NOT_AUTHORIZED": 2035,
        "MQRC_MSG_TOO_BIG_FOR_Q": 2030,
        "MQRC_BACKED_OUT": 2003,
        "MQFB_EXPIRATION": 258,
        "MQFB_COA": 259,
        "MQFB_COD": 260,
        "MQMT_REQUEST": 1,
        "MQMT_REPLY": 2,
        "MQMT_REPORT": 4,
        "MQMT_DATAGRAM": 8,
        "MQPER_NOT_PERSISTENT": 0,
        "MQPER_PERSISTENT": 1,
    }
    assert {name: symbols.NUMERIC_SYMBOLS[name] for name in expected} == expected
    assert symbols.symbol_name(2053, ("MQRC_",)) == "MQRC_Q_FULL"
    assert symbols.symbol_name(65536, ("MQFB_",)) is None  # range bounds are not names


# --- properties -------------------------------------------------------------------------

NAME_CHARS = string.ascii_letters + string.digits + "./_%"
UNQUOTED = re.compile(r"[A-Za-z0-9./_%*?]+")
RULE_KEYWORDS = sorted(STRING_PATTERNS + tuple(NUMERIC_PATTERNS)) + [
    "action",
    "fwdq",
    "fwdqm",
    "header",
    "putaut",
    "retry",
]
KEYWORDS = RULE_KEYWORDS + ["inputq", "inputqm", "retryint", "wait"]
FWD_ONLY = ("fwdq", "fwdqm", "header")

names = (
    st.text(NAME_CHARS + " '-#", min_size=1, max_size=10)
    .map(lambda s: s.strip(" "))
    .filter(lambda s: bool(s) and "*" not in s)
)
patterns = st.text(NAME_CHARS + "*? '-&,()+", max_size=12).map(lambda s: s.rstrip(" "))
symbol_values = sorted(set(symbols.NUMERIC_SYMBOLS.values()))
numbers = st.none() | st.integers(0, MAX_NUMBER) | st.sampled_from(symbol_values)


@st.composite
def rules(draw: st.DrawFn) -> Rule:
    values: dict[str, Any] = {name: draw(st.just("*") | patterns) for name in STRING_PATTERNS}
    values |= {name: draw(numbers) for name in NUMERIC_PATTERNS}
    action = draw(st.sampled_from(Action))
    if action is Action.FWD:
        values["fwdq"] = draw(names | st.sampled_from(["&DESTQ", "&REPLYQ"]))
        values["fwdqm"] = draw(st.just("") | names | st.sampled_from(["&DESTQM", "&REPLYQM"]))
        values["header"] = draw(st.booleans())
    return Rule(
        action=action, putaut=draw(st.sampled_from(PutAut)), retry=draw(st.integers(1, MAX_NUMBER)), **values
    )


def render_value(draw: st.DrawFn, keyword: str, value: object) -> str:
    """Any spelling of ``value`` that must parse back to it: quoted or not, symbolic or not."""
    if keyword in NUMERIC_PATTERNS and value is None:
        return draw(st.sampled_from(["*", "'*'", " * "]))
    if keyword in NUMERIC_PATTERNS:
        names = [
            name
            for name, number in symbols.NUMERIC_SYMBOLS.items()
            if number == value and name.startswith(NUMERIC_PATTERNS[keyword])
        ]
        spellings = [str(value), f"'{value}'"] + names + [name.lower() for name in names]
        return draw(st.sampled_from(spellings))
    if isinstance(value, bool):
        value = "YES" if value else "NO"
    text = str(value.value if isinstance(value, (Action, PutAut)) else value)
    if keyword in ("fwdq", "fwdqm") and text.startswith("&"):
        return draw(st.sampled_from([text, text.lower()]))
    quoted = "'" + (text or " ").replace("'", "''") + "'"
    symbol = keyword == "format" and symbols.format_symbol(text) is not None
    return quoted if not UNQUOTED.fullmatch(text) or symbol else draw(st.sampled_from([text, quoted]))


@st.composite
def rendered(draw: st.DrawFn, rule: Rule) -> str:
    """One rule as text with random keyword order, case, separators, spacing and continuations."""
    defaults = Rule(action=rule.action)
    items = []
    for keyword in RULE_KEYWORDS:
        if keyword in FWD_ONLY and rule.action is not Action.FWD:
            continue
        value = getattr(rule, keyword)
        if keyword == "action" or value != getattr(defaults, keyword) or draw(st.booleans()):
            name = draw(st.sampled_from([keyword, keyword.upper(), keyword.capitalize()]))
            pad = draw(st.sampled_from(["", " ", "  "]))
            items.append(f"{name}{pad}({pad}{render_value(draw, keyword, value)}{pad})")
    items = draw(st.permutations(items))
    text = items[0]
    for item in items[1:]:
        text += draw(st.sampled_from([" ", ",", " , ", "   "])) + item
    lines, rest, indent = [], text, ""
    for _ in range(draw(st.integers(0, 3))):
        if len(rest) < 2:
            break
        cut = draw(st.integers(1, len(rest) - 1))
        mark = draw(st.sampled_from("+-"))
        if mark == "+" and rest[cut] == " ":  # '+' would swallow the blanks that follow
            mark = "-"
        lines.append(indent + rest[:cut] + mark + draw(st.sampled_from(["", "  "])))
        rest, indent = rest[cut:], ("   " if mark == "+" else "")
    return "\n".join(lines + [indent + rest])


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rules(), min_size=1, max_size=4), st.data())
def test_generated_rules_round_trip(generated: list[Rule], data: st.DataObject) -> None:
    lines, starts = ["* generated"], []
    for rule in generated:
        if data.draw(st.booleans()):
            lines.append(data.draw(st.sampled_from(["", "   ", "* note", "  * note +"])))
        starts.append(len(lines) + 1)
        lines.extend(data.draw(rendered(rule)).split("\n"))
    table = RulesTable.parse("\n".join(lines))
    assert list(table.rules) == generated
    assert [rule.line for rule in table] == starts
    assert RulesTable.parse(table.to_text()) == table


@settings(deadline=None)
@given(
    st.none() | names,
    st.none() | names,
    st.integers(0, MAX_NUMBER),
    st.booleans() | st.integers(0, MAX_NUMBER),
)
def test_generated_control_data_round_trips(
    queue: str | None, qmgr: str | None, interval: int, wait: bool | int
) -> None:
    table = RulesTable(ControlData(queue, qmgr, interval, wait), (Rule(action=Action.IGNORE),))
    assert RulesTable.parse(table.to_text()) == table


TOKENS = (
    KEYWORDS
    + [k.upper() for k in KEYWORDS]
    + [
        "(",
        ")",
        "'",
        "''",
        "+",
        "-",
        ",",
        " ",
        "  ",
        "\n",
        "\r\n",
        "*",
        "?",
        "?*",
        "&DESTQ",
        "&REPLYQM",
        "&",
        "MQRC_Q_FULL",
        "mqmt_request",
        "MQFMT_STRING",
        "0",
        "5",
        "999999999",
        "1000000000",
        "YES",
        "NO",
        "FWD",
        "DISCARD",
        "RETRY",
        "IGNORE",
        "DEF",
        "CTX",
        "Q.A",
        "é",
        "\t",
    ]
)


@settings(deadline=None, max_examples=300)
@given(st.lists(st.sampled_from(TOKENS), max_size=60) | st.text(max_size=200))
def test_parser_fails_only_with_rules_table_errors(tokens: list[str] | str) -> None:
    text = tokens if isinstance(tokens, str) else "".join(tokens)
    try:
        table = RulesTable.parse(text)
    except RulesTableError as error:
        assert error.problems and all(line >= 1 for line, _ in error.problems)
    else:
        assert RulesTable.parse(table.to_text()) == table


@cache
def reference_match(pattern: str, value: str) -> bool:
    if not pattern:
        return not value
    if pattern[0] == "*":
        return reference_match(pattern[1:], value) or (bool(value) and reference_match(pattern, value[1:]))
    return bool(value) and pattern[0] in ("?", value[0]) and reference_match(pattern[1:], value[1:])


@settings(deadline=None)
@given(st.text("AB *?", max_size=8), st.text("AB *?", max_size=8))
def test_wildcards_match_like_a_reference_matcher(pattern: str, value: str) -> None:
    rule = Rule(action=Action.IGNORE, userid=pattern.rstrip(" "))
    assert rule.matches({"userid": value}) == reference_match(pattern.rstrip(" "), value.rstrip(" "))


def test_a_reference_word_outside_fwdq_is_a_quoted_value():
    """Found by the round-trip property: USERID(&DESTQ) must be written USERID('&DESTQ')."""
    rule = Rule(action=Action.IGNORE, userid="&DESTQ")
    assert "USERID('&DESTQ')" in rule.to_text()
    assert only_rule(rule.to_text()).userid == "&DESTQ"
    assert "FWDQ(&DESTQ)" in Rule(action=Action.FWD, fwdq="&DESTQ").to_text()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "destq": st.sampled_from(["APP.1", "APP.2.X", "OTHER", ""]),
                "reason": st.sampled_from([2053, 2035, 0]),
            }
        ),
        min_size=1,
        max_size=20,
    ),
    st.integers(min_value=0, max_value=4),
)
def test_first_match_answers_from_its_cache_as_from_the_rules(messages, start):
    """first_match keeps its answers by the fields the rules test; asked again, or for other
    messages with the same fields, it answers as testing each rule in order would."""
    table = RulesTable.parse(
        "DESTQ(APP.1) ACTION(DISCARD)\nDESTQ(APP.*) REASON(2053) ACTION(FWD) FWDQ(A)\n"
        "REASON(MQRC_NOT_AUTHORIZED) ACTION(FWD) FWDQ(B)\nDESTQ(?THER) ACTION(IGNORE)\nACTION(RETRY)\n"
    )
    for fields in messages * 2:
        expected = next(((i, r) for i, r in enumerate(table.rules) if i >= start and r.matches(fields)), None)
        assert table.first_match(fields, start) == expected
