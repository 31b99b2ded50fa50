"""JMS messages as pure Python objects (a facade over the shim's records).

A received message keeps the record it came in and decodes headers and properties only when
asked, so a batch of 100,000 messages costs little more than the bytes. Property and map
values carry their JMS type, and the typed getters follow the Jakarta Messaging conversion
table. ObjectMessage bodies are never deserialized.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, cast

from pyjms.api import checks
from pyjms.api.constants import DEFAULT_PRIORITY, PERSISTENT
from pyjms.api.destination import Destination, from_key
from pyjms.api.expiry import remaining_expiry
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from pyjms.bridge.codec import IncomingRecord
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    MessageFormatRuntimeException,
    MessageNotWriteableRuntimeException,
    NotSupportedRuntimeException,
)
from pyjms.reasons import MQRC

#: JMS property carrying the delivery time where the transport drops JMSDeliveryTime
DELIVERY_TIME_PROPERTY = contract.DELIVERY_TIME
#: the send time of a message a broker scheduler delayed or a forward restamped
SEND_TIME_PROPERTY = contract.SEND_TIME
#: the original id of a message delayed through the staging queue
MESSAGE_ID_PROPERTY = contract.MESSAGE_ID
#: the exact expiration of a message a broker scheduler delayed
EXPIRATION_PROPERTY = contract.EXPIRATION
#: the duplicate-detection id (set_duplicate_id): Artemis's _AMQ_DUPL_ID
DUPLICATE_ID_PROPERTY = contract.DUPLICATE_ID
#: the longest duplicate id, in UTF-8 bytes (brokers keep every id they remember in memory)
MAX_DUPLICATE_ID_BYTES = 1024

_INT_RANGES = {
    C.T_BYTE: (-(2**7), 2**7 - 1),
    C.T_SHORT: (-(2**15), 2**15 - 1),
    C.T_INT: (-(2**31), 2**31 - 1),
    C.T_LONG: (-(2**63), 2**63 - 1),
}
_TYPE_NAMES = {
    C.T_BOOL: "boolean",
    C.T_BYTE: "byte",
    C.T_SHORT: "short",
    C.T_INT: "int",
    C.T_LONG: "long",
    C.T_FLOAT: "float",
    C.T_DOUBLE: "double",
    C.T_STRING: "String",
    C.T_BYTES: "byte[]",
    C.T_CHAR: "char",
}
# JMS conversion table: which stored types each typed getter accepts (strings are parsed)
_READABLE_AS = {
    C.T_BOOL: {C.T_BOOL, C.T_STRING},
    C.T_BYTE: {C.T_BYTE, C.T_STRING},
    C.T_SHORT: {C.T_BYTE, C.T_SHORT, C.T_STRING},
    C.T_INT: {C.T_BYTE, C.T_SHORT, C.T_INT, C.T_STRING},
    C.T_LONG: {C.T_BYTE, C.T_SHORT, C.T_INT, C.T_LONG, C.T_STRING},
    C.T_FLOAT: {C.T_FLOAT, C.T_STRING},
    C.T_DOUBLE: {C.T_FLOAT, C.T_DOUBLE, C.T_STRING},
    C.T_CHAR: {C.T_CHAR},
    C.T_BYTES: {C.T_BYTES},
}
_SURROGATE = re.compile("[\ud800-\udfff]")
#: the largest finite Java float (Float.MAX_VALUE)
_FLOAT_MAX = 3.4028234663852886e38
#: "keep the message's own value" for Message.encode and Message.copy
KEEP: Any = object()
_RESERVED = {"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE"}
# Java's Character.isJavaIdentifierStart/Part by Unicode category: letters, letter numbers,
# currency symbols and connector punctuation start one; digits, marks and format characters
# may follow (Java also ignores a few control characters inside identifiers)
_JAVA_START = {"Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"}
_JAVA_PART = _JAVA_START | {"Nd", "Mn", "Mc", "Cf"}
_JAVA_IGNORABLE = {*range(0x00, 0x09), *range(0x0E, 0x1C), *range(0x7F, 0xA0)}
#: JMSX properties a sender may set, with the one JMS type each must have (JMS 2.0 3.5.9)
_JMSX_TYPES = {"JMSXGroupID": C.T_STRING, "JMSXGroupSeq": C.T_INT}


def is_java_identifier(name: str) -> bool:
    """Whether ``name`` is a Java identifier, the JMS rule for property names (`région` is)."""
    if not name or unicodedata.category(name[0]) not in _JAVA_START:
        return False
    return all(unicodedata.category(c) in _JAVA_PART or ord(c) in _JAVA_IGNORABLE for c in name[1:])


def check_property_name(name: Any) -> str:
    """JMS property names are Java identifiers, not selector words, not JMS headers, and not
    pyjms's own ``JMS_PYJMS_*`` (IBM MQ: MQRC_PROPERTY_NAME_ERROR, 2442)."""
    if not isinstance(name, str) or not is_java_identifier(name):
        why = "is not a valid Java identifier (a letter, _ or $, then letters, digits, _ or $)"
    elif name.upper() in _RESERVED:
        why = "is a reserved selector word"
    elif name.startswith(contract.RESERVED_PREFIX):
        why = f"is reserved: {contract.RESERVED_PREFIX}* properties are pyjms's own"
    elif name.startswith("JMS") and not name.startswith(("JMSX", "JMS_")):
        why = "is reserved: only JMSX* and JMS_<vendor>_* may start with JMS"
    else:
        return name
    raise InvalidArgumentRuntimeException(
        f"property name {name!r} {why}", reason=MQRC.PROPERTY_NAME_ERROR, values={"property_name": name}
    )


