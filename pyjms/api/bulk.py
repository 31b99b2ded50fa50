"""The bulk API: many messages per JVM crossing, for the components that move messages in bulk
(the delay processor, the DLQ handler, the Spark source and sink).

Nothing above the client packs wire records or calls the shim's Java classes; they use this:

* routed sends: each message with its own destination and send options, many in one crossing,
  through the session's send path (``ctx.sends.send_routed``): RoutedSend, RoutedBatch, and
  RoutedEncoder for entries made from plain values;
* bulk receive: a prefetching consumer for a move loop (MessageReceiver); received messages
  carried to another process as bytes (received_bytes, pack_received, iter_received); a
  received message's body as it came (received_body);
* the delay processor's filing and moving in the JVM: SlotFiler, DueMover, and the
  ConcurrentKeySet of plain targets the mover reads;
* Spark's columnar reads (ColumnarReader);
* the poison the shim quarantined (poison_notes).

Records are Message.encode's (outgoing) and Message.from_record's (received); their layout is
the wire's (pyjms.bridge.codec) and stays there.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from pyjms.api.message import Message
from pyjms.bridge import bulk as wire
from pyjms.bridge import codec as C
from pyjms.bridge.bulk import Columns, ConcurrentKeySet, DueChunk, SlotFiling
from pyjms.bridge.channel import is_browse_skip, poison_notes
from pyjms.bridge.contract import DUPLICATE_ID

if TYPE_CHECKING:
    from pyjms.api.consumer import JMSConsumer, QueueBrowser
    from pyjms.api.context import JMSContext
    from pyjms.api.destination import Destination

__all__ = [
    "RoutedSend",
    "RoutedBatch",
    "RoutedEncoder",
    "MessageReceiver",
    "received_bytes",
    "pack_received",
    "iter_received",
    "received_body",
    "SlotFiler",
    "SlotFiling",
    "DueMover",
    "DueChunk",
    "ConcurrentKeySet",
    "ColumnarReader",
    "Columns",
    "poison_notes",
    "is_browse_skip",
]

#: a text or bytes body's length, before its bytes (-1: a text message without text)
_LENGTH = struct.Struct(">i")
_NO_TEXT = _LENGTH.pack(-1)
_NO_BYTES = _LENGTH.pack(0)

# ---------------------------------------------------------------------------- routed sends


class RoutedSend(NamedTuple):
    """One message of a routed batch: where it goes, how, and its record (Message.encode)."""

    destination: str  # a destination key (Destination.key)
    delivery_mode: int
    priority: int
    time_to_live: int  # ms; 0: it never expires
    delivery_delay: int  # ms
    record: bytes

    def pack(self) -> bytes:
        """The entry as Channel.sendRouted reads it."""
        return C.pack_routed(*self)


class RoutedBatch:
    """Routed entries waiting to be sent in one crossing, in the session's transaction, through
    ``ctx.sends.send_routed``. For bulk senders that checked their messages themselves: the
    factory's send policies do not see these sends. Each entry is packed as it is added (one
    bytes per message, nothing more)."""

    __slots__ = ("_ctx", "_entries")

    def __init__(self, ctx: JMSContext) -> None:
        self._ctx = ctx
        self._entries: list[bytes] = []

    def add(
        self,
        destination: Destination,
        record: bytes,
        delivery_mode: int,
        priority: int,
        time_to_live: int = 0,
        delivery_delay: int = 0,
    ) -> int:
        """Adds one message; returns how many are waiting."""
        self._entries.append(
            C.pack_routed(destination.key, delivery_mode, priority, time_to_live, delivery_delay, record)
        )
        return len(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def send(self) -> int:
        """Sends what waits (none: no crossing); returns how many were sent."""
        if not self._entries:
            return 0
        entries, self._entries = self._entries, []
        return self._ctx.sends.send_routed(entries)


class RoutedEncoder:
    """Routed entries of messages of one kind (text or bytes) made from plain values, for a
    bulk sender that makes its messages from data (the Spark sink): no Message per entry, each
    destination key packed once, and entries of bodies alone made a column at a time."""

    __slots__ = ("text", "_keys")

    def __init__(self, text: bool) -> None:
        #: True: TextMessages (a body is a str, or its UTF-8 bytes in bodies()); False: BytesMessages
        self.text = text
        self._keys: dict[str, bytes] = {}

    def _key(self, key: str) -> bytes:
        packed = self._keys.get(key)
        if packed is None:
            packed = self._keys[key] = C.pack_string(key)
        return packed

    def entry(
        self,
        key: str,
        delivery_mode: int,
        priority: int,
        time_to_live: int,
        body: str | bytes | None,
        correlation_id: str | None,
        jms_type: str | None,
        reply_to: str | None,
        properties: dict[str, tuple[int, Any]],
    ) -> bytes:
        """One message, without a delivery delay: ``key`` and ``reply_to`` are destination keys,
        ``properties`` typed (pyjms.api.property_types); a None body is a TextMessage without
        text, or an empty BytesMessage."""
        has_headers = correlation_id is not None or jms_type is not None or reply_to is not None
        headers = C.pack_headers(correlation_id, jms_type, reply_to) if has_headers else b""
        kind = C.KIND_TEXT if self.text else C.KIND_BYTES
        if body is None and not self.text:
            body = b""
        return (
            self._key(key)
            + C.ROUTE.pack(delivery_mode, priority, time_to_live, 0)
            + C.pack_record(kind, body, headers, C.pack_properties(properties) if properties else b"")
        )

    def bodies(
        self,
        key: str,
        delivery_mode: int,
        priority: int,
        time_to_live: int,
        bodies: list[bytes | None],
        duplicate_ids: str | None = None,
        first: int = 0,
    ) -> list[bytes]:
        """The entries of messages that differ only in their body (a text body as its UTF-8
        bytes), to one destination with one set of options; with ``duplicate_ids``, each message
        ``i`` of them has the duplicate id ``<duplicate_ids><first + i>`` (its only property)."""
        # the entry of a message without a body, less the body's length: each entry adds its own
        prefix = self.entry(key, delivery_mode, priority, time_to_live, None, None, None, None, {})[:-4]
        length = _LENGTH.pack
        # no body: a TextMessage with no text, or an empty BytesMessage (its length, 0)
        empty = _NO_TEXT if self.text else _NO_BYTES
        if duplicate_ids is None:
            return [prefix + (length(len(b)) + b if b is not None else empty) for b in bodies]
        # the property block is packed once up to the id's length; each entry adds its length
        # and its number (packing a property map per entry cost 1.9 us of 2.1)
        route, kind = prefix[:-2], prefix[-2]
        head = route + bytes((kind, C.FLAG_PROPERTIES))
        head += C.pack_properties({DUPLICATE_ID: (C.T_STRING, "")})[: -_LENGTH.size]
        ids = duplicate_ids.encode("utf-8")
        id_length = len(ids)
        return [
            head
            + length(id_length + len(number := str(i)))
            + ids
            + number.encode("ascii")
            + (length(len(b)) + b if b is not None else empty)
            for i, b in enumerate(bodies, first)
        ]


# ---------------------------------------------------------------------------- bulk receive


class MessageReceiver:
    """A queue consumer the provider sends at most ``prefetch`` messages ahead, handing out
    each message acknowledged as it is received (in a transacted context: got in the
    transaction). Unlike a JMSConsumer it is not the context's: no consumer observers, no
    duplicate check, nothing kept when it closes. For a move loop such as the DLQ handler's."""

    def __init__(self, ctx: JMSContext, queue: Destination, selector: str | None, prefetch: int) -> None:
        channel = ctx.channel
        self._queue = queue
        self._what = f"receive from {queue}"
        self._wire = channel.prefetching_consumer(
            channel.java_string(queue.key), selector, prefetch, f"create_consumer({queue})"
        )

    def receive(self, timeout_ms: int) -> Message | None:
        """The next message, or None if none came within timeout_ms."""
        raw = self._wire.receive(timeout_ms, True, self._what)
        return None if raw is None else Message.from_record(C.IncomingRecord(raw, 0))

    def close(self) -> None:
        self._wire.close(f"close consumer on {self._queue}")


