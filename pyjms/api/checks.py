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


def to_ms(value: Any, what: str) -> int:
    """Milliseconds from an int or a timedelta (wherever JMS takes milliseconds)."""
    if isinstance(value, timedelta):
        return int(value.total_seconds() * 1000)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentRuntimeException(
            f"{what} must be an int of milliseconds or a timedelta, got {value!r}", values={what: value}
        )
    return value


def check_priority(priority: Any) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int) or priority not in PRIORITY_RANGE:
        raise InvalidArgumentRuntimeException(
            f"priority {priority!r} is outside the JMS range 0..9", reason=MQRC.PRIORITY_ERROR,
            values={"priority": priority},
        )
    return priority


def check_delivery_mode(mode: Any) -> int:
    if mode not in DELIVERY_MODES or isinstance(mode, bool):
        raise InvalidArgumentRuntimeException(
            f"delivery mode {mode!r} is not PERSISTENT (2) or NON_PERSISTENT (1)",
            reason=MQRC.PERSISTENCE_ERROR, values={"delivery_mode": mode},
        )
    return mode


def check_time_to_live(ttl: Any) -> int:
    """A TTL in ms; 0 means unlimited, a negative one is IBM MQ's MQRC_EXPIRY_ERROR (E08)."""
    ms = to_ms(ttl, "time_to_live")
    if ms < 0:
        raise mq_error(
            InvalidArgumentRuntimeException, MQRC.EXPIRY_ERROR,
            f"time-to-live {ms} ms is negative: use 0 for unlimited", time_to_live=ms,
        )
    return ms


def check_delivery_delay(delay: Any) -> int:
    ms = to_ms(delay, "delivery_delay")
    if ms < 0:
        raise mq_error(
            InvalidArgumentRuntimeException, MQRC.EXPIRY_ERROR,
            f"delivery delay {ms} ms is negative", delivery_delay=ms,
        )
    return ms