def check_own_property_name(name: Any) -> str:
    """A property name on the route pyjms's own components write by (typed pairs for
    Message.copy/encode, pyjms.dlq's puts): as check_property_name, but ``JMS_PYJMS_*`` may
    be written, as pyjms writes its dead-letter and staging headers."""
    if isinstance(name, str) and name.startswith(contract.RESERVED_PREFIX) and is_java_identifier(name):
        return name
    return check_property_name(name)


def checked_property(name: Any, tag: int, value: Any) -> tuple[int, Any]:
    """A property as a user sets it: the name checked, the value checked for its JMS type,
    and the JMSX properties JMS types (a float JMSXGroupID is refused, not made '5.0')."""
    check_property_name(name)
    want = _JMSX_TYPES.get(name)
    if want is not None and tag != want and not (want == C.T_INT and tag in (C.T_BYTE, C.T_SHORT)):
        raise MessageFormatRuntimeException(
            f"property {name!r} must be a JMS {_TYPE_NAMES[want]}, got {value!r}",
            values={name: value},
        )
    return tag, checked_value(tag, value, f"property {name!r}")


def tag_for(value: Any, *, allow_bytes: bool = False, what: str = "value") -> int:
    """The JMS type a Python value is stored as (int picks int or long by size)."""
    if isinstance(value, bool):
        return C.T_BOOL
    if isinstance(value, int):
        if _INT_RANGES[C.T_INT][0] <= value <= _INT_RANGES[C.T_INT][1]:
            return C.T_INT
        if _INT_RANGES[C.T_LONG][0] <= value <= _INT_RANGES[C.T_LONG][1]:
            return C.T_LONG
        raise InvalidArgumentRuntimeException(f"{what} {value} does not fit a JMS long (64 bits)")
    if isinstance(value, float):
        return C.T_DOUBLE
    if isinstance(value, str):
        return C.T_STRING
    if allow_bytes and isinstance(value, (bytes, bytearray, memoryview)):
        return C.T_BYTES
    allowed = "bool, int, float, str" + (", bytes" if allow_bytes else "")
    raise MessageFormatRuntimeException(
        f"{what} {value!r} has type {type(value).__name__}; JMS allows {allowed}"
    )


