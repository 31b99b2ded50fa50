"""Time and expiry arithmetic of the client, also in IBM MQ's terms (spec 000: MQMD Expiry).

JMS carries an absolute expiration time in ms (0 = never). IBM MQ shows a message's
remaining lifetime in tenths of a second, counted down from the put (E01, E02), with
MQEI_UNLIMITED (-1) for a message that never expires (E17); Message.get_remaining_expiry
gives it, so the arithmetic lives with the client (pyjms.rules.expiry names it too).
"""

from __future__ import annotations

import time

from pyjms.reasons import MQEI_UNLIMITED


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def remaining_expiry(expiration_ms: int, at_ms: int | None = None) -> int:
    """Remaining lifetime in tenths of a second, or MQEI_UNLIMITED.

    A message that is still deliverable always has at least 1 tenth left: an expired message
    is never returned (E05), so 0 would never be observed by a getter.
    """
    if expiration_ms <= 0:
        return MQEI_UNLIMITED
    now = now_ms() if at_ms is None else at_ms
    left = expiration_ms - now
    return max(1, -(-left // 100))  # ceiling: 1 ms left is still one tenth


def is_expired(expiration_ms: int, at_ms: int | None = None) -> bool:
    if expiration_ms <= 0:
        return False
    return (now_ms() if at_ms is None else at_ms) >= expiration_ms


def tenths_to_ms(tenths: int) -> int:
    """An MQ lifetime in tenths of a second as a JMS time-to-live (MQEI_UNLIMITED -> 0)."""
    return 0 if tenths == MQEI_UNLIMITED else tenths * 100
