"""The dead-letter header (IBM MQ's MQDLH) for JMS messages, carried as message properties.

IBM MQ puts an MQDLH in front of every dead-lettered message. JMS has no message headers of
its own to add, so pyjms carries the same fields as properties:

===============================  ======  ====================================================
property                         type    MQDLH field
===============================  ======  ====================================================
``JMS_PYJMS_DLH_Reason``         int     Reason: an MQRC_* or MQFB_* code (its presence
                                         marks a message as dead-lettered)
``JMS_PYJMS_DLH_DestQ``          String  DestQName: the queue the message was meant for
                                         (``topic://NAME`` for a topic)
``JMS_PYJMS_DLH_DestQMgr``       String  DestQMgrName ('' for this broker)
``JMS_PYJMS_DLH_PutApplName``    String  PutApplName: who put it on the dead-letter queue
``JMS_PYJMS_DLH_PutApplType``    int     PutApplType (MQAT_JAVA, 28, for pyjms components)
``JMS_PYJMS_DLH_PutDate``        String  PutDate, YYYYMMDD (UTC, as IBM MQ)
``JMS_PYJMS_DLH_PutTime``        String  PutTime, HHMMSSTH (UTC; TH = hundredths)
``JMS_PYJMS_DLH_Format``         String  Format of the body: MQSTR for a TextMessage, else
                                         '' (MQFMT_NONE)
===============================  ======  ====================================================

pyjms components dead-letter with :func:`dead_letter`, which adds these properties and keeps
everything else, including the remaining expiry (E14).

Entries a broker dead-letters itself carry no such properties. The provider plug-in maps them
onto the same header (ProviderPlugin.dead_letter_header, which :meth:`DeadLetterHeader.from_message`
asks): ActiveMQ's from its ``dlqDeliveryFailureCause`` (pyjms.providers.activemq.dead_letters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pyjms.api.constants import PERSISTENT
from pyjms.api.destination import Destination, Queue
from pyjms.api.message import Message, TextMessage
from pyjms.api.message.properties import tag_for
from pyjms.api.provider import ProviderPlugin, default_provider
from pyjms.bridge.contract import DEAD_LETTER_HEADER_PREFIX
from pyjms.dlq.forward import put_unchanged
from pyjms.dlq.symbols import MQAT_SYMBOLS, MQFB_SYMBOLS, MQMT_SYMBOLS, MQRC_SYMBOLS
from pyjms.errors import (
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    JMSSecurityRuntimeException,
    MessageFormatRuntimeException,
    ResourceAllocationRuntimeException,
)
from pyjms.reasons import MQRC
from pyjms.rules.expiry import now_ms

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext

PREFIX = DEAD_LETTER_HEADER_PREFIX
REASON = PREFIX + "Reason"
DEST_Q = PREFIX + "DestQ"
DEST_Q_MGR = PREFIX + "DestQMgr"
PUT_APPL_NAME = PREFIX + "PutApplName"
PUT_APPL_TYPE = PREFIX + "PutApplType"
PUT_DATE = PREFIX + "PutDate"
PUT_TIME = PREFIX + "PutTime"
FORMAT = PREFIX + "Format"
#: ActiveMQ's own dead-letter "header": the one property it adds when it dead-letters (a RETRY
#: or HEADER(NO) removes it with pyjms's; its plug-in maps it: pyjms.providers.activemq)
ACTIVEMQ_CAUSE = "dlqDeliveryFailureCause"
#: Properties that make up a dead-letter header; HEADER(NO) and RETRY remove them all
HEADER_PROPERTIES = frozenset(
    {REASON, DEST_Q, DEST_Q_MGR, PUT_APPL_NAME, PUT_APPL_TYPE, PUT_DATE, PUT_TIME, FORMAT, ACTIVEMQ_CAUSE}
)

MQAT_JAVA = MQAT_SYMBOLS["MQAT_JAVA"]
MQAT_QMGR = MQAT_SYMBOLS["MQAT_QMGR"]
MQFB_EXPIRATION = MQFB_SYMBOLS["MQFB_EXPIRATION"]
MQRC_BACKOUT_THRESHOLD_REACHED = MQRC_SYMBOLS["MQRC_BACKOUT_THRESHOLD_REACHED"]
MQRC_UNEXPECTED_ERROR = MQRC_SYMBOLS["MQRC_UNEXPECTED_ERROR"]
MQFMT_STRING = "MQSTR"
MQFMT_NONE = ""

_EIGHT_DIGITS = re.compile(r"\d{8}")


@dataclass(frozen=True)
class DeadLetterDetails:
    """What a provider recorded about a message it dead-lettered itself, outside the
    properties (ProviderPlugin.dead_letter_details; ActiveMQ keeps both in message fields)."""

    original_destination: str | None  # a destination key, e.g. queue://ORDERS
    dead_lettered_ms: int | None  # when the broker received the dead-letter copy


@dataclass(frozen=True)
class DeadLetterHeader:
    """The fields of IBM's MQDLH that a JMS message on a dead-letter queue carries.

    ``cause`` is the provider's own explanation for entries it dead-lettered itself (e.g.
    ActiveMQ's dlqDeliveryFailureCause); it is not written by to_properties().
    """

    reason: int
    dest_q: str
    dest_q_mgr: str = ""
    put_appl_name: str = ""
    put_appl_type: int = MQAT_JAVA
    put_date: str = ""
    put_time: str = ""
    format: str = MQFMT_NONE
    cause: str | None = None

    @classmethod
    def create(
        cls,
        reason: int,
        dest_q: str,
        *,
        dest_q_mgr: str = "",
        put_appl_name: str = "pyjms",
        put_appl_type: int = MQAT_JAVA,
        format: str = MQFMT_NONE,
        at_ms: int | None = None,
    ) -> DeadLetterHeader:
        """A header stamped with the put date and time of ``at_ms`` (default: now)."""
        if isinstance(reason, bool) or not isinstance(reason, int) or not 0 <= reason <= 999_999_999:
            raise InvalidArgumentRuntimeException(
                f"a dead-letter reason must be an MQRC or MQFB code (0..999999999), got {reason!r}",
                values={"reason": reason},
            )
        date, time = put_stamp(now_ms() if at_ms is None else at_ms)
        return cls(reason, dest_q, dest_q_mgr, put_appl_name, put_appl_type, date, time, format)

    @classmethod
    def for_failure(
        cls,
        target: Destination,
        error: JMSRuntimeException,
        *,
        message: Message | None = None,
        dest_q_mgr: str = "",
        put_appl_name: str = "pyjms",
        at_ms: int | None = None,
    ) -> DeadLetterHeader:
        """The header for a message a pyjms component could not put to ``target``.

        The reason is the error's own (``error.reason``), else one for its kind (see
        :func:`reason_for`); the format is ``message``'s, when given.
        """
        return cls.create(
            reason_for(error),
            destination_name(target.key),
            dest_q_mgr=dest_q_mgr,
            put_appl_name=put_appl_name,
            format=format_of(message) if message is not None else MQFMT_NONE,
            at_ms=at_ms,
        )

    def to_properties(self) -> dict[str, int | str]:
        """The header as JMS properties, by name."""
        return {
            REASON: self.reason,
            DEST_Q: self.dest_q,
            DEST_Q_MGR: self.dest_q_mgr,
            PUT_APPL_NAME: self.put_appl_name,
            PUT_APPL_TYPE: self.put_appl_type,
            PUT_DATE: self.put_date,
            PUT_TIME: self.put_time,
            FORMAT: self.format,
        }

    def typed_properties(self) -> dict[str, tuple[int, int | str]]:
        """The header as (JMS type tag, value) pairs, for Message.encode(add_properties=...)."""
        return {name: (tag_for(value), value) for name, value in self.to_properties().items()}

    @property
    def reason_name(self) -> str:
        """MQRC_*/MQFB_* name of the reason, or the number as text."""
        for symbols in (MQRC_SYMBOLS, MQFB_SYMBOLS):
            for name, value in symbols.items():
                if value == self.reason and not name.endswith(("_FIRST", "_LAST")):
                    return name
        return str(self.reason)

    @property
    def put_datetime(self) -> datetime | None:
        """PutDate and PutTime as an aware UTC datetime, or None if they are not valid."""
        if not (_EIGHT_DIGITS.fullmatch(self.put_date) and _EIGHT_DIGITS.fullmatch(self.put_time)):
            return None
        try:
            stamp = datetime.strptime(self.put_date + self.put_time[:6], "%Y%m%d%H%M%S")
        except ValueError:
            return None
        return stamp.replace(microsecond=int(self.put_time[6:8]) * 10_000, tzinfo=UTC)

    @classmethod
    def from_message(
        cls,
        message: Message,
        *,
        queue_manager: str = "",
        original_destination: str | None = None,
        dead_lettered_ms: int | None = None,
        provider: ProviderPlugin | None = None,
    ) -> DeadLetterHeader | None:
        """The message's header; None when it has none (Q05).

        A pyjms header is read from its properties. An entry the broker dead-lettered itself
        is mapped by ``provider``, the plug-in of the broker whose dead-letter queue it was on
        (the default provider's by default: ActiveMQ's maps its dlqDeliveryFailureCause);
        ``original_destination`` is its destination key (``queue://NAME``) and
        ``dead_lettered_ms`` when the broker dead-lettered it, which ActiveMQ keeps outside the
        properties (the plug-in reads them: ProviderPlugin.dead_letter_details);
        ``queue_manager`` names the broker. A malformed pyjms header raises
        MessageFormatRuntimeException.
        """
        if message.property_exists(REASON):
            return cls._read(message)
        mapped: DeadLetterHeader | None = (provider or default_provider()).dead_letter_header(
            message,
            queue_manager=queue_manager,
            original_destination=original_destination,
            dead_lettered_ms=dead_lettered_ms,
        )
        return mapped

    @classmethod
    def _read(cls, message: Message) -> DeadLetterHeader:
        try:
            return cls(
                reason=message.get_int_property(REASON),
                dest_q=message.get_string_property(DEST_Q) or "",
                dest_q_mgr=message.get_string_property(DEST_Q_MGR) or "",
                put_appl_name=message.get_string_property(PUT_APPL_NAME) or "",
                put_appl_type=message.get_int_property(PUT_APPL_TYPE)
                if message.property_exists(PUT_APPL_TYPE)
                else 0,
                put_date=message.get_string_property(PUT_DATE) or "",
                put_time=message.get_string_property(PUT_TIME) or "",
                format=message.get_string_property(FORMAT) or "",
            )
        except MessageFormatRuntimeException as e:
            raise MessageFormatRuntimeException(
                f"message {message.get_jms_message_id()} has a malformed dead-letter header: {e.message}",
                values={"message_id": message.get_jms_message_id()},
            ) from None


#: The reason for a failed put, by the kind of error, when the error names none itself
_REASON_BY_ERROR: tuple[tuple[type[JMSRuntimeException], int], ...] = (
    (ResourceAllocationRuntimeException, MQRC.Q_FULL),  # a JMS provider's word for no room
    (InvalidDestinationRuntimeException, MQRC.UNKNOWN_OBJECT_NAME),
    (JMSSecurityRuntimeException, MQRC.NOT_AUTHORIZED),
)


def reason_for(error: JMSRuntimeException) -> int:
    """The dead-letter reason for a failed put: the error's MQRC, else one for its kind
    (resource allocation: MQRC_Q_FULL; invalid destination: MQRC_UNKNOWN_OBJECT_NAME;
    security: MQRC_NOT_AUTHORIZED), else MQRC_UNEXPECTED_ERROR."""
    if error.reason is not None:
        return error.reason
    for kind, reason in _REASON_BY_ERROR:
        if isinstance(error, kind):
            return int(reason)
    return MQRC_UNEXPECTED_ERROR


def put_stamp(at_ms: int) -> tuple[str, str]:
    """IBM's PutDate (YYYYMMDD) and PutTime (HHMMSSTH) for a time in ms, in UTC."""
    stamp = datetime.fromtimestamp(at_ms / 1000, tz=UTC)
    return stamp.strftime("%Y%m%d"), stamp.strftime("%H%M%S") + f"{stamp.microsecond // 10_000:02d}"


def destination_name(key: str | None) -> str:
    """The DestQ for a destination key: a queue's plain name, any other kind as its key."""
    if not key:
        return ""
    return key.removeprefix("queue://")


def format_of(message: Message) -> str:
    """IBM's MQMD Format for a JMS message body."""
    return MQFMT_STRING if isinstance(message, TextMessage) else MQFMT_NONE


def message_fields(message: Message, header: DeadLetterHeader, queue_manager: str = "") -> dict[str, Any]:
    """The values a rules table's patterns are matched against (keyed like Rule attributes).

    JMS has no MQMD, so: DESTQ, DESTQM, REASON, FORMAT, APPLNAME and APPLTYPE come from the
    dead-letter header; PERSIST from JMSDeliveryMode; REPLYQ from JMSReplyTo; MSGTYPE is
    MQMT_REQUEST when there is a reply-to, else MQMT_DATAGRAM; USERID is JMSXUserID. IBM's
    JMS property names for MQMD fields (JMS_IBM_MsgType, JMS_IBM_Feedback,
    JMS_IBM_MQMD_ReplyToQMgr, JMS_IBM_MQMD_ApplIdentityData) override those defaults and give
    FEEDBACK, REPLYQM and APPLIDAT; a reply-to without JMS_IBM_MQMD_ReplyToQMgr is on this
    queue manager.
    """
    reply_to = message.get_jms_reply_to()

    def text(name: str, default: str = "") -> str:
        value = message.get_object_property(name)
        return default if value is None else str(value)

    def number(name: str, default: int) -> Any:
        value = message.get_object_property(name)
        return default if value is None else value  # Rule.matches reads numeric text too

    reply_q = destination_name(reply_to.key) if reply_to is not None else ""
    msg_type = MQMT_SYMBOLS["MQMT_REQUEST"] if reply_to is not None else MQMT_SYMBOLS["MQMT_DATAGRAM"]
    return {
        "applidat": text("JMS_IBM_MQMD_ApplIdentityData"),
        "applname": header.put_appl_name,
        "appltype": header.put_appl_type,
        "destq": header.dest_q,
        "destqm": header.dest_q_mgr,
        "feedback": number("JMS_IBM_Feedback", 0),
        "format": header.format,
        "msgtype": number("JMS_IBM_MsgType", msg_type),
        "persist": 1 if message.get_jms_delivery_mode() == PERSISTENT else 0,
        "reason": header.reason,
        "replyq": reply_q,
        "replyqm": text("JMS_IBM_MQMD_ReplyToQMgr", queue_manager if reply_to is not None else ""),
        "userid": text("JMSXUserID"),
    }


def dead_letter(
    ctx: JMSContext,
    message: Message,
    dlq: str | Queue,
    reason: int,
    *,
    dest_q: str | None = None,
    dest_q_mgr: str = "",
    put_appl_name: str = "pyjms",
    put_appl_type: int = MQAT_JAVA,
    format: str | None = None,
) -> DeadLetterHeader:
    """Puts ``message`` on the dead-letter queue ``dlq`` with a dead-letter header.

    The body, properties, application headers, priority, delivery mode and remaining expiry
    are kept (Q08, E14). ``dest_q`` defaults to the message's JMSDestination; ``format`` to
    MQSTR for text, else MQFMT_NONE. In a transacted ctx the put is part of its transaction,
    so a component can get a message and dead-letter it atomically. Returns the header.
    """
    if dest_q is None:
        destination: Destination | None = message.get_jms_destination()
        dest_q = destination_name(destination.key) if destination is not None else ""
    header = DeadLetterHeader.create(
        reason,
        dest_q,
        dest_q_mgr=dest_q_mgr,
        put_appl_name=put_appl_name,
        put_appl_type=put_appl_type,
        format=format_of(message) if format is None else format,
    )
    queue = dlq if isinstance(dlq, Queue) else ctx.create_queue(dlq)
    # a header already there (a message dead-lettered twice) is replaced, not merged
    put_unchanged(
        ctx, queue, message, strip=HEADER_PROPERTIES, add=header.to_properties(), sent_headers=False
    )
    return header


__all__ = [
    "DeadLetterHeader",
    "DeadLetterDetails",
    "dead_letter",
    "message_fields",
    "put_stamp",
    "reason_for",
    "HEADER_PROPERTIES",
    "REASON",
    "DEST_Q",
    "DEST_Q_MGR",
    "PUT_APPL_NAME",
    "PUT_APPL_TYPE",
    "PUT_DATE",
    "PUT_TIME",
    "FORMAT",
    "ACTIVEMQ_CAUSE",
    "MQFB_EXPIRATION",
    "MQRC_BACKOUT_THRESHOLD_REACHED",
    "MQRC_UNEXPECTED_ERROR",
]