def checked_value(tag: int, value: Any, what: str) -> Any:
    """Validates a value for an explicit JMS type (set_byte_property(…, 300) is an error)."""
    if tag in _INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            raise MessageFormatRuntimeException(
                f"{what} must be an int for a JMS {_TYPE_NAMES[tag]}, got {value!r}"
            )
        lo, hi = _INT_RANGES[tag]
        if not lo <= value <= hi:
            raise InvalidArgumentRuntimeException(
                f"{what} {value} is outside the JMS {_TYPE_NAMES[tag]} range {lo}..{hi}"
            )
        return value
    if tag in (C.T_FLOAT, C.T_DOUBLE):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MessageFormatRuntimeException(f"{what} must be a float, got {value!r}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if math.isinf(number) and not (isinstance(value, float) and math.isinf(value)):
            raise InvalidArgumentRuntimeException(
                f"{what} {value} does not fit a JMS {_TYPE_NAMES[tag]}", values={"value": value}
            )
        if tag == C.T_FLOAT and math.isfinite(number) and abs(number) > _FLOAT_MAX:
            raise InvalidArgumentRuntimeException(
                f"{what} {value!r} is outside the JMS float range (±{_FLOAT_MAX:.8g})",
                values={"value": value},
            )
        return number
    if tag == C.T_BOOL:
        if not isinstance(value, bool):
            raise MessageFormatRuntimeException(f"{what} must be a bool, got {value!r}")
        return value
    if tag == C.T_STRING:
        if not isinstance(value, str):
            raise MessageFormatRuntimeException(f"{what} must be a str, got {value!r}")
        return check_text(value)
    if tag == C.T_BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise MessageFormatRuntimeException(f"{what} must be bytes, got {value!r}")
        return bytes(value)
    if tag == C.T_CHAR:
        if not isinstance(value, str) or len(value) != 1 or ord(value) > 0xFFFF:
            raise MessageFormatRuntimeException(f"{what} must be one UTF-16 char, got {value!r}")
        return value
    return value


def check_duplicate_id(key: Any) -> str:
    """A duplicate-detection id: a non-empty str of at most MAX_DUPLICATE_ID_BYTES in UTF-8."""
    if not isinstance(key, str):
        raise MessageFormatRuntimeException(
            f"a duplicate id must be a str, got {key!r}", values={"duplicate_id": key}
        )
    size = len(check_text(key).encode("utf-8"))
    if not 0 < size <= MAX_DUPLICATE_ID_BYTES:
        raise InvalidArgumentRuntimeException(
            f"duplicate id {key[:40]!r} is {size} bytes in UTF-8; it must be 1..{MAX_DUPLICATE_ID_BYTES}",
            values={"duplicate_id": key},
        )
    return key


def check_text(value: str) -> str:
    """A str that is Unicode text (no lone surrogate), as UTF-8 carries it: refused at once
    rather than replaced on the wire."""
    if not value.isascii():
        found = _SURROGATE.search(value)
        if found is not None:
            raise C.lone_surrogate(value, found.start())
    return value


def convert(entry: tuple[int, Any] | None, want: int, what: str) -> Any:
    """Reads a stored (tag, value) as JMS type ``want``, per the JMS conversion table."""
    if entry is None or entry[1] is None:  # absent, or a map entry a Java client set to null
        if want == C.T_BOOL:
            return False  # Boolean.valueOf(null)
        if want == C.T_STRING:
            return None
        raise MessageFormatRuntimeException(f"{what} is not set, so it has no {_TYPE_NAMES[want]} value")
    tag, value = entry
    if want == C.T_STRING:
        if tag == C.T_BOOL:
            return "true" if value else "false"
        if tag == C.T_BYTES:
            raise MessageFormatRuntimeException(f"{what} is a byte[] and cannot be read as a String")
        return value if tag == C.T_STRING else str(value)
    if tag not in _READABLE_AS[want]:
        raise MessageFormatRuntimeException(
            f"{what} holds a JMS {_TYPE_NAMES[tag]} ({value!r}), which cannot be read as a {_TYPE_NAMES[want]}"
        )
    if tag != C.T_STRING:
        return value
    try:  # JMS parses strings for the typed getters
        if want == C.T_BOOL:
            return value.lower() == "true"
        if want in _INT_RANGES:
            return checked_value(want, int(value), what)
        return float(value)
    except (ValueError, InvalidArgumentRuntimeException):
        raise MessageFormatRuntimeException(
            f"{what} holds the String {value!r}, which is not a valid {_TYPE_NAMES[want]}"
        ) from None


class Message:
    """jakarta.jms.Message: headers, typed properties, no body."""

    _kind = C.KIND_MESSAGE
    __slots__ = ("_rec", "_h", "_props", "_body", "_props_ro", "_body_ro", "_ack")

    def __init__(self) -> None:
        self._rec: IncomingRecord | None = None
        self._h: dict[str, Any] | None = None
        self._props: dict[str, tuple[int, Any]] | None = None
        self._body: Any = None
        self._props_ro = False
        self._body_ro = False
        self._ack: Callable[[], None] | None = None

    # ------------------------------------------------------------------ decoding

    @classmethod
    def from_record(cls, rec: IncomingRecord, ack: Callable[[], None] | None = None) -> Message:
        """The received message of a record from the wire (codec.iter_batch), decoded lazily;
        ``ack`` acknowledges it (CLIENT_ACKNOWLEDGE), None for none."""
        cls = _BY_KIND.get(rec.kind, Message)
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
    def _received(cls, rec: IncomingRecord, ack: Callable[[], None] | None) -> Message:
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
        """CLIENT_ACKNOWLEDGE: acknowledges every message the context has consumed."""
        if self._ack is not None:
            self._ack()

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
        corr, jtype, reply = self._outgoing_headers(correlation_id, jms_type, reply_to)
        has_headers = corr is not None or jtype is not None or reply is not None
        headers = C.pack_headers(corr, jtype, reply) if has_headers else b""
        props = self._properties()
        if add_properties or drop_properties:
            props = {k: v for k, v in props.items() if k not in drop_properties}
            props.update(add_properties or {})
        return C.pack_record(
            self._kind, self._body_for_send(), headers, C.pack_properties(props) if props else b""
        )

    def _outgoing_headers(self, correlation_id: Any, jms_type: Any, reply_to: Any) -> tuple[Any, Any, Any]:
        """The application headers a copy or send of this message carries: correlation id,
        type and reply-to (as a destination key), each the message's own where KEEP."""
        h = self._headers()
        corr = h.get("correlation_id") if correlation_id is KEEP else correlation_id
        jtype = h.get("type") if jms_type is KEEP else jms_type
        reply = h.get("reply_to") if reply_to is KEEP else reply_to
        if isinstance(reply, Destination):
            reply = reply.key
        return corr, jtype, reply

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
        headers = self._outgoing_headers(correlation_id, KEEP, reply_to)
        return message_id, C.pack_headers(*headers) + C.pack_properties(dict(add_properties or {}))

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
        if type(self) in (ObjectMessage, StreamMessage):
            raise NotSupportedRuntimeException(
                f"pyjms cannot copy a {type(self).__name__}: it never decodes its body",
                values={"message_id": self.get_jms_message_id()},
            )
        copy = type(self)()
        body = self._decoded_body()
        copy._body = dict(body) if isinstance(body, dict) else body
        h = self._headers()
        ch = copy._headers()
        ch["correlation_id"] = h.get("correlation_id") if correlation_id is KEEP else correlation_id
        ch["type"] = h.get("type") if jms_type is KEEP else jms_type
        ch["reply_to"] = h.get("reply_to") if reply_to is KEEP else reply_to
        props = {k: v for k, v in self._properties().items() if k not in drop_properties}
        props.update(add_properties or {})
        copy._props = props
        return copy

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.get_jms_message_id()!r}>"


