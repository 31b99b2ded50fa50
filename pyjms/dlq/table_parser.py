"""The parser of the DLQ handler's rules tables, as IBM MQ's runmqdlq defines their text.

A table is an optional control-data entry followed by rules, one entry per line::

    inputqm(' ') inputq(' ')
    REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)
    REPLYQM('?*') +
      ACTION(FWD) FWDQ(DEADQ.MANUAL) FWDQM(&REPLYQM)

Physical lines become entries (continuations joined), entries keyword items, items control
data and rules (pyjms.dlq.rule). Every problem is collected, with its line, and reported at
once (:class:`RulesTableError`; checklist Q07, Q09).

Where pyjms departs from IBM: values keep their case (queue names are case-sensitive on
JMS providers; IBM folds unquoted lowercase to uppercase), field lengths are not checked
(JMS names are not limited to 48 characters), the 72-column portability limit is not
enforced, and unquoted ``MQFMT_*`` names are accepted in FORMAT.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pyjms.dlq.rule import (
    DIGITS,
    FWDQ_REFERENCES,
    FWDQM_REFERENCES,
    MAX_NUMBER,
    MIN_RETRY,
    NUMERIC_PATTERNS,
    STRING_PATTERNS,
    UNQUOTED,
    Action,
    ControlData,
    PutAut,
    Rule,
)
from pyjms.dlq.symbols import format_symbol, numeric_symbol
from pyjms.errors import InvalidArgumentRuntimeException

_KEYWORD = re.compile(r"[A-Za-z]+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BLANKS = " \t"

_Problems = list[tuple[int, str]]  # (line number, message)
#: Keyword -> (attribute it sets, converter (keyword, value, quoted) -> typed value or _Bad).
_Keywords = Mapping[str, tuple[str, Callable[[str, str, bool], object]]]


class RulesTableError(InvalidArgumentRuntimeException):
    """A rules table that does not validate; ``problems`` holds (line number, message) pairs."""

    def __init__(self, problems: _Problems) -> None:
        self.problems: list[tuple[int, str]] = sorted(problems, key=lambda p: p[0])
        listing = "\n".join(f"  line {line}: {text}" for line, text in self.problems)
        count = len(self.problems)
        super().__init__(
            f"DLQ rules table has {count} problem{'s' if count != 1 else ''}:\n{listing}",
            values={"problems": self.problems},
        )

    def __reduce__(self) -> tuple[type[RulesTableError], tuple[list[tuple[int, str]]]]:
        # Spark ships errors between processes; rebuild from problems, not from the text.
        return (type(self), (self.problems,))


def parse_table(text: str) -> tuple[ControlData, list[Rule]]:
    """A table's control data and rules; RulesTableError lists every problem found."""
    problems: _Problems = []
    entries = _entries(text, problems)
    control, rules = _interpret(entries, problems)
    if not rules and not any(not e.is_control for e in entries):
        last_line = max(1, len(_LINE_BREAK.split(text)))
        problems.append((last_line, "the table has no rules; at least one rule is required"))
    if problems:
        raise RulesTableError(problems)
    return control, rules


# --- physical lines -> entries -> keyword items -> control data and rules ---------------


@dataclass
class _Entry:
    """One logical entry: continuation lines joined, with a map back to physical lines."""

    line: int
    text: str = ""
    starts: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    is_control: bool = False

    def line_at(self, pos: int) -> int:
        return self.lines[max(bisect_right(self.starts, pos) - 1, 0)]

    def add(self, piece: str, line: int) -> None:
        self.starts.append(len(self.text))
        self.lines.append(line)
        self.text += piece


@dataclass(frozen=True)
class _Item:
    keyword: str
    value: str
    quoted: bool
    at: int


class _Bad(Exception):
    """A value that does not validate; the message names the keyword."""


def _entries(text: str, problems: _Problems) -> list[_Entry]:
    """Join continuations. A continued line is taken as it is, even if blank or starting '*'."""
    physical = _LINE_BREAK.split(text)
    entries: list[_Entry] = []
    i = 0
    while i < len(physical):
        piece, i = physical[i], i + 1
        if not piece.strip(_BLANKS) or piece.lstrip(_BLANKS).startswith("*"):
            continue  # blank lines and comments, but only between entries
        entry, line = _Entry(line=i), i
        while True:
            body = piece.rstrip(_BLANKS)
            mark = body[-1:] if body.endswith(("+", "-")) else ""
            entry.add(body[:-1] if mark else piece, line)
            if not mark:
                break
            if i == len(physical):
                problems.append((line, f"the table ends after the continuation character '{mark}'"))
                break
            piece, i, line = physical[i], i + 1, i + 1
            if mark == "+":  # '+' continues from the first non-blank; '-' from column 1
                piece = piece.lstrip(_BLANKS)
        entries.append(entry)
    return entries