def received_bytes(message: Message) -> bytes:
    """A received message as the bytes it came in, to be made a message again elsewhere
    (pack_received, iter_received): what a Spark stream hands its executors."""
    rec = message.record
    assert rec is not None, "only a received message has the bytes it came in"
    return rec.buf[rec.start : rec.end]


def pack_received(received: Sequence[bytes]) -> bytes:
    """Messages as received_bytes gave them, as one bytes."""
    return C.pack_batch(received, len(received))


def iter_received(packed: bytes) -> Iterator[Message]:
    """The messages of pack_received's bytes, each decoded as it is read."""
    for rec in C.iter_batch(packed):
        yield Message.from_record(rec)


def received_body(message: Message) -> tuple[bytes | None, str | None]:
    """A received message's body as it came: a text message's UTF-8 bytes and its text (None,
    None for no text), a bytes message's bytes, (None, None) for any other kind."""
    rec = message.record
    assert rec is not None, "only a received message has its body as it came"
    if rec.kind == C.KIND_TEXT:
        (n,) = _LENGTH.unpack_from(rec.buf, rec.body_at)
        if n < 0:
            return None, None
        raw = rec.buf[rec.body_at + 4 : rec.body_at + 4 + n]
        return raw, raw.decode("utf-8", "surrogateescape")
    if rec.kind == C.KIND_BYTES:
        return bytes(rec.body()), None
    return None, None