_UNDECODED = object()


class TextMessage(Message):
    """jakarta.jms.TextMessage."""

    _kind = C.KIND_TEXT
    __slots__ = ()

    def __init__(self, text: str | None = None) -> None:
        super().__init__()
        if text is not None:
            self.set_text(text)

    def get_text(self) -> str | None:
        return cast("str | None", self._decoded_body())

    def set_text(self, text: str | None) -> None:
        self._check_body_writable()
        if text is not None and not isinstance(text, str):
            raise MessageFormatRuntimeException(
                f"a TextMessage body must be a str, got {type(text).__name__}"
            )
        self._body = text if text is None else check_text(text)

    def is_body_assignable_to(self, as_type: type) -> bool:
        return self._decoded_body() is None or as_type in (str, object)

    def _body_for_send(self) -> Any:
        return self._decoded_body()

    def __repr__(self) -> str:
        text = self.get_text() or ""
        return f"<TextMessage id={self.get_jms_message_id()!r} text={text[:40]!r}>"


class BytesMessage(Message):
    """jakarta.jms.BytesMessage, with the body as one bytes value (write_bytes appends)."""

    _kind = C.KIND_BYTES
    __slots__ = ()

    def __init__(self, data: bytes | None = None) -> None:
        super().__init__()
        self._body = b""
        if data is not None:
            self.write_bytes(data)

    def write_bytes(self, data: bytes | bytearray | memoryview) -> None:
        self._check_body_writable()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise MessageFormatRuntimeException(f"write_bytes takes bytes, got {type(data).__name__}")
        self._body = (self._body or b"") + bytes(data)

    def get_body_length(self) -> int:
        return len(self._decoded_body() or b"")

    def read_bytes(self) -> bytes:
        return bytes(self._decoded_body() or b"")

    def is_body_assignable_to(self, as_type: type) -> bool:
        return as_type in (bytes, bytearray, object)

    def _plain_body(self, body: Any) -> Any:
        return bytes(body) if body is not None else b""

    def _body_for_send(self) -> Any:
        return self._decoded_body() or b""