def _scan(entry: _Entry, problems: _Problems) -> list[_Item] | None:
    """KEYWORD(value) items; None after the first syntax error (the rest would only echo it)."""
    text, pos, items = entry.text, 0, []

    def fail(at: int, message: str) -> None:
        near = text[at : at + 20].strip(_BLANKS)
        problems.append((entry.line_at(at), f"{message} (near {near!r})" if near else message))

    def skip(pos: int, chars: str = _BLANKS) -> int:
        while pos < len(text) and text[pos] in chars:
            pos += 1
        return pos

    while (pos := skip(pos, _BLANKS + ",")) < len(text):
        match = _KEYWORD.match(text, pos)
        if match is None:
            fail(pos, "expected a keyword")
            return None
        keyword, at = match.group().upper(), pos
        pos = skip(match.end())
        if pos >= len(text) or text[pos] != "(":
            fail(pos, f"{keyword} needs a value in parentheses")
            return None
        pos = skip(pos + 1)
        quoted = pos < len(text) and text[pos] == "'"
        if quoted:
            chunks, pos = [], pos + 1
            while (close := text.find("'", pos)) >= 0 and text.startswith("''", close):
                chunks.append(text[pos:close] + "'")  # '' stands for one quote
                pos = close + 2
            if close < 0:
                fail(at, f"{keyword} has an unterminated quoted value")
                return None
            value, pos = "".join(chunks) + text[pos:close], close + 1
        else:
            start = pos
            while pos < len(text) and text[pos] not in _BLANKS + ")":
                pos += 1
            value = text[start:pos]
        pos = skip(pos)
        if pos >= len(text) or text[pos] != ")":
            fail(pos, f"expected ')' to close {keyword}(; quote values that contain blanks")
            return None
        pos += 1
        if pos < len(text) and text[pos] not in _BLANKS + ",":
            fail(pos, f"{keyword}(...) must be followed by a blank or a comma")
            return None
        items.append(_Item(keyword, value, quoted, at))
    return items


def _interpret(entries: list[_Entry], problems: _Problems) -> tuple[ControlData, list[Rule]]:
    control, rules = ControlData(), []
    for index, entry in enumerate(entries):
        items = _scan(entry, problems)
        if items is None:
            continue
        if not items:
            problems.append((entry.line, "expected keywords, found only separators"))
        elif any(item.keyword in _CONTROL_KEYWORDS for item in items):
            entry.is_control = True
            if index == 0 and (values := _values(_CONTROL_KEYWORDS, entry, items, problems)) is not None:
                control = ControlData(**values)
            elif index > 0:
                problems.append(
                    (
                        entry.line,
                        "control data (INPUTQ, INPUTQM, RETRYINT, WAIT) "
                        "is allowed only in the first entry of the table",
                    )
                )
        elif (values := _values(_RULE_KEYWORDS, entry, items, problems)) is not None:
            rules.append(Rule(line=entry.line, **values))
    return control, rules


def _values(
    keywords: _Keywords, entry: _Entry, items: list[_Item], problems: _Problems
) -> dict[str, Any] | None:
    """Attribute values for a Rule or ControlData; None when the entry has problems."""
    before, seen, values = len(problems), set[str](), dict[str, Any]()
    for item in items:
        line = entry.line_at(item.at)
        if item.keyword not in keywords:
            problems.append((line, _unknown(item.keyword, keywords)))
        elif item.keyword in seen:
            problems.append((line, f"{item.keyword} appears more than once in one entry"))
        elif not item.value:  # FORMAT() and FORMAT('') alike: IBM wants a significant character
            seen.add(item.keyword)
            problems.append(
                (
                    line,
                    f"{item.keyword}() needs at least one significant character; "
                    f"write {item.keyword}(' ') for blank",
                )
            )
        else:
            seen.add(item.keyword)
            attribute, convert = keywords[item.keyword]
            try:
                values[attribute] = convert(item.keyword, item.value, item.quoted)
            except _Bad as bad:
                problems.append((line, str(bad)))
    if keywords is _RULE_KEYWORDS:
        _check_actions(entry.line, seen, values.get("action"), problems)
    return values if len(problems) == before else None


def _check_actions(line: int, seen: set[str], action: object, problems: _Problems) -> None:
    if "ACTION" not in seen:
        problems.append((line, "the rule has no ACTION(DISCARD|IGNORE|RETRY|FWD)"))
    elif action is Action.FWD and "FWDQ" not in seen:
        problems.append((line, "ACTION(FWD) needs FWDQ(...)"))
    elif action is not None and action is not Action.FWD:
        for keyword in ("FWDQ", "FWDQM", "HEADER"):
            if keyword in seen:
                problems.append((line, f"{keyword} is valid only with ACTION(FWD)"))


