"""The bulk API's packing and decoding (pyjms.api.bulk, pyjms.bridge.bulk), without a JVM: each
typed value is packed by the API and read back with the wire's codec (pyjms.bridge.codec), and
each shim answer is built here as the shim writes it and decoded by the API."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import pytest

from pyjms.api.bulk import (
    RoutedBatch,
    RoutedEncoder,
    RoutedSend,
    iter_received,
    pack_received,
    received_body,
    received_bytes,
)
from pyjms.api.constants import NON_PERSISTENT, PERSISTENT
from pyjms.api.destination import Queue, Topic
from pyjms.api.message import BytesMessage, Message, TextMessage
from pyjms.api.property_types import KIND_BYTES, KIND_TEXT, T_INT, T_LONG, T_STRING
from pyjms.bridge import codec as C
from pyjms.bridge import jvm
from pyjms.bridge.bulk import QUARANTINED, read_columns, read_due_chunk, read_filing
from pyjms.bridge.contract import DUPLICATE_ID

# ---------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def no_jvm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test here runs without the JVM: reaching for it fails the test."""

    def refuse() -> None:
        raise AssertionError("the bulk API's packing and decoding must not need the JVM")

    monkeypatch.setattr(jvm, "shim", refuse)
    yield


def read_outgoing(buf: bytes, pos: int = 0) -> dict[str, Any]:
    """An outgoing record (codec.pack_record), as the shim reads it."""
    kind, flags = buf[pos], buf[pos + 1]
    pos += 2
    out: dict[str, Any] = {"kind": kind, "headers": None, "properties": {}}
    if flags & C.FLAG_HEADERS:
        correlation_id, pos = C.read_string(buf, pos)
        jms_type, pos = C.read_string(buf, pos)
        reply_to, pos = C.read_string(buf, pos)
        out["headers"] = (correlation_id, jms_type, reply_to)
    if flags & C.FLAG_PROPERTIES:
        out["properties"], pos = C.read_tagged_map(buf, pos)
    if kind == KIND_TEXT:
        out["body"], pos = C.read_string(buf, pos)
    elif kind == KIND_BYTES:
        (n,) = struct.unpack_from(">i", buf, pos)
        out["body"], pos = buf[pos + 4 : pos + 4 + n], pos + 4 + n
    out["end"] = pos
    return out


def read_routed(entry: bytes) -> tuple[str | None, tuple[int, int, int, int], dict[str, Any]]:
    """A routed entry (Channel.sendRouted): destination key, (mode, priority, ttl, delay), record."""
    key, pos = C.read_string(entry, 0)
    route = C.ROUTE.unpack_from(entry, pos)
    record = read_outgoing(entry, pos + C.ROUTE.size)
    assert record["end"] == len(entry)
    return key, route, record


def incoming(
    kind: int, body: Any, properties: dict[str, tuple[int, Any]] | None = None, message_id: str = "ID:1"
) -> bytes:
    """A received record as the shim writes it (Codec.encodeIncoming): length, kind, flags,
    body offset, the full header block, the properties and the body."""
    headers = (
        C.pack_string(message_id)
        + struct.pack(">q", 1_000)
        + C.pack_string("corr")
        + C.pack_string(None)
        + C.pack_string("queue://Q")
        + struct.pack(">bb", PERSISTENT, 0)
        + C.pack_string(None)
        + struct.pack(">qqbi", 0, 0, 4, 1)
    )
    props = C.pack_properties(properties or {})
    head_size = 10
    body_offset = head_size + len(headers) + len(props)
    packed_body = C.pack_body(kind, body)
    length = body_offset + len(packed_body)
    return struct.pack(">iBBi", length, kind, 0, body_offset) + headers + props + packed_body


def received(raw: bytes) -> Message:
    return Message.from_record(C.IncomingRecord(raw, 0))


class _Sends:
    def __init__(self) -> None:
        self.sent: list[list[bytes]] = []

    def send_routed(self, entries: list[bytes]) -> int:
        self.sent.append(list(entries))
        return len(entries)


class _Context:
    """What RoutedBatch uses of a JMSContext: its send path."""

    def __init__(self) -> None:
        self.sends = _Sends()


# ---------------------------------------------------------------------------- routed sends


def test_a_routed_send_packs_as_the_shim_reads_it() -> None:
    message = TextMessage("hello")
    message.set_jms_correlation_id("c-1")
    message.set_int_property("n", 7)
    send = RoutedSend("queue://ORDERS", NON_PERSISTENT, 9, 60_000, 500, message.encode())
    key, route, record = read_routed(send.pack())
    assert key == "queue://ORDERS"
    assert route == (NON_PERSISTENT, 9, 60_000, 500)
    assert record["kind"] == KIND_TEXT and record["body"] == "hello"
    assert record["headers"] == ("c-1", None, None)
    assert record["properties"] == {"n": (T_INT, 7)}


