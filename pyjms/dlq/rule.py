"""A rule of the DLQ handler's rules table (IBM MQ's runmqdlq): its patterns, its action and
how it matches a message's fields, and the table's control data.

A rule's patterns compare with a message's fields (pyjms.dlq.header.message_fields): string
patterns with IBM's wildcards (``*`` any characters, ``?`` one), numeric ones exactly, by
number or by an MQ symbolic name. The table's text is read by pyjms.dlq.table_parser; the
table is pyjms.dlq.rules.RulesTable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache, partial

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

#: Characters IBM lets a value carry without quotes (plus lowercase, which pyjms keeps as is).
UNQUOTED = re.compile(r"[A-Za-z0-9./_%*?]+")
DIGITS = re.compile(r"[0-9]+")


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
            parts.append(f"INPUTQ({quote(self.input_q)})")
        if self.input_qm:
            parts.append(f"INPUTQM({quote(self.input_qm)})")
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

    @property
    def tested_strings(self) -> tuple[str, ...]:
        """The string fields this rule tests (its patterns other than ``*``)."""
        return tuple(name for name, _ in self._string_checks)

    @property
    def tested_numbers(self) -> tuple[str, ...]:
        """The numeric fields this rule tests (its patterns other than ``*``)."""
        return tuple(name for name, _ in self._numeric_checks)

    def matches(self, fields: Mapping[str, object] | FieldView) -> bool:
        """Whether a message's fields (keyed destq, reason, ...; missing = blank/0) match."""
        view = fields if isinstance(fields, FieldView) else FieldView(fields)
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
                parts.append(f"{name.upper()}({quote(value, name)})")
        parts.append(f"ACTION({self.action.value})")
        if self.fwdq is not None:
            parts.append(f"FWDQ({quote(self.fwdq, 'fwdq')})")
        if self.fwdqm:
            parts.append(f"FWDQM({quote(self.fwdqm, 'fwdqm')})")
        if not self.header:
            parts.append("HEADER(NO)")
        if self.putaut is not PutAut.DEF:
            parts.append(f"PUTAUT({self.putaut.value})")
        if self.retry != 1:
            parts.append(f"RETRY({self.retry})")
        return " ".join(parts)


# --- matching helpers -------------------------------------------------------------------


class FieldView:
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
    if DIGITS.fullmatch(text) and len(text) <= 4000:  # int() refuses more than 4,300 digits
        return int(text)
    symbol = numeric_symbol(text, NUMERIC_PATTERNS[name])
    if symbol is None:
        raise InvalidArgumentRuntimeException(f"message field {name}={value!r} is not a number")
    return symbol


def _resolve(value: str, references: Mapping[str, str], fields: Mapping[str, object]) -> str:
    source = references.get(value)
    return _text(fields.get(source)).strip() if source else value


def quote(value: str, keyword: str = "") -> str:
    """A value as table text: bare where IBM lets it be, else quoted."""
    # a reference such as &REPLYQ stays bare only where it is one (FWDQ, FWDQM); elsewhere
    # "&DESTQ" is a plain value and needs quotes like any other '&'
    if (keyword == "fwdq" and value in FWDQ_REFERENCES) or (keyword == "fwdqm" and value in FWDQM_REFERENCES):
        return value
    if not value:
        return "' '"
    if UNQUOTED.fullmatch(value) and not (keyword == "format" and format_symbol(value) is not None):
        return value
    return "'" + value.replace("'", "''") + "'"


__all__ = [
    "Action",
    "ControlData",
    "FieldView",
    "PutAut",
    "Rule",
    "MAX_NUMBER",
    "MIN_RETRY",
    "NUMERIC_PATTERNS",
    "STRING_PATTERNS",
]