def _unknown(keyword: str, keywords: _Keywords) -> str:
    if keywords is _CONTROL_KEYWORDS and keyword in _RULE_KEYWORDS:
        return f"{keyword} is a rule keyword; control data must be an entry of its own"
    close = difflib.get_close_matches(keyword, list(keywords), n=1)
    return f"unknown keyword {keyword}" + (f" (did you mean {close[0]}?)" if close else "")


# --- value converters: (keyword, value, quoted) -> typed value, or _Bad ---------------------


def _characters(keyword: str, value: str, quoted: bool, wildcards: bool) -> None:
    if not quoted and not UNQUOTED.fullmatch(value):
        raise _Bad(f"{keyword}({value}): quote values with characters other than letters, digits and . / _ %")
    if not wildcards and ("*" in value or "?" in value):
        raise _Bad(f"{keyword}({value}): wildcards are not allowed in {keyword}")


def _string_pattern(keyword: str, value: str, quoted: bool) -> str:
    _characters(keyword, value, quoted, wildcards=True)
    if keyword == "FORMAT" and not quoted and (symbol := format_symbol(value)) is not None:
        return symbol
    return value.rstrip(" ")  # trailing blanks are not significant (IBM)


def _numeric_pattern(prefixes: tuple[str, ...], keyword: str, value: str, quoted: bool) -> int | None:
    number = value.strip(" ")
    if number == "*":
        return None
    if "*" in number or "?" in number:
        raise _Bad(f"{keyword}({value}): a numeric value takes no '?', and '*' only on its own")
    if (symbol := numeric_symbol(number, prefixes)) is not None:
        return symbol
    families = " or ".join(f"{prefix}*" for prefix in prefixes)
    return _count(0, keyword, value, quoted, f"a number 0..{MAX_NUMBER}, '*' or a known {families} name")


def _count(low: int, keyword: str, value: str, quoted: bool, wanted: str = "") -> int:
    number = value.strip(" ")
    # a number longer than MAX_NUMBER is out of range before int() (Python refuses to
    # convert more than 4,300 digits), and the message shows only its start
    fits = DIGITS.fullmatch(number) and len(number.lstrip("0")) <= len(str(MAX_NUMBER))
    if not fits or not low <= int(number) <= MAX_NUMBER:
        shown = value if len(value) <= 40 else f"{value[:20]}... ({len(value)} characters)"
        raise _Bad(f"{keyword}({shown}) must be {wanted or f'a number {low}..{MAX_NUMBER}'}")
    return int(number)


def _choice(choices: Mapping[str, object], keyword: str, value: str, quoted: bool) -> object:
    chosen = choices.get(value.strip(" ").upper(), _Bad)
    if chosen is _Bad:
        raise _Bad(f"{keyword}({value}) must be one of {'|'.join(choices)}")
    return chosen


def _wait(keyword: str, value: str, quoted: bool) -> bool | int:
    if value.strip(" ").upper() in ("YES", "NO"):
        return value.strip(" ").upper() == "YES"
    return _count(0, keyword, value, quoted, f"YES, NO or a number of seconds 0..{MAX_NUMBER}")


def _name(references: Mapping[str, str], blank: object, keyword: str, value: str, quoted: bool) -> object:
    """A queue or queue-manager name, a reference, or ``blank`` for ' ' where IBM allows it."""
    name = value.strip(" ")
    if name.startswith("&"):
        if name.upper() in references:
            return name.upper()
        allowed = "|".join(references) or "no references"
        raise _Bad(f"{keyword}({value}): unknown reference; {keyword} allows {allowed}")
    if not name:
        if blank is _Bad:
            raise _Bad(f"{keyword}(' ') is not valid; name a queue")
        return blank
    _characters(keyword, value, quoted, wildcards=False)
    return name


_CONTROL_KEYWORDS: _Keywords = {
    "INPUTQ": ("input_q", partial(_name, {}, None)),
    "INPUTQM": ("input_qm", partial(_name, {}, None)),
    "RETRYINT": ("retry_interval_s", partial(_count, 0)),
    "WAIT": ("wait", _wait),
}

_RULE_KEYWORDS: _Keywords = {
    **{name.upper(): (name, _string_pattern) for name in STRING_PATTERNS},
    **{name.upper(): (name, partial(_numeric_pattern, fams)) for name, fams in NUMERIC_PATTERNS.items()},
    "ACTION": ("action", partial(_choice, {a.value: a for a in Action})),
    "FWDQ": ("fwdq", partial(_name, FWDQ_REFERENCES, _Bad)),  # FWDQ(' ') is invalid (IBM)
    "FWDQM": ("fwdqm", partial(_name, FWDQM_REFERENCES, "")),  # ' ' = local queue manager
    "HEADER": ("header", partial(_choice, {"YES": True, "NO": False})),
    "PUTAUT": ("putaut", partial(_choice, {p.value: p for p in PutAut})),
    "RETRY": ("retry", partial(_count, MIN_RETRY)),
}


__all__ = ["RulesTableError", "parse_table"]
