"""IBM MQ reason codes: defined in pyjms.reasons (the errors layer), kept here under the name
earlier releases used."""

from pyjms.reasons import MQEI_UNLIMITED, MQRC, reason_name

__all__ = ["MQRC", "MQEI_UNLIMITED", "reason_name"]
