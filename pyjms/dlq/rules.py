"""The rules table of the dead-letter queue handler, as IBM MQ's runmqdlq defines it.

A table is an optional control-data entry followed by rules, one entry per line::

    inputqm(' ') inputq(' ')
    REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)
    REPLYQM('?*') +
      ACTION(FWD) FWDQ(DEADQ.MANUAL) FWDQM(&REPLYQM)

:class:`RulesTable` is a validated table: its text is parsed by pyjms.dlq.table_parser, its
rules (pyjms.dlq.rule) match a message's fields, and it finds the first rule that does. This
only parses, validates and matches. The handler (pyjms.dlq) owns everything that changes over
time: retry counts, the retry interval, forwarding (checklist Q01-Q04).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from pyjms.dlq.rule import (
    MAX_NUMBER,
    MIN_RETRY,
    NUMERIC_PATTERNS,
    STRING_PATTERNS,
    Action,
    ControlData,
    FieldView,
    PutAut,
    Rule,
)
from pyjms.dlq.table_parser import RulesTableError, parse_table
from pyjms.errors import InvalidArgumentRuntimeException

#: first_match answers a table keeps (then it starts again)
_MAX_ANSWERS = 4096


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
        strings = {name for rule in self.rules for name in rule.tested_strings}
        numbers = {name for rule in self.rules for name in rule.tested_numbers}
        object.__setattr__(self, "_tested", (tuple(sorted(strings)), tuple(sorted(numbers))))

    @classmethod
    def parse(cls, text: str) -> RulesTable:
        """Validate the whole table; RulesTableError lists every problem found (Q07, Q09)."""
        control, rules = parse_table(text)
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
        view = FieldView(fields)
        return [rule for rule in self.rules if rule.matches(view)]

    def first_match(self, fields: Mapping[str, object], start: int = 0) -> tuple[int, Rule] | None:
        """The first matching rule at index ``start`` or later, with its index; None if none."""
        view = FieldView(fields)  # each field normalized once, not once per rule
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


__all__ = [
    "Action",
    "ControlData",
    "PutAut",
    "Rule",
    "RulesTable",
    "RulesTableError",
    "MAX_NUMBER",
    "MIN_RETRY",
    "NUMERIC_PATTERNS",
    "STRING_PATTERNS",
]
