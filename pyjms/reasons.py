"""IBM MQ reason codes (MQRC) that pyjms errors carry, and MQ constants it honours.

Part of the errors layer: every pyjms error may carry a reason (pyjms.errors), so the codes
sit beside the error tree, below everything else. Only the codes IBM MQ defines for the
behaviours pyjms implements are listed; the DLQ handler's rules table may name more (see
pyjms.dlq.symbols).
"""

from __future__ import annotations

from enum import IntEnum


class MQRC(IntEnum):
    """Reason codes, named as IBM MQ names them without the ``MQRC_`` prefix."""

    NONE = 0
    CONNECTION_BROKEN = 2009
    EXPIRY_ERROR = 2013
    MSG_TOO_BIG_FOR_Q = 2030
    NO_MSG_AVAILABLE = 2033
    NO_MSG_UNDER_CURSOR = 2034
    OBJECT_IN_USE = 2042
    OPTIONS_ERROR = 2046
    PERSISTENCE_ERROR = 2047
    PRIORITY_ERROR = 2050
    PUT_INHIBITED = 2051
    Q_FULL = 2053
    Q_NOT_EMPTY = 2055
    NOT_AUTHORIZED = 2035
    Q_MGR_NOT_AVAILABLE = 2059
    UNKNOWN_OBJECT_NAME = 2085
    FORMAT_ERROR = 2110
    FUNCTION_NOT_SUPPORTED = 2298
    PROPERTY_NAME_ERROR = 2442
    PUBLICATION_FAILURE = 2502
    CALL_INTERRUPTED = 2549

    @property
    def mq_name(self) -> str:
        """The full IBM name, e.g. ``MQRC_EXPIRY_ERROR``."""
        return f"MQRC_{self.name}"


#: MQMD Expiry value meaning "never expires" (MQEI_UNLIMITED).
MQEI_UNLIMITED = -1


def reason_name(code: int) -> str:
    """``MQRC_<NAME>`` for a known code, else the number as text."""
    try:
        return MQRC(code).mq_name
    except ValueError:
        return str(code)
