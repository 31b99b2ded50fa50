"""IBM MQ symbolic names that a DLQ rules table may use in place of numbers.

The values are IBM's own (cmqc.h). Only the names a dead-letter queue handler meets in
practice are listed: reason codes a message is dead-lettered with, feedback codes of
reports, message types, persistence values, put-application types and format names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from pyjms.reasons import MQRC

#: Reason codes (MQDLH Reason, MQMD Feedback of exception reports).
MQRC_SYMBOLS: Mapping[str, int] = MappingProxyType(
    {
        "MQRC_NONE": 0,
        "MQRC_ALIAS_BASE_Q_TYPE_ERROR": 2001,
        "MQRC_BACKED_OUT": 2003,
        "MQRC_CONNECTION_BROKEN": 2009,
        "MQRC_EXPIRY_ERROR": 2013,
        "MQRC_FEEDBACK_ERROR": 2014,
        "MQRC_GET_INHIBITED": 2016,
        "MQRC_MISSING_REPLY_TO_Q": 2027,
        "MQRC_MSG_TYPE_ERROR": 2029,
        "MQRC_MSG_TOO_BIG_FOR_Q": 2030,
        "MQRC_MSG_TOO_BIG_FOR_Q_MGR": 2031,
        "MQRC_NO_MSG_AVAILABLE": 2033,
        "MQRC_NO_MSG_UNDER_CURSOR": 2034,
        "MQRC_NOT_AUTHORIZED": 2035,
        "MQRC_OBJECT_CHANGED": 2041,
        "MQRC_OBJECT_IN_USE": 2042,
        "MQRC_OBJECT_TYPE_ERROR": 2043,
        "MQRC_OPTIONS_ERROR": 2046,
        "MQRC_PERSISTENCE_ERROR": 2047,
        "MQRC_PERSISTENT_NOT_ALLOWED": 2048,
        "MQRC_PRIORITY_EXCEEDS_MAXIMUM": 2049,
        "MQRC_PRIORITY_ERROR": 2050,
        "MQRC_PUT_INHIBITED": 2051,
        "MQRC_Q_DELETED": 2052,
        "MQRC_Q_FULL": 2053,
        "MQRC_Q_SPACE_NOT_AVAILABLE": 2056,
        "MQRC_Q_TYPE_ERROR": 2057,
        "MQRC_Q_MGR_NAME_ERROR": 2058,
        "MQRC_Q_MGR_NOT_AVAILABLE": 2059,
        "MQRC_REPORT_OPTIONS_ERROR": 2061,
        "MQRC_SECURITY_ERROR": 2063,
        "MQRC_STORAGE_NOT_AVAILABLE": 2071,
        "MQRC_UNKNOWN_ALIAS_BASE_Q": 2082,
        "MQRC_UNKNOWN_OBJECT_NAME": 2085,
        "MQRC_UNKNOWN_OBJECT_Q_MGR": 2086,
        "MQRC_UNKNOWN_REMOTE_Q_MGR": 2087,
        "MQRC_XMIT_Q_TYPE_ERROR": 2091,
        "MQRC_XMIT_Q_USAGE_ERROR": 2092,
        "MQRC_OBJECT_DAMAGED": 2101,
        "MQRC_RESOURCE_PROBLEM": 2102,
        "MQRC_SUPPRESSED_BY_EXIT": 2109,
        "MQRC_FORMAT_ERROR": 2110,
        "MQRC_NOT_CONVERTED": 2119,
        "MQRC_CONVERTED_MSG_TOO_BIG": 2120,
        "MQRC_MULTIPLE_REASONS": 2136,
        "MQRC_OBJECT_NAME_ERROR": 2152,
        "MQRC_OBJECT_Q_MGR_NAME_ERROR": 2153,
        "MQRC_Q_MGR_QUIESCING": 2161,
        "MQRC_Q_MGR_STOPPING": 2162,
        "MQRC_STOPPED_BY_CLUSTER_EXIT": 2188,
        "MQRC_CLUSTER_RESOLUTION_ERROR": 2189,
        "MQRC_PAGESET_FULL": 2192,
        "MQRC_UNEXPECTED_ERROR": 2195,
        "MQRC_UNKNOWN_XMIT_Q": 2196,
        "MQRC_UNKNOWN_DEF_XMIT_Q": 2197,
        "MQRC_DEF_XMIT_Q_TYPE_ERROR": 2198,
        "MQRC_DEF_XMIT_Q_USAGE_ERROR": 2199,
        "MQRC_CONNECTION_NOT_AUTHORIZED": 2217,
        "MQRC_MSG_TOO_BIG_FOR_CHANNEL": 2218,
        "MQRC_CLUSTER_PUT_INHIBITED": 2268,
        "MQRC_CLUSTER_RESOURCE_ERROR": 2269,
        "MQRC_NO_DESTINATIONS_AVAILABLE": 2270,
        "MQRC_FUNCTION_NOT_SUPPORTED": 2298,
        "MQRC_BACKOUT_THRESHOLD_REACHED": 2362,
        "MQRC_PUBLICATION_FAILURE": 2502,
    }
)

#: Feedback codes (MQMD Feedback; also found in MQDLH Reason).
MQFB_SYMBOLS: Mapping[str, int] = MappingProxyType(
    {
        "MQFB_NONE": 0,
        "MQFB_SYSTEM_FIRST": 1,
        "MQFB_QUIT": 256,
        "MQFB_EXPIRATION": 258,
        "MQFB_COA": 259,
        "MQFB_COD": 260,
        "MQFB_CHANNEL_COMPLETED": 262,
        "MQFB_CHANNEL_FAIL_RETRY": 263,
        "MQFB_CHANNEL_FAIL": 264,
        "MQFB_APPL_CANNOT_BE_STARTED": 265,
        "MQFB_TM_ERROR": 266,
        "MQFB_APPL_TYPE_ERROR": 267,
        "MQFB_STOPPED_BY_MSG_EXIT": 268,
        "MQFB_ACTIVITY": 269,
        "MQFB_XMIT_Q_MSG_ERROR": 271,
        "MQFB_PAN": 275,
        "MQFB_NAN": 276,
        "MQFB_STOPPED_BY_CHAD_EXIT": 277,
        "MQFB_STOPPED_BY_PUBSUB_EXIT": 279,
        "MQFB_NOT_A_REPOSITORY_MSG": 280,
        "MQFB_BIND_OPEN_CLUSRCVR_DEL": 281,
        "MQFB_MAX_ACTIVITIES": 282,
        "MQFB_NOT_FORWARDED": 283,
        "MQFB_NOT_DELIVERED": 284,
        "MQFB_UNSUPPORTED_FORWARDING": 285,
        "MQFB_UNSUPPORTED_DELIVERY": 286,
        "MQFB_DATA_LENGTH_ZERO": 291,
        "MQFB_DATA_LENGTH_NEGATIVE": 292,
        "MQFB_DATA_LENGTH_TOO_BIG": 293,
        "MQFB_BUFFER_OVERFLOW": 294,
        "MQFB_LENGTH_OFF_BY_ONE": 295,
        "MQFB_IIH_ERROR": 296,
        "MQFB_NOT_AUTHORIZED_FOR_IMS": 298,
        "MQFB_IMS_ERROR": 300,
        "MQFB_IMS_FIRST": 301,
        "MQFB_IMS_LAST": 399,
        "MQFB_SYSTEM_LAST": 65535,
        "MQFB_APPL_FIRST": 65536,
        "MQFB_APPL_LAST": 999999999,
    }
)

#: Message types (MQMD MsgType).
MQMT_SYMBOLS: Mapping[str, int] = MappingProxyType(
    {
        "MQMT_SYSTEM_FIRST": 1,
        "MQMT_REQUEST": 1,
        "MQMT_REPLY": 2,
        "MQMT_REPORT": 4,
        "MQMT_DATAGRAM": 8,
        "MQMT_SYSTEM_LAST": 65535,
        "MQMT_APPL_FIRST": 65536,
        "MQMT_APPL_LAST": 999999999,
    }
)

#: Persistence (MQMD Persistence). JMS DeliveryMode differs: NON_PERSISTENT=1, PERSISTENT=2.
MQPER_SYMBOLS: Mapping[str, int] = MappingProxyType(
    {
        "MQPER_NOT_PERSISTENT": 0,
        "MQPER_PERSISTENT": 1,
        "MQPER_PERSISTENCE_AS_Q_DEF": 2,
    }
)

#: Put-application types (MQMD PutApplType). MQAT_UNKNOWN (-1) is left out: a rules table
#: accepts only 0..999 999 999.
MQAT_SYMBOLS: Mapping[str, int] = MappingProxyType(
    {
        "MQAT_NO_CONTEXT": 0,
        "MQAT_CICS": 1,
        "MQAT_MVS": 2,
        "MQAT_OS390": 2,
        "MQAT_ZOS": 2,
        "MQAT_IMS": 3,
        "MQAT_OS2": 4,
        "MQAT_DOS": 5,
        "MQAT_UNIX": 6,
        "MQAT_AIX": 6,
        "MQAT_DEFAULT": 6,
        "MQAT_QMGR": 7,
        "MQAT_OS400": 8,
        "MQAT_WINDOWS": 9,
        "MQAT_CICS_VSE": 10,
        "MQAT_WINDOWS_NT": 11,
        "MQAT_VMS": 12,
        "MQAT_GUARDIAN": 13,
        "MQAT_NSK": 13,
        "MQAT_VOS": 14,
        "MQAT_OPEN_TP1": 15,
        "MQAT_VM": 18,
        "MQAT_IMS_BRIDGE": 19,
        "MQAT_XCF": 20,
        "MQAT_CICS_BRIDGE": 21,
        "MQAT_NOTES_AGENT": 22,
        "MQAT_TPF": 23,
        "MQAT_USER": 25,
        "MQAT_BROKER": 26,
        "MQAT_QMGR_PUBLISH": 26,
        "MQAT_JAVA": 28,
        "MQAT_DQM": 29,
        "MQAT_CHANNEL_INITIATOR": 30,
        "MQAT_WLM": 31,
        "MQAT_BATCH": 32,
        "MQAT_RRS_BATCH": 33,
        "MQAT_SIB": 34,
        "MQAT_SYSTEM_EXTENSION": 35,
        "MQAT_MCAST_PUBLISH": 36,
        "MQAT_AMQP": 37,
        "MQAT_USER_FIRST": 65536,
        "MQAT_USER_LAST": 999999999,
    }
)

#: Format names (MQMD Format), without IBM's trailing blank padding to 8 characters.
MQFMT_SYMBOLS: Mapping[str, str] = MappingProxyType(
    {
        "MQFMT_NONE": "",
        "MQFMT_ADMIN": "MQADMIN",
        "MQFMT_CHANNEL_COMPLETED": "MQCHCOM",
        "MQFMT_CICS": "MQCICS",
        "MQFMT_COMMAND_1": "MQCMD1",
        "MQFMT_COMMAND_2": "MQCMD2",
        "MQFMT_DEAD_LETTER_HEADER": "MQDEAD",
        "MQFMT_DIST_HEADER": "MQHDIST",
        "MQFMT_EMBEDDED_PCF": "MQHEPCF",
        "MQFMT_EVENT": "MQEVENT",
        "MQFMT_IMS": "MQIMS",
        "MQFMT_IMS_VAR_STRING": "MQIMSVS",
        "MQFMT_MD_EXTENSION": "MQHMDE",
        "MQFMT_PCF": "MQPCF",
        "MQFMT_REF_MSG_HEADER": "MQHREF",
        "MQFMT_RF_HEADER": "MQHRF",
        "MQFMT_RF_HEADER_2": "MQHRF2",
        "MQFMT_STRING": "MQSTR",
        "MQFMT_TRIGGER": "MQTRIG",
        "MQFMT_WORK_INFO_HEADER": "MQHWIH",
        "MQFMT_XMIT_Q_HEADER": "MQXMIT",
    }
)

#: Every numeric symbol, by name.
NUMERIC_SYMBOLS: Mapping[str, int] = MappingProxyType(
    {
        **MQRC_SYMBOLS,
        **MQFB_SYMBOLS,
        **MQMT_SYMBOLS,
        **MQPER_SYMBOLS,
        **MQAT_SYMBOLS,
        # reasons.py is the project's list of reasons pyjms itself raises; keep both in step.
        **{code.mq_name: int(code) for code in MQRC},
    }
)


def numeric_symbol(name: str, prefixes: Iterable[str]) -> int | None:
    """The value of symbolic ``name`` (any case) if it has one of ``prefixes``, else None."""
    upper = name.upper()
    if not any(upper.startswith(prefix) for prefix in prefixes):
        return None
    return NUMERIC_SYMBOLS.get(upper)


def symbol_name(value: int, prefixes: Iterable[str]) -> str | None:
    """The first listed name for ``value`` among ``prefixes`` (in that order), else None.

    Range markers such as MQFB_APPL_FIRST are skipped: they are bounds, not meanings.
    """
    for prefix in prefixes:
        for name, number in NUMERIC_SYMBOLS.items():
            if number == value and name.startswith(prefix) and not name.endswith(("_FIRST", "_LAST")):
                return name
    return None


def format_symbol(name: str) -> str | None:
    """The format name behind ``MQFMT_...`` (any case), else None."""
    return MQFMT_SYMBOLS.get(name.upper())


__all__ = [
    "MQRC_SYMBOLS",
    "MQFB_SYMBOLS",
    "MQMT_SYMBOLS",
    "MQPER_SYMBOLS",
    "MQAT_SYMBOLS",
    "MQFMT_SYMBOLS",
    "NUMERIC_SYMBOLS",
    "numeric_symbol",
    "symbol_name",
    "format_symbol",
]
