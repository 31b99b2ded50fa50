"""The body types of JMS messages: text, bytes, map, and the object and stream messages
pyjms receives but never decodes; and the message a producer's plain body becomes."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast

from pyjms.api.message.base import Message
from pyjms.api.message.properties import check_text, checked_value, convert, tag_for
from pyjms.bridge import codec as C
from pyjms.errors import InvalidArgumentRuntimeException, MessageFormatRuntimeException


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
    _copyable = False
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
    _copyable = False
    __slots__ = ()

    def is_body_assignable_to(self, as_type: type) -> bool:
        return False

    def get_body(self, as_type: type | None = None) -> Any:
        raise MessageFormatRuntimeException("pyjms does not decode StreamMessage bodies")


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
