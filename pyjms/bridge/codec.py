"""The binary record format shared with the Java shim (java/.../Codec.java).

Python crosses the JVM boundary once per batch, so messages travel as packed records:

* outgoing (Python to JMS): ``kind:u8 flags:u8 [headers] [properties] body``, where the
  header block is correlation id, type and reply-to, each a string;
* incoming (JMS to Python): ``length:i32 kind:u8 flags:u8 body_offset:i32`` then the full
  header block (message id, timestamp, correlation id, reply-to, destination, delivery
  mode, redelivered, type, expiration, delivery time, priority, delivery count), the
  property block and the body. Length and body offset let pyjms decode lazily.

A batch is ``count:i32`` followed by records. Numbers are big-endian; a string is a byte
length (-1 for None) then UTF-8; a property block is ``count:i32`` then (name, tagged value).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

# the kinds, flags and value tags are the contract's (pyjms.bridge.contract); named here too
from pyjms.bridge.contract import (  # noqa: F401 - part of this module's API
    FLAG_HEADERS,
    FLAG_PROPERTIES,
    KIND_BYTES,
    KIND_MAP,
    KIND_MESSAGE,
    KIND_OBJECT,
    KIND_STREAM,
    KIND_TEXT,
    T_BOOL,
    T_BYTE,
    T_BYTES,
    T_CHAR,
    T_DOUBLE,
    T_FLOAT,
    T_INT,
    T_LONG,
    T_NULL,
    T_SHORT,
    T_STRING,
)
from pyjms.errors import InvalidArgumentRuntimeException

#: the contract's kinds, flags and tags (re-exported) and the format's own functions
__all__ = [
    "FLAG_HEADERS",
    "FLAG_PROPERTIES",
    "KIND_BYTES",
    "KIND_MAP",
    "KIND_MESSAGE",
    "KIND_OBJECT",
    "KIND_STREAM",
    "KIND_TEXT",
    "T_BOOL",
    "T_BYTE",
    "T_BYTES",
    "T_CHAR",
    "T_DOUBLE",
    "T_FLOAT",
    "T_INT",
    "T_LONG",
    "T_NULL",
    "T_SHORT",
    "T_STRING",
    "pack_string",
    "lone_surrogate",
    "pack_value",
    "pack_properties",
    "pack_headers",
    "pack_body",
    "pack_record",
    "pack_batch",
    "ROUTE",
    "pack_routed",
    "read_string",
    "read_value",
    "read_tagged_map",
    "HEADER_FIELDS",
    "read_headers",
    "IncomingRecord",
    "read_listened",
    "iter_batch",
]

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_REC_HEAD = struct.Struct(">iBBi")  # length, kind, flags, body offset
_NONE = _I32.pack(-1)
_VALUE_FORMATS = {
    T_BOOL: struct.Struct(">BB"),
    T_BYTE: struct.Struct(">Bb"),
    T_SHORT: struct.Struct(">Bh"),
    T_INT: struct.Struct(">Bi"),
    T_LONG: struct.Struct(">Bq"),
    T_FLOAT: struct.Struct(">Bf"),
    T_DOUBLE: struct.Struct(">Bd"),
    T_CHAR: struct.Struct(">BH"),
}


def pack_string(s: str | None) -> bytes:
    if s is None:
        return _NONE
    try:
        b = s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise lone_surrogate(s, e.start) from None
    return _I32.pack(len(b)) + b


def check_text(s: str) -> None:
    """Raises what pack_string raises for a str that is not Unicode text, without packing it
    (for a check made before the packing, on another thread)."""
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError as e:
            raise lone_surrogate(s, e.start) from None


def lone_surrogate(s: str, index: int) -> InvalidArgumentRuntimeException:
    """The error for a str that is not Unicode text: a surrogate without its pair, which
    UTF-8 (and so every JMS provider) cannot carry; nothing is silently replaced."""
    shown = s if len(s) <= 40 else s[:40] + "..."
    return InvalidArgumentRuntimeException(
        f"the string {shown!r} has a lone surrogate {s[index]!r} at index {index}: it is not Unicode text, "
        "and JMS strings travel as UTF-8",
        values={"index": index},
    )


def pack_value(tag: int, value: Any) -> bytes:
    if tag == T_STRING:
        return bytes((T_STRING,)) + pack_string(value)
    if tag == T_BYTES:
        return bytes((T_BYTES,)) + _I32.pack(len(value)) + bytes(value)
    if tag == T_CHAR:
        return _VALUE_FORMATS[T_CHAR].pack(T_CHAR, ord(value))
    return _VALUE_FORMATS[tag].pack(tag, value)


def pack_properties(props: dict[str, tuple[int, Any]]) -> bytes:
    parts = [_I32.pack(len(props))]
    for name, (tag, value) in props.items():
        parts.append(pack_string(name))
        parts.append(pack_value(tag, value))
    return b"".join(parts)


def pack_headers(correlation_id: str | None, jms_type: str | None, reply_to: str | None) -> bytes:
    return pack_string(correlation_id) + pack_string(jms_type) + pack_string(reply_to)


def pack_body(kind: int, body: Any) -> bytes:
    if kind == KIND_TEXT:
        return pack_string(body)
    if kind == KIND_BYTES:
        return _I32.pack(len(body)) + bytes(body)
    if kind == KIND_MAP:
        parts = [_I32.pack(len(body))]
        for name, (tag, value) in body.items():
            parts.append(pack_string(name))
            parts.append(pack_value(tag, value))
        return b"".join(parts)
    if kind == KIND_MESSAGE:
        return b""
    raise ValueError(f"cannot send a message of kind {kind}")


def pack_record(kind: int, body: Any, headers: bytes = b"", properties: bytes = b"") -> bytes:
    """One outgoing record; ``headers`` and ``properties`` are pre-packed blocks or empty."""
    flags = (FLAG_HEADERS if headers else 0) | (FLAG_PROPERTIES if properties else 0)
    return bytes((kind, flags)) + headers + properties + pack_body(kind, body)


def pack_records(
    bodies: Sequence[Any], headers: bytes = b"", properties: bytes = b"", prefix: bytes = b""
) -> list[bytes]:
    """pack_record of every str (TextMessage) or bytes-like (BytesMessage) body, with the same
    header and property blocks, each after ``prefix`` (a routed entry's where and how,
    pack_routed): the common part is packed once. A body of another type raises
    TypeError naming its index and type."""
    flags = (FLAG_HEADERS if headers else 0) | (FLAG_PROPERTIES if properties else 0)
    text = prefix + bytes((KIND_TEXT, flags)) + headers + properties
    binary = prefix + bytes((KIND_BYTES, flags)) + headers + properties
    size = _I32.pack
    records: list[bytes] = []
    append = records.append
    for body in bodies:
        if isinstance(body, str):
            append(text + pack_string(body))
        elif isinstance(body, (bytes, bytearray, memoryview)):
            data = bytes(body)
            append(binary + size(len(data)) + data)
        else:
            raise TypeError(f"body #{len(records)} is {type(body).__name__}")
    return records


def pack_batch(records: Iterable[bytes], count: int) -> bytes:
    return _I32.pack(count) + b"".join(records)


#: what follows a routed entry's destination key: delivery mode, priority, ttl, delay
ROUTE = struct.Struct(">iiqq")


def pack_routed(destination_key: str, mode: int, priority: int, ttl: int, delay: int, record: bytes) -> bytes:
    """One entry of a routed batch (Channel.sendRouted): where and how, then the record."""
    return pack_string(destination_key) + ROUTE.pack(mode, priority, ttl, delay) + record


# ---------------------------------------------------------------------------- decoding


def read_string(buf: bytes | memoryview, pos: int) -> tuple[str | None, int]:
    (n,) = _I32.unpack_from(buf, pos)
    pos += 4
    if n < 0:
        return None, pos
    # str() decodes the slice of bytes or memoryview alike, without a bytes() made first
    return str(buf[pos : pos + n], "utf-8", "surrogateescape"), pos + n


def read_value(buf: bytes | memoryview, pos: int) -> tuple[int, Any, int]:
    tag = buf[pos]
    if tag == T_NULL:
        return tag, None, pos + 1
    if tag == T_STRING:
        s, pos = read_string(buf, pos + 1)
        return tag, s, pos
    if tag == T_BYTES:
        (n,) = _I32.unpack_from(buf, pos + 1)
        start = pos + 5
        return tag, bytes(buf[start : start + n]), start + n
    fmt = _VALUE_FORMATS.get(tag)
    if fmt is None:
        raise ValueError(f"unknown value tag {tag} at offset {pos}")
    _, value = fmt.unpack_from(buf, pos)
    if tag == T_BOOL:
        value = bool(value)
    elif tag == T_CHAR:
        value = chr(value)
    return tag, value, pos + fmt.size


def read_tagged_map(buf: bytes | memoryview, pos: int) -> tuple[dict[str, tuple[int, Any]], int]:
    (n,) = _I32.unpack_from(buf, pos)
    pos += 4
    out: dict[str, tuple[int, Any]] = {}
    for _ in range(n):
        name, pos = read_string(buf, pos)
        tag, value, pos = read_value(buf, pos)
        out[name or ""] = (tag, value)
    return out, pos


_FIXED_1 = struct.Struct(">q")  # timestamp
_FIXED_2 = struct.Struct(">bb")  # delivery mode, redelivered
_FIXED_3 = struct.Struct(">qqbi")  # expiration, delivery time, priority, delivery count

HEADER_FIELDS = (
    "message_id",
    "timestamp",
    "correlation_id",
    "reply_to",
    "destination",
    "delivery_mode",
    "redelivered",
    "type",
    "expiration",
    "delivery_time",
    "priority",
    "delivery_count",
)


def read_headers(buf: bytes | memoryview, pos: int) -> tuple[dict[str, Any], int]:
    """The full header block, as written by Codec.encodeHeaders."""
    message_id, pos = read_string(buf, pos)
    (timestamp,) = _FIXED_1.unpack_from(buf, pos)
    correlation_id, pos = read_string(buf, pos + 8)
    reply_to, pos = read_string(buf, pos)
    destination, pos = read_string(buf, pos)
    mode, redelivered = _FIXED_2.unpack_from(buf, pos)
    jms_type, pos = read_string(buf, pos + 2)
    expiration, delivery_time, priority, delivery_count = _FIXED_3.unpack_from(buf, pos)
    pos += _FIXED_3.size
    return (
        {
            "message_id": message_id,
            "timestamp": timestamp,
            "correlation_id": correlation_id,
            "reply_to": reply_to,
            "destination": destination,
            "delivery_mode": mode,
            "redelivered": bool(redelivered),
            "type": jms_type,
            "expiration": expiration,
            "delivery_time": delivery_time,
            "priority": priority,
            "delivery_count": delivery_count,
        },
        pos,
    )


class IncomingRecord:
    """A received record, decoded on demand (headers and properties only when asked for)."""

    __slots__ = ("buf", "start", "kind", "flags", "body_at", "end")

    def __init__(self, buf: bytes, start: int) -> None:
        length, kind, flags, body_offset = _REC_HEAD.unpack_from(buf, start)
        self.buf = buf
        self.start = start
        self.kind = kind
        self.flags = flags
        self.body_at = start + body_offset
        self.end = start + length

    def message_id(self) -> str | None:
        """The message id alone: the header block's first field, the rest left undecoded."""
        return read_string(self.buf, self.start + _REC_HEAD.size)[0]

    def headers_and_properties(self) -> tuple[dict[str, Any], dict[str, tuple[int, Any]]]:
        headers, pos = read_headers(self.buf, self.start + _REC_HEAD.size)
        props, _ = read_tagged_map(self.buf, pos)
        return headers, props

    def body(self) -> Any:
        if self.kind == KIND_TEXT:
            return read_string(self.buf, self.body_at)[0]
        if self.kind == KIND_BYTES:
            (n,) = _I32.unpack_from(self.buf, self.body_at)
            return self.buf[self.body_at + 4 : self.body_at + 4 + n]
        if self.kind == KIND_MAP:
            return read_tagged_map(self.buf, self.body_at)[0]
        return None


def read_listened(buf: bytes) -> tuple[int, IncomingRecord]:
    """A message for a listener (Channel.nextListened): the receiver's id, then its record."""
    (receiver_id,) = _I32.unpack_from(buf, 0)
    return receiver_id, IncomingRecord(buf, 4)


def iter_batch(buf: bytes) -> Iterator[IncomingRecord]:
    (count,) = _I32.unpack_from(buf, 0)
    pos = 4
    for _ in range(count):
        rec = IncomingRecord(buf, pos)
        pos = rec.end
        yield rec