# ---------------------------------------------------------------------------- the delay processor


class SlotFiler:
    """Files staged messages under their time slots in the JVM, in ``ctx``'s transaction
    (org.pyjms.shim.delay.SlotFiler): the messages never cross into Python, and the first of a
    new slot also records the slot's marker. Those due within ``horizon_ms`` come back."""

    def __init__(
        self,
        ctx: JMSContext,
        slot_prefix: str,
        suffix: str,
        slot_ms: int,
        horizon_ms: int,
        most_attempts: int,
    ) -> None:
        self._filer = wire.SlotFiler(ctx.channel, slot_prefix, suffix, slot_ms, horizon_ms, most_attempts)

    def file(self, consumer: JMSConsumer, max_messages: int, timeout_ms: int) -> SlotFiling[Message]:
        """Takes up to max_messages off ``consumer`` (waiting up to timeout_ms for the first)
        and files them; one crossing."""
        return self._filer.file(
            consumer.wire_receiver(),
            max_messages,
            timeout_ms,
            Message.from_record,
            f"file the messages of {consumer.destination}",
        )


class DueMover:
    """Moves a slot's due messages to plain targets in the JVM, in ``ctx``'s transaction
    (org.pyjms.shim.delay.DueMover); a chunk with a message that is not plain comes back."""

    def __init__(self, ctx: JMSContext, most_attempts: int) -> None:
        self._mover = wire.DueMover(ctx.channel, most_attempts)

    def move_due(
        self,
        consumer: JMSConsumer,
        max_messages: int,
        timeout_ms: int,
        plain_targets: ConcurrentKeySet,
        allowed: ConcurrentKeySet | None,
        what: str,
    ) -> DueChunk[Message]:
        """Takes a chunk of up to max_messages off ``consumer`` (waiting up to timeout_ms for
        the first) and moves it if every message is due, unexpired, bound for a key of
        ``plain_targets`` and, with ``allowed``, staged by a user paired there with its target;
        else hands it back. One crossing."""
        return self._mover.deliver_due(
            consumer.wire_receiver(),
            max_messages,
            timeout_ms,
            plain_targets,
            allowed,
            Message.from_record,
            what,
        )


# ---------------------------------------------------------------------------- Spark's columns


class ColumnarReader:
    """A read's batches as the buffers of Arrow arrays, built in the JVM
    (org.pyjms.shim.spark.ArrowColumns) with the same poison, expiry and acknowledgement
    rules as any receive or browse. Each row's duplicate id comes as the last column."""

    def __init__(self) -> None:
        self._columns: wire.ArrowColumns | None = None  # the JVM's class, looked up at first use

    def _wire(self) -> wire.ArrowColumns:
        if self._columns is None:
            self._columns = wire.ArrowColumns()
        return self._columns

    def receive(self, consumer: JMSConsumer, max_messages: int, timeout_ms: int) -> Columns[Message]:
        """Up to max_messages from a consumer, waiting up to timeout_ms for the first."""
        return self._wire().receive(
            consumer.context.channel,
            consumer.wire_receiver(),
            max_messages,
            timeout_ms,
            DUPLICATE_ID,
            Message.from_record,
            f"receive_batch from {consumer.destination}",
        )

    def browse(
        self, browser: QueueBrowser, max_messages: int, partition: int, partitions: int
    ) -> Columns[Message]:
        """The next up to max_messages messages of a browse (received 0: its end), keeping the
        rows ``partition`` of ``partitions`` owns (the messages of a batch handed back as
        messages are all there, for the caller to choose from)."""
        return self._wire().browse(
            browser.context.channel,
            browser.wire_browser(),
            max_messages,
            DUPLICATE_ID,
            partition,
            partitions,
            Message.from_record,
            f"browse {browser.get_queue()}",
        )
