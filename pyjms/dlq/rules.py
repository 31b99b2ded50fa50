"""The rules-table language of the dead-letter queue handler, as IBM MQ's runmqdlq defines it.

A table is an optional control-data entry followed by rules, one entry per line::

    inputqm(' ') inputq(' ')
    REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)
    REPLYQM('?*') +
      ACTION(FWD) FWDQ(DEADQ.MANUAL) FWDQM(&REPLYQM)

This module only parses, validates and matches. The handler (pyjms.dlq) owns everything
that changes over time: retry counts, the retry interval, forwarding (checklist Q01-Q04).

Where pyjms departs from IBM: values keep their case (queue names are case-sensitive on
JMS providers; IBM folds unquoted lowercase to uppercase), field lengths are not checked
(JMS names are not limited to 48 characters), the 72-column portability limit is not
enforced, and unquoted ``MQFMT_*`` names are accepted in FORMAT.
"""

from __future__ import annotations

import difflib
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache, partial
from typing import Any

from pyjms.dlq.symbols import format_symbol, numeric_symbol, symbol_name
from pyjms.errors import IllegalStateRuntimeException as _IllegalState
from pyjms.errors import InvalidArgumentRuntimeException
from pyjms.errors import InvalidDestinationRuntimeException as _InvalidDestination

#: Every numeric value in a table lies in 0..MAX_NUMBER (IBM's rule).
MAX_NUMBER = 999_999_999
#: RETRY counts attempts, so IBM starts it at 1.
MIN_RETRY = 1

STRING_PATTERNS = ("applidat", "applname", "destq", "destqm", "format", "replyq", "replyqm", "userid")
#: Numeric pattern fields, with the symbolic-name families each accepts. A DLQ reason may be
#: a feedback code and an exception report's feedback may be a reason code, hence the pairs.
NUMERIC_PATTERNS: Mapping[str, tuple[str, ...]] = {
    "appltype": ("MQAT_",),
    "feedback": ("MQFB_", "MQRC_"),
    "msgtype": ("MQMT_",),
    "persist": ("MQPER_",),
    "reason": ("MQRC_", "MQFB_"),
}
PATTERN_KEYWORDS = tuple(sorted(STRING_PATTERNS + tuple(NUMERIC_PATTERNS)))
FWDQ_REFERENCES: Mapping[str, str] = {"&DESTQ": "destq", "&REPLYQ": "replyq"}
FWDQM_REFERENCES: Mapping[str, str] = {"&DESTQM": "destqm", "&REPLYQM": "replyqm"}