def test_a_routed_batch_packs_each_entry_and_sends_them_in_one_crossing() -> None:
    ctx = _Context()
    batch = RoutedBatch(ctx)  # type: ignore[arg-type]
    assert batch.send() == 0 and ctx.sends.sent == []  # nothing waiting: no crossing
    first = TextMessage("one").encode(add_properties={"at": (T_LONG, 2**40)})
    second = BytesMessage()
    second.write_bytes(b"\x00\xff")
    assert batch.add(Queue("A"), first, PERSISTENT, 4) == 1
    assert batch.add(Topic("B"), second.encode(), NON_PERSISTENT, 0, time_to_live=10, delivery_delay=20) == 2
    assert len(batch) == 2
    assert batch.send() == 2
    assert len(batch) == 0
    (entries,) = ctx.sends.sent
    a, b = (read_routed(e) for e in entries)
    assert a[0] == "queue://A" and a[1] == (PERSISTENT, 4, 0, 0)
    assert a[2]["body"] == "one" and a[2]["properties"] == {"at": (T_LONG, 2**40)}
    assert b[0] == "topic://B" and b[1] == (NON_PERSISTENT, 0, 10, 20)
    assert b[2]["kind"] == KIND_BYTES and bytes(b[2]["body"]) == b"\x00\xff"
    # the same bytes as the typed value packs
    assert entries[0] == RoutedSend("queue://A", PERSISTENT, 4, 0, 0, first).pack()


def test_an_encoded_entry_carries_its_values() -> None:
    text = RoutedEncoder(text=True)
    entry = text.entry("queue://Q", PERSISTENT, 7, 1_000, "hé", "c", "t", "queue://R", {"p": (T_STRING, "v")})
    key, route, record = read_routed(entry)
    assert (key, route) == ("queue://Q", (PERSISTENT, 7, 1_000, 0))
    assert record["kind"] == KIND_TEXT and record["body"] == "hé"
    assert record["headers"] == ("c", "t", "queue://R")
    assert record["properties"] == {"p": (T_STRING, "v")}
    # the same as a TextMessage's record, routed
    message = TextMessage("hé")
    message.set_jms_correlation_id("c")
    message.set_jms_type("t")
    message.set_jms_reply_to(Queue("R"))
    message.set_string_property("p", "v")
    assert entry == RoutedSend("queue://Q", PERSISTENT, 7, 1_000, 0, message.encode()).pack()
    no_text = read_routed(text.entry("queue://Q", PERSISTENT, 4, 0, None, None, None, None, {}))[2]
    assert no_text["body"] is None and no_text["headers"] is None and no_text["properties"] == {}
    empty = read_routed(RoutedEncoder(text=False).entry("topic://T", 1, 4, 0, None, None, None, None, {}))
    assert empty[2]["kind"] == KIND_BYTES and bytes(empty[2]["body"]) == b""


def test_entries_of_bodies_are_the_entries_of_each_body() -> None:
    bodies: list[bytes | None] = ["é".encode(), b"", None, b"xyz"]
    for text in (True, False):
        encoder = RoutedEncoder(text)

        def one(
            body: bytes | None, properties: dict[str, tuple[int, Any]], enc: RoutedEncoder = encoder
        ) -> bytes:
            value = body.decode() if enc.text and body is not None else body
            return enc.entry("queue://Q", NON_PERSISTENT, 3, 5, value, None, None, None, properties)

        plain = encoder.bodies("queue://Q", NON_PERSISTENT, 3, 5, bodies)
        with_ids = encoder.bodies("queue://Q", NON_PERSISTENT, 3, 5, bodies, "spark:w:0:", first=98)
        for i, body in enumerate(bodies):
            assert plain[i] == one(body, {})
            assert with_ids[i] == one(body, {DUPLICATE_ID: (T_STRING, f"spark:w:0:{98 + i}")})


def test_the_records_of_many_bodies_are_the_record_of_each_body() -> None:
    """codec.pack_records (send_batch's packing, and pyjms.aio's on its worker) packs the common
    part once: the same bytes as pack_record of each body, after a routed entry's route."""
    bodies: list[Any] = ["hé", b"\x00", bytearray(b"ab"), memoryview(b"cd"), ""]
    route = C.pack_routed("queue://Q", NON_PERSISTENT, 4, 0, 0, b"")
    blocks = C.pack_headers("c", None, "queue://R"), C.pack_properties({"p": (T_STRING, "v")})
    for headers, props in ((b"", b""), blocks):
        each = [
            C.pack_record(KIND_TEXT if isinstance(b, str) else KIND_BYTES, b, headers, props) for b in bodies
        ]
        assert C.pack_records(bodies, headers, props) == each
        assert C.pack_records(bodies, headers, props, route) == [route + r for r in each]
    with pytest.raises(TypeError, match="body #1 is int"):
        C.pack_records(["a", 1], b"", b"")


