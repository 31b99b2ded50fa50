"""Message, the base of every JMS message: headers, typed properties, acknowledgement.

A received message keeps the record it came in (pyjms.bridge.codec.IncomingRecord) and
decodes its headers and properties only when asked, so a batch of 100,000 messages costs
little more than the bytes. The body types (TextMessage, ...) are in bodies; what a send puts
on the wire is chosen in record; property names and values are checked in properties.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, cast

from pyjms.api import checks
from pyjms.api.constants import DEFAULT_PRIORITY, PERSISTENT
from pyjms.api.destination import Destination, from_key
from pyjms.api.expiry import remaining_expiry
from pyjms.api.message.properties import (
    DELIVERY_TIME_PROPERTY,
    DUPLICATE_ID_PROPERTY,
    EXPIRATION_PROPERTY,
    MESSAGE_ID_PROPERTY,
    SEND_TIME_PROPERTY,
    check_duplicate_id,
    check_property_name,
    check_text,
    checked_property,
    convert,
    tag_for,
)
from pyjms.api.message.record import (
    KEEP,
    changed_properties,
    kept_headers,
    outgoing_headers,
    pack_forward_changes,
    pack_outgoing,
)
from pyjms.bridge import codec as C
from pyjms.bridge.codec import IncomingRecord
from pyjms.errors import (
    IllegalStateRuntimeException,
    MessageFormatRuntimeException,
    MessageNotWriteableRuntimeException,
    NotSupportedRuntimeException,
)

#: the body of a received message until it is first read
_UNDECODED = object()


class Message:
    """jakarta.jms.Message: headers, typed properties, no body."""

    _kind = C.KIND_MESSAGE
    #: whether pyjms decodes this kind's body, and so can copy it (not Object, Stream)
    _copyable = True
    __slots__ = ("_rec", "_h", "_props", "_body", "_props_ro", "_body_ro", "_ack")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_kind" in cls.__dict__:  # a body type; a subclass of one does not take its place
            _CLASS_OF_KIND.setdefault(cls._kind, cls)

    def __init__(self) -> None:
        self._rec: IncomingRecord | None = None
        self._h: dict[str, Any] | None = None
        self._props: dict[str, tuple[int, Any]] | None = None
        self._body: Any = None
        self._props_ro = False
        self._body_ro = False
        self._ack: Callable[[Message], None] | None = None

    # ------------------------------------------------------------------ decoding

    @classmethod
    def from_record(cls, rec: IncomingRecord, ack: Callable[[Message], None] | None = None) -> Message:
        """The received message of a record from the wire (codec.iter_batch), decoded lazily;
        ``ack(message)`` is what its acknowledge() does (CLIENT_ACKNOWLEDGE: acknowledges the
        context's messages; INDIVIDUAL_ACKNOWLEDGE: this one), None for nothing."""
        cls = _CLASS_OF_KIND.get(rec.kind, Message)
        m = cls.__new__(cls)
        m._rec = rec
        m._h = None
        m._props = None
        m._body = _UNDECODED
        m._props_ro = True
        m._body_ro = True
        m._ack = ack
        return m

    @classmethod
    def _received(cls, rec: IncomingRecord, ack: Callable[[Message], None] | None) -> Message:
        """from_record() under the name pyjms.delay.processor still uses (issue 13)."""
        return cls.from_record(rec, ack)

    @property
    def record(self) -> IncomingRecord | None:
        """The record a received message came in (None for one made in Python): for readers
        that keep or pass on the raw bytes (rec.buf[rec.start:rec.end])."""
        return self._rec

    def wire_headers(self) -> Mapping[str, Any]:
        """The header fields as the wire carries them (codec.HEADER_FIELDS: message_id as on
        the queue, destination and reply_to as keys, ...), decoded once with the properties;
        a read-only view, for bulk readers. The get_jms_* getters interpret them."""
        return MappingProxyType(self._headers())

    def typed_properties(self) -> Mapping[str, tuple[int, Any]]:
        """The properties with their JMS types, as (codec tag, value) pairs: a read-only view.
        The typed getters convert; this keeps a short a short (for copies that must not
        change a message, Q08)."""
        return MappingProxyType(self._properties())

    def _headers(self) -> dict[str, Any]:
        if self._h is None:
            if self._rec is not None:
                self._h, self._props = self._rec.headers_and_properties()
            else:
                self._h = {}
        return self._h

    def _properties(self) -> dict[str, tuple[int, Any]]:
        if self._props is None:
            if self._rec is not None:
                self._h, self._props = self._rec.headers_and_properties()
            else:
                self._props = {}
        return self._props

    def _decoded_body(self) -> Any:
        if self._body is _UNDECODED:
            self._body = self._rec.body() if self._rec is not None else None
        return self._body

    def _apply_sent_headers(self, headers: Mapping[str, Any]) -> None:
        """After a send: the provider's id, timestamp, expiration... (JMS sets them on the sent message)."""
        h = self._headers()
        for k in (
            "message_id",
            "timestamp",
            "destination",
            "delivery_mode",
            "expiration",
            "priority",
            "delivery_time",
        ):
            h[k] = headers.get(k)

    # ------------------------------------------------------------------ headers

    def get_jms_message_id(self) -> str | None:
        """The id the sender saw; for a message delayed through staging, its original id."""
        carried = self._properties().get(MESSAGE_ID_PROPERTY) if self._rec is not None else None
        if carried is not None:
            return str(carried[1])
        return self._headers().get("message_id")

    def get_message_token(self) -> str:
        """The token that gets exactly this message (JMSConsumer.receive_by_token): the
        provider's message id as it is on the queue now (IBM MQ's MsgToken)."""
        if self._h is None and self._rec is not None:
            # a dispatcher reads the token of every message it browses and most of those it
            # never hands out: decoding all the headers and properties for it was a fifth of a
            # cooperative browse's time
            token = self._rec.message_id()
        else:
            token = self._headers().get("message_id")
        if not token:
            raise IllegalStateRuntimeException("a message has a token only once it is on a queue")
        return str(token)

    def set_jms_message_id(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise MessageFormatRuntimeException(f"a message id must be a str, got {value!r}")
        self._headers()["message_id"] = value

    def get_jms_timestamp(self) -> int:
        """When the message was sent (for a delayed message: not when it became deliverable)."""
        carried = self._properties().get(SEND_TIME_PROPERTY) if self._rec is not None else None
        if carried is not None:
            return int(carried[1])
        return self._headers().get("timestamp") or 0

    def set_jms_timestamp(self, value: int) -> None:
        self._headers()["timestamp"] = checks.check_epoch_ms(value, "JMSTimestamp")

    def get_jms_correlation_id(self) -> str | None:
        return self._headers().get("correlation_id")

    def set_jms_correlation_id(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise MessageFormatRuntimeException(f"a correlation id must be a str, got {value!r}")
        self._headers()["correlation_id"] = value if value is None else check_text(value)

    def get_jms_reply_to(self) -> Destination | None:
        v = self._headers().get("reply_to")
        return from_key(v) if isinstance(v, str) else v

    def set_jms_reply_to(self, value: Destination | None) -> None:
        if value is not None and not isinstance(value, Destination):
            raise MessageFormatRuntimeException(f"reply-to must be a Queue or Topic, got {value!r}")
        self._headers()["reply_to"] = value

    def get_jms_destination(self) -> Destination | None:
        v = self._headers().get("destination")
        return from_key(v) if isinstance(v, str) else v

    def set_jms_destination(self, value: Destination | None) -> None:
        if value is not None and not isinstance(value, Destination):
            raise MessageFormatRuntimeException(f"a destination must be a Queue or Topic, got {value!r}")
        self._headers()["destination"] = value

    def get_jms_delivery_mode(self) -> int:
        return self._headers().get("delivery_mode") or PERSISTENT

    def set_jms_delivery_mode(self, value: int) -> None:
        self._headers()["delivery_mode"] = checks.check_delivery_mode(value)

    def get_jms_redelivered(self) -> bool:
        return bool(self._headers().get("redelivered"))

    def set_jms_redelivered(self, value: bool) -> None:
        self._headers()["redelivered"] = checks.check_bool(value, "JMSRedelivered")

    def get_jms_type(self) -> str | None:
        return self._headers().get("type")

    def set_jms_type(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise MessageFormatRuntimeException(f"a JMS type must be a str, got {value!r}")
        self._headers()["type"] = value if value is None else check_text(value)

    def get_jms_expiration(self) -> int:
        """Send time + time-to-live, or 0 for never (exact even when a scheduler delayed it)."""
        carried = self._properties().get(EXPIRATION_PROPERTY) if self._rec is not None else None
        if carried is not None:
            return int(carried[1])
        return self._headers().get("expiration") or 0

    def set_jms_expiration(self, value: int) -> None:
        self._headers()["expiration"] = checks.check_epoch_ms(value, "JMSExpiration")

    def get_jms_delivery_time(self) -> int:
        """Send time plus delivery delay; carried as a property where the wire drops it."""
        h = self._headers()
        carried = self._properties().get(DELIVERY_TIME_PROPERTY)
        if carried is not None:
            return int(carried[1])
        return h.get("delivery_time") or h.get("timestamp") or 0

    def set_jms_delivery_time(self, value: int) -> None:
        self._headers()["delivery_time"] = checks.check_epoch_ms(value, "JMSDeliveryTime")

    def get_jms_priority(self) -> int:
        p = self._headers().get("priority")
        return DEFAULT_PRIORITY if p is None else p

    def set_jms_priority(self, value: int) -> None:
        self._headers()["priority"] = checks.check_priority(value)

    def set_duplicate_id(self, key: str | None) -> None:
        """Gives the message a duplicate-detection id, so that resending it (after a commit
        whose outcome is unknown, or a retried task) delivers it once. Make it deterministic:
        the same message resent gets the same id (e.g. batch id + partition + row). Apache
        Artemis's broker drops a message whose id it has seen (its ``_AMQ_DUPL_ID`` header,
        over core and AMQP); on brokers without duplicate detection (ActiveMQ Classic) pyjms's
        receivers drop it (docs/api.md, "Duplicate-free resending"). None removes it."""
        if key is not None:
            self._set(DUPLICATE_ID_PROPERTY, C.T_STRING, check_duplicate_id(key))
        elif self._props_ro:
            raise MessageNotWriteableRuntimeException(
                "cannot remove the duplicate id: a received message's properties are read-only"
            )
        else:
            self._properties().pop(DUPLICATE_ID_PROPERTY, None)

    def get_duplicate_id(self) -> str | None:
        """The duplicate-detection id (set_duplicate_id), or None. A Java client may have set
        Artemis's header as bytes; those come back decoded as UTF-8."""
        entry = self._properties().get(DUPLICATE_ID_PROPERTY)
        if entry is None or entry[1] is None:
            return None
        value = entry[1]
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)

    def get_delivery_count(self) -> int:
        """JMSXDeliveryCount: 1 on first delivery."""
        return self._headers().get("delivery_count") or 1

    def get_remaining_expiry(self) -> int:
        """The remaining lifetime in tenths of a second (MQMD Expiry), or MQEI_UNLIMITED."""
        return remaining_expiry(self.get_jms_expiration())

    # ------------------------------------------------------------------ properties

    def _get(self, name: str) -> tuple[int, Any] | None:
        if name == "JMSXDeliveryCount" and self._rec is not None:
            return (C.T_INT, self.get_delivery_count())
        return self._properties().get(name)

    def _set(self, name: str, tag: int, value: Any) -> None:
        if self._props_ro:
            raise MessageNotWriteableRuntimeException(
                f"cannot set property {name!r}: a received message's properties are read-only until clear_properties()"
            )
        self._properties()[name] = checked_property(name, tag, value)

    def property_exists(self, name: str) -> bool:
        return self._get(name) is not None

    def get_property_names(self) -> list[str]:
        return list(self._properties())

    def clear_properties(self) -> None:
        self._properties().clear()
        self._props_ro = False

    def get_boolean_property(self, name: str) -> bool:
        return cast(bool, convert(self._get(name), C.T_BOOL, f"property {name!r}"))

    def get_byte_property(self, name: str) -> int:
        return cast(int, convert(self._get(name), C.T_BYTE, f"property {name!r}"))

    def get_short_property(self, name: str) -> int:
        return cast(int, convert(self._get(name), C.T_SHORT, f"property {name!r}"))

    def get_int_property(self, name: str) -> int:
        return cast(int, convert(self._get(name), C.T_INT, f"property {name!r}"))

    def get_long_property(self, name: str) -> int:
        return cast(int, convert(self._get(name), C.T_LONG, f"property {name!r}"))

    def get_float_property(self, name: str) -> float:
        return cast(float, convert(self._get(name), C.T_FLOAT, f"property {name!r}"))

    def get_double_property(self, name: str) -> float:
        return cast(float, convert(self._get(name), C.T_DOUBLE, f"property {name!r}"))

    def get_string_property(self, name: str) -> str | None:
        return cast("str | None", convert(self._get(name), C.T_STRING, f"property {name!r}"))

    def get_object_property(self, name: str) -> Any:
        e = self._get(name)
        return None if e is None else e[1]

    def set_boolean_property(self, name: str, value: bool) -> None:
        self._set(name, C.T_BOOL, value)

    def set_byte_property(self, name: str, value: int) -> None:
        self._set(name, C.T_BYTE, value)

    def set_short_property(self, name: str, value: int) -> None:
        self._set(name, C.T_SHORT, value)

    def set_int_property(self, name: str, value: int) -> None:
        self._set(name, C.T_INT, value)

    def set_long_property(self, name: str, value: int) -> None:
        self._set(name, C.T_LONG, value)

    def set_float_property(self, name: str, value: float) -> None:
        self._set(name, C.T_FLOAT, value)

    def set_double_property(self, name: str, value: float) -> None:
        self._set(name, C.T_DOUBLE, value)

    def set_string_property(self, name: str, value: str) -> None:
        self._set(name, C.T_STRING, value)

    def set_object_property(self, name: str, value: bool | int | float | str) -> None:
        check_property_name(name)
        self._set(name, tag_for(value, what=f"property {name!r}"), value)

    #: Pythonic alias: the JMS type follows the Python type
    set_property = set_object_property

    @property
    def properties(self) -> dict[str, Any]:
        """A copy of the properties as plain Python values."""
        return {k: v for k, (_, v) in self._properties().items()}

    # ------------------------------------------------------------------ body

    def clear_body(self) -> None:
        self._body = None
        self._body_ro = False

    def _check_body_writable(self) -> None:
        if self._body_ro:
            raise MessageNotWriteableRuntimeException(
                "a received message's body is read-only until clear_body()"
            )

    def get_body(self, as_type: type | None = None) -> Any:
        """The body as ``as_type`` (str, bytes, dict), or None for a body-less message."""
        body = self._decoded_body()
        if as_type is not None and body is not None and not self.is_body_assignable_to(as_type):
            raise MessageFormatRuntimeException(
                f"the body of this {type(self).__name__} cannot be returned as {as_type.__name__}"
            )
        return self._plain_body(body)

    def _plain_body(self, body: Any) -> Any:
        return body

    def is_body_assignable_to(self, as_type: type) -> bool:
        return self._decoded_body() is None

    def acknowledge(self) -> None:
        """CLIENT_ACKNOWLEDGE: acknowledges every message the context has consumed;
        INDIVIDUAL_ACKNOWLEDGE: this message only."""
        if self._ack is not None:
            self._ack(self)

    # ------------------------------------------------------------------ encoding

    def _body_for_send(self) -> Any:
        return None

    def encode(
        self,
        *,
        correlation_id: Any = KEEP,
        jms_type: Any = KEEP,
        reply_to: Any = KEEP,
        add_properties: Mapping[str, tuple[int, Any]] | None = None,
        drop_properties: Iterable[str] = (),
    ) -> bytes:
        """The outgoing record of this message (pyjms.bridge.codec), as a send or a forward
        puts it on the wire: the body, the typed properties and the application headers
        (correlation id, type, reply-to). Header arguments replace the message's own (KEEP
        keeps them); ``drop_properties`` are left out and ``add_properties`` (typed, as
        typed_properties gives them) override same-named ones, as a JMSProducer's do."""
        headers = outgoing_headers(self._headers(), correlation_id, jms_type, reply_to)
        props = self._properties()
        if add_properties or drop_properties:
            props = changed_properties(props, add_properties, drop_properties)
        return pack_outgoing(self._kind, self._body_for_send(), headers, props)

    def _forward_block(
        self,
        *,
        correlation_id: Any = KEEP,
        reply_to: Any = KEEP,
        add_properties: Mapping[str, tuple[int, Any]] | None = None,
    ) -> tuple[str, bytes] | None:
        """For a copy of this received message made in the JVM from the message the provider
        delivered (pyjms.api.forward): its provider message id, and the application headers
        and added properties the copy gets, packed (codec.pack_headers, pack_properties). None
        if the message was not received, or its body or properties changed since (cleared and
        set again): only Python has it as it is then."""
        rec = self._rec
        if rec is None or not (self._props_ro and self._body_ro):
            return None
        message_id = rec.message_id()
        if message_id is None:
            return None
        headers = outgoing_headers(self._headers(), correlation_id, KEEP, reply_to)
        return message_id, pack_forward_changes(headers, add_properties)

    def copy(
        self,
        *,
        correlation_id: Any = KEEP,
        jms_type: Any = KEEP,
        reply_to: Any = KEEP,
        add_properties: Mapping[str, tuple[int, Any]] | None = None,
        drop_properties: Iterable[str] = (),
    ) -> Message:
        """A new, unsent message of the same kind with the same body, typed properties (a
        short stays a short, Q08) and application headers, changed as the arguments say (see
        encode). This message is not modified, so a received one can be forwarded twice.
        pyjms never decodes ObjectMessage and StreamMessage bodies, so it cannot copy them."""
        if not self._copyable:
            raise NotSupportedRuntimeException(
                f"pyjms cannot copy a {type(self).__name__}: it never decodes its body",
                values={"message_id": self.get_jms_message_id()},
            )
        copy = type(self)()
        body = self._decoded_body()
        copy._body = dict(body) if isinstance(body, dict) else body
        ch = copy._headers()
        ch["correlation_id"], ch["type"], ch["reply_to"] = kept_headers(
            self._headers(), correlation_id, jms_type, reply_to
        )
        copy._props = changed_properties(self._properties(), add_properties, drop_properties)
        return copy

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.get_jms_message_id()!r}>"


#: the message class of each record kind (codec.KIND_*), for from_record; the body types
#: enter theirs as they are defined (Message.__init_subclass__)
_CLASS_OF_KIND: dict[int, type[Message]] = {C.KIND_MESSAGE: Message}
