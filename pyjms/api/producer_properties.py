"""What a JMSProducer (pyjms.api.producer) puts on every message it sends: the JMSCorrelationID,
JMSType and JMSReplyTo headers and the message properties set on the producer (JMS 2.0's
JMSProducer setters and getters), and their packed form on the wire, packed once for all the
sends until one of them changes.

The rules are the messages' (pyjms.api.message.properties): a property's name and value are
checked as they are set, and read back through the JMS conversion table.
"""

from __future__ import annotations

from typing import Any, Self, cast

from pyjms.api.destination import Destination
from pyjms.api.message.properties import (
    check_property_name,
    check_text,
    checked_property,
    convert,
    tag_for,
)
from pyjms.bridge import codec as C
from pyjms.errors import MessageFormatRuntimeException


class ProducerProperties:
    """The headers and properties a producer sets on the messages it sends. Setters return the
    producer, so calls chain."""

    def __init__(self) -> None:
        self._correlation_id: str | None = None
        self._type: str | None = None
        self._reply_to: Destination | None = None
        self._props: dict[str, tuple[int, Any]] = {}
        self._blocks: tuple[bytes, bytes] | None = None  # packed (headers, properties), cached

    # ------------------------------------------------------------------ headers

    def set_jms_correlation_id(self, correlation_id: str | None) -> Self:
        if correlation_id is not None and not isinstance(correlation_id, str):
            raise MessageFormatRuntimeException(f"a correlation id must be a str, got {correlation_id!r}")
        self._correlation_id = correlation_id if correlation_id is None else check_text(correlation_id)
        self._blocks = None
        return self

    def get_jms_correlation_id(self) -> str | None:
        return self._correlation_id

    def set_jms_type(self, jms_type: str | None) -> Self:
        if jms_type is not None and not isinstance(jms_type, str):
            raise MessageFormatRuntimeException(f"a JMS type must be a str, got {jms_type!r}")
        self._type = jms_type if jms_type is None else check_text(jms_type)
        self._blocks = None
        return self

    def get_jms_type(self) -> str | None:
        return self._type

    def set_jms_reply_to(self, reply_to: Destination | None) -> Self:
        if reply_to is not None and not isinstance(reply_to, Destination):
            raise MessageFormatRuntimeException(f"reply-to must be a Queue or Topic, got {reply_to!r}")
        self._reply_to = reply_to
        self._blocks = None
        return self

    def get_jms_reply_to(self) -> Destination | None:
        return self._reply_to

    # ------------------------------------------------------------------ properties

    def set_property(self, name: str, value: bool | int | float | str) -> Self:
        """Sets a property on every message this producer sends (JMS type from the Python type)."""
        check_property_name(name)
        self._props[name] = checked_property(name, tag_for(value, what=f"property {name!r}"), value)
        self._blocks = None
        return self

    def _set_typed(self, name: str, tag: int, value: Any) -> Self:
        self._props[name] = checked_property(name, tag, value)
        self._blocks = None
        return self

    def set_boolean_property(self, name: str, value: bool) -> Self:
        return self._set_typed(name, C.T_BOOL, value)

    def set_byte_property(self, name: str, value: int) -> Self:
        return self._set_typed(name, C.T_BYTE, value)

    def set_short_property(self, name: str, value: int) -> Self:
        return self._set_typed(name, C.T_SHORT, value)

    def set_int_property(self, name: str, value: int) -> Self:
        return self._set_typed(name, C.T_INT, value)

    def set_float_property(self, name: str, value: float) -> Self:
        return self._set_typed(name, C.T_FLOAT, value)

    def set_long_property(self, name: str, value: int) -> Self:
        return self._set_typed(name, C.T_LONG, value)

    def set_double_property(self, name: str, value: float) -> Self:
        return self._set_typed(name, C.T_DOUBLE, value)

    def set_string_property(self, name: str, value: str) -> Self:
        return self._set_typed(name, C.T_STRING, value)

    #: jakarta.jms.JMSProducer.setProperty(String, Object): the JMS type follows the Python type
    set_object_property = set_property

    def clear_properties(self) -> Self:
        self._props.clear()
        self._blocks = None
        return self

    def property_exists(self, name: str) -> bool:
        return name in self._props

    def get_property_names(self) -> set[str]:
        return set(self._props)

    def get_object_property(self, name: str) -> Any:
        e = self._props.get(name)
        return None if e is None else e[1]

    def get_string_property(self, name: str) -> str | None:
        return cast("str | None", convert(self._props.get(name), C.T_STRING, f"property {name!r}"))

    def get_int_property(self, name: str) -> int:
        return cast(int, convert(self._props.get(name), C.T_INT, f"property {name!r}"))

    def get_long_property(self, name: str) -> int:
        return cast(int, convert(self._props.get(name), C.T_LONG, f"property {name!r}"))

    def get_boolean_property(self, name: str) -> bool:
        return cast(bool, convert(self._props.get(name), C.T_BOOL, f"property {name!r}"))

    def get_double_property(self, name: str) -> float:
        return cast(float, convert(self._props.get(name), C.T_DOUBLE, f"property {name!r}"))

    # ------------------------------------------------------------------ on the wire

    def _packed_blocks(self) -> tuple[bytes, bytes]:
        """The headers and properties packed for a record (codec.pack_record), made once."""
        if self._blocks is None:
            reply = self._reply_to.key if self._reply_to is not None else None
            has_headers = self._correlation_id is not None or self._type is not None or reply is not None
            headers = C.pack_headers(self._correlation_id, self._type, reply) if has_headers else b""
            self._blocks = (headers, C.pack_properties(self._props) if self._props else b"")
        return self._blocks

    def _overrides(self) -> dict[str, Any]:
        """The producer's headers that replace a message's own (JMS 2.0: those that are set)."""
        out: dict[str, Any] = {}
        if self._correlation_id is not None:
            out["correlation_id"] = self._correlation_id
        if self._type is not None:
            out["jms_type"] = self._type
        if self._reply_to is not None:
            out["reply_to"] = self._reply_to
        return out