# ---------------------------------------------------------------------------- received messages


def test_received_messages_cross_as_bytes_and_come_back_the_same() -> None:
    raws = [
        incoming(KIND_TEXT, "hé", {"k": (T_STRING, "v")}, "ID:a"),
        incoming(KIND_BYTES, b"\x01\x02", None, "ID:b"),
    ]
    messages = [received(r) for r in raws]
    carried = [received_bytes(m) for m in messages]
    assert carried == raws
    back = list(iter_received(pack_received(carried)))
    assert [m.get_jms_message_id() for m in back] == ["ID:a", "ID:b"]
    assert back[0].get_body(str) == "hé" and back[0].get_string_property("k") == "v"
    assert back[1].get_body(bytes) == b"\x01\x02"
    assert list(iter_received(pack_received([]))) == []


def test_a_received_body_as_it_came() -> None:
    assert received_body(received(incoming(KIND_TEXT, "hé"))) == ("hé".encode(), "hé")
    assert received_body(received(incoming(KIND_TEXT, None))) == (None, None)
    assert received_body(received(incoming(KIND_BYTES, b"\x00"))) == (b"\x00", None)


# ---------------------------------------------------------------------------- the shim's answers


def test_a_filing_answer_decodes() -> None:
    soon = [incoming(KIND_TEXT, "due", None, "ID:s1"), incoming(KIND_TEXT, "due too", None, "ID:s2")]
    raw = (
        struct.pack(">i", 2)
        + struct.pack(">qi", 170_000_000_001, 5)
        + struct.pack(">qi", 170_000_000_002, 1)
        + struct.pack(">i", len(soon))
        + b"".join(soon)
        + struct.pack(">i", 3)
    )
    filing = read_filing(raw, Message.from_record)
    assert filing.filed == {170_000_000_001: 5, 170_000_000_002: 1}
    assert [m.get_jms_message_id() for m in filing.soon] == ["ID:s1", "ID:s2"]
    assert filing.quarantined == 3
    empty = read_filing(struct.pack(">iii", 0, 0, 0), Message.from_record)
    assert (empty.filed, empty.soon, empty.quarantined) == ({}, [], 0)


def test_a_due_chunk_answer_decodes() -> None:
    moved = read_due_chunk(struct.pack(">iiii", 3, 5, QUARANTINED, -2), Message.from_record)
    assert (moved.moved, moved.early_by_ms, moved.quarantined, moved.returned) == (3, [5, -2], 1, [])
    nothing = read_due_chunk(struct.pack(">i", 0), Message.from_record)
    assert (nothing.moved, nothing.early_by_ms, nothing.returned) == (0, [], [])
    back = [incoming(KIND_TEXT, "x", None, "ID:r1"), incoming(KIND_TEXT, "y", None, "ID:r2")]
    returned = read_due_chunk(struct.pack(">i", -2) + b"".join(back), Message.from_record)
    assert returned.moved == 0
    assert [m.get_jms_message_id() for m in returned.returned] == ["ID:r1", "ID:r2"]


def test_a_columnar_answer_decodes() -> None:
    # records handed back: status -1, then a batch
    records = [incoming(KIND_TEXT, "a", None, "ID:c1")]
    as_records = read_columns(struct.pack("<i", -1) + C.pack_batch(records, 1), Message.from_record)
    assert as_records.received == 1 and as_records.buffers is None
    assert [m.get_jms_message_id() for m in as_records.messages or []] == ["ID:c1"]
    # none came: no buffers
    none = read_columns(struct.pack("<ii8x", 0, 0), Message.from_record)
    assert (none.received, none.rows, none.buffers, none.messages) == (0, 0, None, None)
    # columns: each buffer its size, padded to 8
    sizes = [i % 11 for i in range(41)]
    body = b"".join(
        struct.pack("<i4x", n) + bytes([i]) * n + bytes((n + 7 & ~7) - n) for i, n in enumerate(sizes)
    )
    columns = read_columns(struct.pack("<ii8x", 5, 3) + body, Message.from_record)
    assert (columns.received, columns.rows, columns.messages) == (5, 3, None)
    assert columns.buffers is not None
    assert [bytes(b) for b in columns.buffers] == [bytes([i]) * n for i, n in enumerate(sizes)]