class MapMessage(Message):
    """jakarta.jms.MapMessage: name/value pairs with JMS types."""

    _kind = C.KIND_MAP
    __slots__ = ()

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self._body = {}
        for k, v in (values or {}).items():
            self.set_object(k, v)

    def _map(self) -> dict[str, tuple[int, Any]]:
        m = self._decoded_body()
        if m is None:
            m = self._body = {}
        return cast("dict[str, tuple[int, Any]]", m)

    def _put(self, name: str, tag: int, value: Any) -> None:
        self._check_body_writable()
        if not isinstance(name, str) or not name:
            raise InvalidArgumentRuntimeException(f"a map entry name must be a non-empty str, got {name!r}")
        check_text(name)
        self._map()[name] = (tag, checked_value(tag, value, f"map entry {name!r}"))

    def set_object(self, name: str, value: Any) -> None:
        self._put(name, tag_for(value, allow_bytes=True, what=f"map entry {name!r}"), value)

    def set_string(self, name: str, value: str) -> None:
        self._put(name, C.T_STRING, value)

    def set_int(self, name: str, value: int) -> None:
        self._put(name, C.T_INT, value)

    def set_long(self, name: str, value: int) -> None:
        self._put(name, C.T_LONG, value)

    def set_double(self, name: str, value: float) -> None:
        self._put(name, C.T_DOUBLE, value)

    def set_boolean(self, name: str, value: bool) -> None:
        self._put(name, C.T_BOOL, value)

    def set_bytes(self, name: str, value: bytes) -> None:
        self._put(name, C.T_BYTES, value)

    def set_short(self, name: str, value: int) -> None:
        self._put(name, C.T_SHORT, value)

    def set_byte(self, name: str, value: int) -> None:
        self._put(name, C.T_BYTE, value)

    def set_float(self, name: str, value: float) -> None:
        self._put(name, C.T_FLOAT, value)

    def get_object(self, name: str) -> Any:
        e = self._map().get(name)
        return None if e is None else e[1]

    def get_string(self, name: str) -> str | None:
        return cast("str | None", convert(self._map().get(name), C.T_STRING, f"map entry {name!r}"))

    def get_int(self, name: str) -> int:
        return cast(int, convert(self._map().get(name), C.T_INT, f"map entry {name!r}"))

    def get_long(self, name: str) -> int:
        return cast(int, convert(self._map().get(name), C.T_LONG, f"map entry {name!r}"))

    def get_double(self, name: str) -> float:
        return cast(float, convert(self._map().get(name), C.T_DOUBLE, f"map entry {name!r}"))

    def get_boolean(self, name: str) -> bool:
        return cast(bool, convert(self._map().get(name), C.T_BOOL, f"map entry {name!r}"))

    def get_bytes(self, name: str) -> bytes:
        return cast(bytes, convert(self._map().get(name), C.T_BYTES, f"map entry {name!r}"))

    def get_short(self, name: str) -> int:
        return cast(int, convert(self._map().get(name), C.T_SHORT, f"map entry {name!r}"))

    def get_byte(self, name: str) -> int:
        return cast(int, convert(self._map().get(name), C.T_BYTE, f"map entry {name!r}"))

    def get_float(self, name: str) -> float:
        return cast(float, convert(self._map().get(name), C.T_FLOAT, f"map entry {name!r}"))

    def typed_map(self) -> Mapping[str, tuple[int, Any]]:
        """The entries with their JMS types, as (codec tag, value) pairs: a read-only view."""
        return MappingProxyType(self._map())

    def get_map_names(self) -> list[str]:
        return list(self._map())

    def item_exists(self, name: str) -> bool:
        return name in self._map()

    def is_body_assignable_to(self, as_type: type) -> bool:
        return as_type in (dict, Mapping, object)

    def _plain_body(self, body: Any) -> Any:
        return {k: v for k, (_, v) in (body or {}).items()}

    def _body_for_send(self) -> Any:
        return self._map()


