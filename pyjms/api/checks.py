"""Checks of the values a producer and a consumer take: one place for the producer, the
Spark sink and the CLI alike.

Errors name the value that broke the rule and, where IBM MQ defines one, its reason code
(a negative time-to-live is IBM MQ's MQRC_EXPIRY_ERROR, E08). The rules IBM MQ adds for
delayed messages are pyjms.rules.delivery's, applied as a send policy.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pyjms.errors import InvalidArgumentRuntimeException, mq_error
from pyjms.reasons import MQRC

PRIORITY_RANGE = range(0, 10)
DELIVERY_MODES = {1: "NON_PERSISTENT", 2: "PERSISTENT"}
#: Java's long (JMS times and durations are longs of milliseconds)
JAVA_LONG_MAX = 2**63 - 1
#: the end of year 9999 UTC in epoch ms: a TTL or delay up to JAVA_LONG_MAX minus this keeps
#: now + value inside a Java long, whenever it is sent
_LATEST_SEND_MS = 253402300800000
#: the largest time-to-live or delivery delay: its expiration or delivery time fits a long
MAX_DURATION_MS = JAVA_LONG_MAX - _LATEST_SEND_MS


def is_int(value: Any) -> bool:
    """An int as JMS means it: bool and float are not ints (nor is 2.0 or Decimal('2'))."""
    return isinstance(value, int) and not isinstance(value, bool)


def to_ms(value: Any, what: str) -> int:
    """Milliseconds from an int or a timedelta (wherever JMS takes milliseconds)."""
    if isinstance(value, timedelta):
        return value // timedelta(milliseconds=1)
    if not is_int(value):
        raise InvalidArgumentRuntimeException(
            f"{what} must be an int of milliseconds or a timedelta, got {value!r}", values={what: value}
        )
    return int(value)


#: Java's int: the most messages one crossing asks for
JAVA_INT_MAX = 2**31 - 1
#: a wait longer than this (about 285,000 years) is a wait without end. Waits cross to the JVM
#: in slices of a second or less, so no provider adds a huge timeout to its clock
LONGEST_WAIT_MS = 2**53


def check_wait_ms(value: Any, what: str) -> int:
    """A wait in ms (an int or a timedelta, 0 or more); a huge one is clamped to
    LONGEST_WAIT_MS, which is honoured as a wait without end."""
    ms = to_ms(value, what)
    if ms < 0:
        raise InvalidArgumentRuntimeException(f"{what} {ms} is negative", values={what: ms})
    return min(ms, LONGEST_WAIT_MS)


def check_priority(priority: Any) -> int:
    if not is_int(priority) or priority not in PRIORITY_RANGE:
        raise InvalidArgumentRuntimeException(
            f"priority {priority!r} is outside the JMS range 0..9",
            reason=MQRC.PRIORITY_ERROR,
            values={"priority": priority},
        )
    return int(priority)


def check_delivery_mode(mode: Any) -> int:
    if not is_int(mode) or mode not in DELIVERY_MODES:
        raise InvalidArgumentRuntimeException(
            f"delivery mode {mode!r} is not PERSISTENT (2) or NON_PERSISTENT (1)",
            reason=MQRC.PERSISTENCE_ERROR,
            values={"delivery_mode": mode},
        )
    return int(mode)


def check_bool(value: Any, what: str) -> bool:
    """A JMS boolean: True or False only (1, 'yes' and None are not)."""
    if not isinstance(value, bool):
        raise InvalidArgumentRuntimeException(
            f"{what} must be True or False, got {value!r}", values={what: value}
        )
    return value


def check_positive_int(value: Any, what: str) -> int:
    """A count or a size: an int of 1 or more (True, 2.0 and 0 are not)."""
    if not is_int(value) or value < 1:
        raise InvalidArgumentRuntimeException(
            f"{what} must be a positive int, got {value!r}", values={what: value}
        )
    return int(value)


def check_epoch_ms(value: Any, what: str) -> int:
    """A JMS time header (JMSTimestamp, JMSExpiration, JMSDeliveryTime): an int in a Java long."""
    if not is_int(value) or not -JAVA_LONG_MAX - 1 <= value <= JAVA_LONG_MAX:
        raise InvalidArgumentRuntimeException(
            f"{what} {value!r} must be an int of epoch milliseconds within a Java long", values={what: value}
        )
    return int(value)


def _check_duration(ms: int, what: str, name: str) -> None:
    if ms > MAX_DURATION_MS:
        raise mq_error(
            InvalidArgumentRuntimeException,
            MQRC.EXPIRY_ERROR,
            f"{what} {ms} ms is too large: now + {what} would overflow a Java long "
            f"(the largest is {MAX_DURATION_MS} ms)",
            **{name: ms},
        )


def check_time_to_live(ttl: Any) -> int:
    """A TTL in ms; 0 means unlimited, a negative one is IBM MQ's MQRC_EXPIRY_ERROR (E08)."""
    ms = to_ms(ttl, "time_to_live")
    if ms < 0:
        raise mq_error(
            InvalidArgumentRuntimeException,
            MQRC.EXPIRY_ERROR,
            f"time-to-live {ms} ms is negative: use 0 for unlimited",
            time_to_live=ms,
        )
    _check_duration(ms, "time-to-live", "time_to_live")
    return ms


def check_delivery_delay(delay: Any) -> int:
    ms = to_ms(delay, "delivery_delay")
    if ms < 0:
        raise mq_error(
            InvalidArgumentRuntimeException,
            MQRC.EXPIRY_ERROR,
            f"delivery delay {ms} ms is negative",
            delivery_delay=ms,
        )
    _check_duration(ms, "delivery delay", "delivery_delay")
    return ms
