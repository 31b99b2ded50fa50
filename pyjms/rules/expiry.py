"""Message expiry in IBM MQ's terms (spec 000: MQMD Expiry): the arithmetic is the client's
(pyjms.api.expiry, which Message.get_remaining_expiry uses), named here too."""

from pyjms.api.expiry import is_expired, now_ms, remaining_expiry, tenths_to_ms

__all__ = ["now_ms", "remaining_expiry", "is_expired", "tenths_to_ms"]