class ObjectMessage(Message):
    """A received jakarta.jms.ObjectMessage. pyjms never deserializes Java objects."""

    _kind = C.KIND_OBJECT
    __slots__ = ()

    def get_object(self) -> Any:
        raise MessageFormatRuntimeException(
            "pyjms does not deserialize ObjectMessage bodies (Java deserialization of untrusted data is unsafe)"
        )

    def is_body_assignable_to(self, as_type: type) -> bool:
        return False

    def get_body(self, as_type: type | None = None) -> Any:
        return self.get_object()


class StreamMessage(Message):
    """A received jakarta.jms.StreamMessage: headers and properties only."""

    _kind = C.KIND_STREAM
    __slots__ = ()

    def is_body_assignable_to(self, as_type: type) -> bool:
        return False

    def get_body(self, as_type: type | None = None) -> Any:
        raise MessageFormatRuntimeException("pyjms does not decode StreamMessage bodies")


_BY_KIND: dict[int, type[Message]] = {
    C.KIND_MESSAGE: Message,
    C.KIND_TEXT: TextMessage,
    C.KIND_BYTES: BytesMessage,
    C.KIND_MAP: MapMessage,
    C.KIND_OBJECT: ObjectMessage,
    C.KIND_STREAM: StreamMessage,
}


def message_for_body(body: Any) -> Message:
    """The message a JMSProducer.send body becomes: str, bytes, dict or a Message."""
    if isinstance(body, Message):
        return body
    if isinstance(body, str):
        return TextMessage(body)
    if isinstance(body, (bytes, bytearray, memoryview)):
        return BytesMessage(bytes(body))
    if isinstance(body, Mapping):
        return MapMessage(body)
    if body is None:
        return Message()
    raise MessageFormatRuntimeException(
        f"cannot send a body of type {type(body).__name__}: use str, bytes, dict, None or a Message"
    )