# Characters IBM lets a value carry without quotes (plus lowercase, which pyjms keeps as is).
_UNQUOTED = re.compile(r"[A-Za-z0-9./_%*?]+")
_DIGITS = re.compile(r"[0-9]+")
_KEYWORD = re.compile(r"[A-Za-z]+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BLANKS = " \t"

_Problems = list[tuple[int, str]]  # (line number, message)
#: Keyword -> (attribute it sets, converter (keyword, value, quoted) -> typed value or _Bad).
_Keywords = Mapping[str, tuple[str, Callable[[str, str, bool], object]]]


class Action(str, Enum):
    """What a rule does with a matching message."""

    DISCARD = "DISCARD"
    IGNORE = "IGNORE"
    RETRY = "RETRY"
    FWD = "FWD"


class PutAut(str, Enum):
    """Whose authority forwarded messages are put with: the handler's or the message's."""

    DEF = "DEF"
    CTX = "CTX"


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


@dataclass(frozen=True)
class ControlData:
    """The optional first entry. None means "not given": the handler's own default applies.

    ``wait`` is True to wait forever for new messages (WAIT(YES)), False to stop once the
    queue holds nothing processable (WAIT(NO)), or an int to stop after that many idle seconds.
    """

    input_q: str | None = None
    input_qm: str | None = None
    retry_interval_s: int = 60
    wait: bool | int = True

    def to_text(self) -> str:
        """The entry as table text; empty when everything is at its default."""
        parts = []
        if self.input_q:
            parts.append(f"INPUTQ({_quote(self.input_q)})")
        if self.input_qm:
            parts.append(f"INPUTQM({_quote(self.input_qm)})")
        if self.retry_interval_s != 60:
            parts.append(f"RETRYINT({self.retry_interval_s})")
        if self.wait is not True:
            wait = "NO" if self.wait is False else str(self.wait)
            parts.append(f"WAIT({wait})")
        return " ".join(parts)


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One rule: a pattern (``*`` or None matches anything) and an action.

    String patterns have trailing blanks removed ('' matches only a blank field). Numeric
    patterns hold MQ values (e.g. persist 0 = MQPER_NOT_PERSISTENT, not JMS's DeliveryMode).
    ``fwdq``/``fwdqm`` hold a name or a reference such as ``&REPLYQM``; fwdqm '' is the local
    queue manager. ``line`` is where the rule starts and takes no part in equality, so two
    identical rules compare equal: key per-rule retry counts by table index, not by Rule.
    """

    action: Action
    applidat: str = "*"
    applname: str = "*"
    appltype: int | None = None
    destq: str = "*"
    destqm: str = "*"
    feedback: int | None = None
    format: str = "*"
    msgtype: int | None = None
    persist: int | None = None
    reason: int | None = None
    replyq: str = "*"
    replyqm: str = "*"
    userid: str = "*"
    fwdq: str | None = None
    fwdqm: str = ""
    header: bool = True
    putaut: PutAut = PutAut.DEF
    retry: int = 1
    line: int = field(default=0, compare=False)
    # made by __post_init__ from the patterns above
    _string_checks: tuple[tuple[str, Callable[[str], object]], ...] = field(
        default=(), init=False, repr=False, compare=False
    )
    _numeric_checks: tuple[tuple[str, int], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # compiled once: only the patterns that can fail a match, each a ready test
        string_checks = tuple(
            (name, _string_test(pattern))
            for name in STRING_PATTERNS
            if (pattern := getattr(self, name)) != "*"
        )
        numeric_checks = tuple(
            (name, wanted) for name in NUMERIC_PATTERNS if (wanted := getattr(self, name)) is not None
        )
        object.__setattr__(self, "_string_checks", string_checks)
        object.__setattr__(self, "_numeric_checks", numeric_checks)

    def matches(self, fields: Mapping[str, object] | _Fields) -> bool:
        """Whether a message's fields (keyed destq, reason, ...; missing = blank/0) match."""
        view = fields if isinstance(fields, _Fields) else _Fields(fields)
        for name, test in self._string_checks:
            if not test(view.text(name)):
                return False
        for name, wanted in self._numeric_checks:
            if view.number(name) != wanted:
                return False
        return True

    def forward_target(self, fields: Mapping[str, object]) -> tuple[str, str]:
        """(queue, queue manager) to forward to, references resolved; '' = local manager."""
        if self.action is not Action.FWD or self.fwdq is None:
            raise _IllegalState(f"the rule on line {self.line} does not forward")
        queue = _resolve(self.fwdq, FWDQ_REFERENCES, fields)
        if not queue:
            # IBM's advice: guard FWDQ(&REPLYQ) with REPLYQ('?*') so this cannot happen.
            raise _InvalidDestination(
                f"FWDQ({self.fwdq}) of the rule on line {self.line} is blank for this message",
                values={"fwdq": self.fwdq, "line": self.line},
            )
        return queue, _resolve(self.fwdqm, FWDQM_REFERENCES, fields)

    def to_text(self) -> str:
        """The rule as one line of table text, in canonical keyword order."""
        parts = []
        for name in PATTERN_KEYWORDS:
            value = getattr(self, name)
            if name in NUMERIC_PATTERNS:
                if value is not None:  # symbolic where one exists, for readable logs
                    parts.append(f"{name.upper()}({symbol_name(value, NUMERIC_PATTERNS[name]) or value})")
            elif value != "*":
                parts.append(f"{name.upper()}({_quote(value, name)})")
        parts.append(f"ACTION({self.action.value})")
        if self.fwdq is not None:
            parts.append(f"FWDQ({_quote(self.fwdq, 'fwdq')})")
        if self.fwdqm:
            parts.append(f"FWDQM({_quote(self.fwdqm, 'fwdqm')})")
        if not self.header:
            parts.append("HEADER(NO)")
        if self.putaut is not PutAut.DEF:
            parts.append(f"PUTAUT({self.putaut.value})")
        if self.retry != 1:
            parts.append(f"RETRY({self.retry})")
        return " ".join(parts)


@dataclass(frozen=True)
class RulesTable:
    """A validated rules table: control data and the rules in table order."""

    control: ControlData
    rules: tuple[Rule, ...]
    # first_match's answers by the fields some rule tests: dead letters mostly share them (one
    # destination, one reason), so a 100-rule table costs a lookup per message, not 100 tests
    _answers: dict[tuple[object, ...], tuple[int, Rule] | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _tested: tuple[tuple[str, ...], tuple[str, ...]] = field(
        default=((), ()), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        strings = {name for rule in self.rules for name, _ in rule._string_checks}
        numbers = {name for rule in self.rules for name, _ in rule._numeric_checks}
        object.__setattr__(self, "_tested", (tuple(sorted(strings)), tuple(sorted(numbers))))

    @classmethod
    def parse(cls, text: str) -> RulesTable:
        """Validate the whole table; RulesTableError lists every problem found (Q07, Q09)."""
        problems: _Problems = []
        entries = _entries(text, problems)
        control, rules = _interpret(entries, problems)
        if not rules and not any(not e.is_control for e in entries):
            last_line = max(1, len(_LINE_BREAK.split(text)))
            problems.append((last_line, "the table has no rules; at least one rule is required"))
        if problems:
            raise RulesTableError(problems)
        return cls(control, tuple(rules))

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> RulesTable:
        """Parse the table in a UTF-8 file; a file that cannot be read or is not UTF-8 text is
        one error naming the file (and the byte offset of the first bad byte)."""
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as e:
            raise InvalidArgumentRuntimeException(
                f"cannot read the rules table {os.fspath(path)!r}: {e.strerror or e}",
                values={"path": os.fspath(path)},
            ) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidArgumentRuntimeException(
                f"the rules table {os.fspath(path)!r} is not UTF-8 text (byte {e.start}: {data[e.start : e.start + 1]!r})",
                values={"path": os.fspath(path), "offset": e.start},
            ) from None
        return cls.parse(text)

    def matching(self, fields: Mapping[str, object]) -> list[Rule]:
        """Every rule the message matches, in table order (the order they are tried, Q01/Q03)."""
        view = _Fields(fields)
        return [rule for rule in self.rules if rule.matches(view)]

    def first_match(self, fields: Mapping[str, object], start: int = 0) -> tuple[int, Rule] | None:
        """The first matching rule at index ``start`` or later, with its index; None if none."""
        view = _Fields(fields)  # each field normalized once, not once per rule
        strings, numbers = self._tested
        try:
            key = (start, *(view.text(n) for n in strings), *(view.number(n) for n in numbers))
        except InvalidArgumentRuntimeException:  # a field that is no number: only a rule testing it fails
            key = None
        if key is not None and key in self._answers:
            return self._answers[key]
        found = None
        for index in range(max(start, 0), len(self.rules)):
            if self.rules[index].matches(view):
                found = index, self.rules[index]
                break
        if key is not None:
            if len(self._answers) >= _MAX_ANSWERS:
                self._answers.clear()
            self._answers[key] = found
        return found

    def to_text(self) -> str:
        """The table as text that parses back to an equal table."""
        control = self.control.to_text()
        return "\n".join(([control] if control else []) + [r.to_text() for r in self.rules]) + "\n"

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)


# --- matching helpers -------------------------------------------------------------------


#: first_match answers a table keeps (then it starts again)
_MAX_ANSWERS = 4096


class _Fields:
    """A message's fields as the patterns compare them, each normalized on first use: a
    number that is not one fails only a rule that tests it."""

    __slots__ = ("_fields", "_texts", "_numbers")

    def __init__(self, fields: Mapping[str, object]) -> None:
        self._fields = fields
        self._texts: dict[str, str] = {}
        self._numbers: dict[str, int] = {}

    def text(self, name: str) -> str:
        found = self._texts.get(name)
        if found is None:
            found = self._texts[name] = _text(self._fields.get(name))
        return found

    def number(self, name: str) -> int:
        found = self._numbers.get(name)
        if found is None:
            found = self._numbers[name] = _number(name, self._fields.get(name))
        return found


def _string_test(pattern: str) -> Callable[[str], object]:
    """A test of a normalized field against a pattern: equality unless it has wildcards."""
    if "*" not in pattern and "?" not in pattern:
        return pattern.__eq__
    prefix = pattern[:-1]
    if pattern.endswith("*") and "*" not in prefix and "?" not in prefix:  # the usual APP.* form
        return partial(_has_prefix, prefix)
    return _wildcard(pattern).fullmatch


def _has_prefix(prefix: str, text: str) -> bool:
    return text.startswith(prefix)


@lru_cache(maxsize=1024)
def _wildcard(pattern: str) -> re.Pattern[str]:
    # Fields lose trailing blanks before matching, so '?' can never match a trailing blank.
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(regex, re.DOTALL)


def _text(value: object) -> str:
    return "" if value is None else str(value).rstrip(" ")


def _number(name: str, value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return int(value)
    text = str(value).strip()
    if _DIGITS.fullmatch(text) and len(text) <= 4000:  # int() refuses more than 4,300 digits
        return int(text)
    symbol = numeric_symbol(text, NUMERIC_PATTERNS[name])
    if symbol is None:
        raise InvalidArgumentRuntimeException(f"message field {name}={value!r} is not a number")
    return symbol


def _resolve(value: str, references: Mapping[str, str], fields: Mapping[str, object]) -> str:
    source = references.get(value)
    return _text(fields.get(source)).strip() if source else value


def _quote(value: str, keyword: str = "") -> str:
    # a reference such as &REPLYQ stays bare only where it is one (FWDQ, FWDQM); elsewhere
    # "&DESTQ" is a plain value and needs quotes like any other '&'
    if (keyword == "fwdq" and value in FWDQ_REFERENCES) or (keyword == "fwdqm" and value in FWDQM_REFERENCES):
        return value
    if not value:
        return "' '"
    if _UNQUOTED.fullmatch(value) and not (keyword == "format" and format_symbol(value) is not None):
        return value
    return "'" + value.replace("'", "''") + "'"


# --- parsing: physical lines -> entries -> keyword items -> control data and rules ------


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
    if not quoted and not _UNQUOTED.fullmatch(value):
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
    fits = _DIGITS.fullmatch(number) and len(number.lstrip("0")) <= len(str(MAX_NUMBER))
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

__all__ = [
    "Action",
    "ControlData",
    "PutAut",
    "Rule",
    "RulesTable",
    "RulesTableError",
    "MAX_NUMBER",
    "MIN_RETRY",
]
