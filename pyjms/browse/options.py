"""Browse options in IBM MQ's terms (MQGMO_* values), and the check of a combination.

A marking browser takes one int of these flags per call, as MQGET takes MQGMO.Options.
BROWSE_HANDLE and BROWSE_CO_OP are IBM's single constants for the usual combinations.
"""

from __future__ import annotations

from pyjms.errors import InvalidArgumentRuntimeException
from pyjms.reasons import MQRC

BROWSE_FIRST = 0x00000010
BROWSE_NEXT = 0x00000020
MARK_BROWSE_HANDLE = 0x00100000
MARK_BROWSE_CO_OP = 0x00200000
UNMARK_BROWSE_CO_OP = 0x00400000
UNMARK_BROWSE_HANDLE = 0x00800000
UNMARKED_BROWSE_MSG = 0x01000000

#: browse from the head, skip what this handle marked, mark what is returned for this handle
BROWSE_HANDLE = BROWSE_FIRST | UNMARKED_BROWSE_MSG | MARK_BROWSE_HANDLE
#: browse from the head, skip what the cooperating set marked, mark what is returned for the set
BROWSE_CO_OP = BROWSE_FIRST | UNMARKED_BROWSE_MSG | MARK_BROWSE_CO_OP

_GET_OPTIONS = BROWSE_FIRST | BROWSE_NEXT | MARK_BROWSE_HANDLE | MARK_BROWSE_CO_OP | UNMARKED_BROWSE_MSG
_UNMARK_OPTIONS = UNMARK_BROWSE_CO_OP | UNMARK_BROWSE_HANDLE

#: MsgMarkBrowseInterval limits (ms): -1 means marks never lapse
MAX_INTERVAL_MS = 999_999_999
#: IBM MQ's default MsgMarkBrowseInterval (ms)
DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS = 5000
#: a cooperative handle hands a claim out only within this share of the interval from the
#: claim, and of its lease from its last answered request; so a new mark service need wait
#: only as long before it grants the claims of handles that have not come back (a takeover)
CLAIM_KEPT_SHARE = 0.8


def _options_error(options: int, rule: str) -> InvalidArgumentRuntimeException:
    return InvalidArgumentRuntimeException(
        f"browse options {options:#010x}: {rule}", reason=MQRC.OPTIONS_ERROR, values={"options": options}
    )


def check_get_options(options: int, cooperative: bool) -> int:
    """The options of one browse call, or MQRC_OPTIONS_ERROR (2046) naming the broken rule."""
    if isinstance(options, bool) or not isinstance(options, int):
        raise _options_error(0, f"must be an int of MQGMO flags, got {options!r}")
    if options & ~_GET_OPTIONS:
        raise _options_error(
            options,
            f"unknown or unsupported flags {options & ~_GET_OPTIONS:#x} "
            "(a marking browser takes BROWSE_FIRST/NEXT, UNMARKED_BROWSE_MSG, "
            "MARK_BROWSE_HANDLE, MARK_BROWSE_CO_OP; unmark with unmark())",
        )
    if bool(options & BROWSE_FIRST) == bool(options & BROWSE_NEXT):
        raise _options_error(options, "exactly one of BROWSE_FIRST and BROWSE_NEXT is needed")
    if options & MARK_BROWSE_HANDLE and options & MARK_BROWSE_CO_OP:
        raise _options_error(options, "MARK_BROWSE_HANDLE and MARK_BROWSE_CO_OP exclude each other")
    if options & MARK_BROWSE_CO_OP and not cooperative:
        raise _options_error(
            options, "MARK_BROWSE_CO_OP needs a browser opened cooperative=True (MQOO_CO_OP)"
        )
    return options


def check_unmark_options(options: int, cooperative: bool) -> int:
    if isinstance(options, bool) or not isinstance(options, int) or not options or options & ~_UNMARK_OPTIONS:
        raise _options_error(
            options if isinstance(options, int) else 0,
            "unmark takes UNMARK_BROWSE_HANDLE and/or UNMARK_BROWSE_CO_OP",
        )
    if options & UNMARK_BROWSE_CO_OP and not cooperative:
        raise _options_error(
            options, "UNMARK_BROWSE_CO_OP needs a browser opened cooperative=True (MQOO_CO_OP)"
        )
    return options


def check_interval(interval_ms: object) -> int:
    """A MsgMarkBrowseInterval: milliseconds 0..999,999,999, or -1 for never."""
    if (
        isinstance(interval_ms, bool)
        or not isinstance(interval_ms, int)
        or not (interval_ms == -1 or 0 <= interval_ms <= MAX_INTERVAL_MS)
    ):
        raise InvalidArgumentRuntimeException(
            f"MsgMarkBrowseInterval {interval_ms!r} must be -1 (never unmark) or 0..{MAX_INTERVAL_MS:,} ms",
            values={"mark_browse_interval": interval_ms},
        )
    return interval_ms


def check_lease(lease_ms: object) -> int:
    """How long a silent browse handle keeps its marks: ms, at least 100."""
    if isinstance(lease_ms, bool) or not isinstance(lease_ms, int) or lease_ms < 100:
        raise InvalidArgumentRuntimeException(
            f"mark lease {lease_ms!r} ms must be an int >= 100", values={"mark_lease_ms": lease_ms}
        )
    return lease_ms
