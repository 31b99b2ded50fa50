"""The shim's bulk classes, typed: each takes or moves many messages in one JVM crossing.

* org.pyjms.shim.delay.SlotFiler files staged messages under their time slots (the delay
  processor's sorter);
* org.pyjms.shim.delay.DueMover moves a slot's due messages to plain targets (its deliverer),
  reading sets of keys that Python changes while the shim reads them (ConcurrentKeySet);
* org.pyjms.shim.spark.ArrowColumns hands a read's batch over as the buffers of Arrow arrays
  (the Spark reader).

Each call translates a Java exception as the typed channel does. Each answer is decoded here,
into counts and records (codec.IncomingRecord), so that the layers above neither call Java nor
parse the shim's answers; pyjms.api.bulk makes messages of the records.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar, cast

from pyjms.bridge import jvm
from pyjms.bridge.channel import Browser, Channel, Receiver, log_poison_notes
from pyjms.bridge.codec import IncomingRecord
from pyjms.bridge.java_types import (
    JavaBrowser,
    JavaBytes,
    JavaChannel,
    JavaReceiver,
    JavaStringArg,
    JavaStringSet,
)

# ---------------------------------------------------------------------------- the Java classes


class JavaSlotFiler(Protocol):
    """org.pyjms.shim.delay.SlotFiler."""

    def file(self, source: JavaReceiver, max_messages: int, timeout_ms: int, /) -> JavaBytes: ...


class JavaSlotFilerClass(Protocol):
    def __call__(
        self,
        channel: JavaChannel,
        slot_prefix: JavaStringArg,
        suffix: JavaStringArg,
        slot_ms: int,
        horizon_ms: int,
        most_attempts: int,
        /,
    ) -> JavaSlotFiler: ...


class JavaDueMover(Protocol):
    """org.pyjms.shim.delay.DueMover."""

    def deliverDue(
        self,
        source: JavaReceiver,
        max_messages: int,
        timeout_ms: int,
        plain_targets: JavaStringSet,
        allowed: JavaStringSet | None,
        /,
    ) -> JavaBytes: ...


class JavaDueMoverClass(Protocol):
    def __call__(self, channel: JavaChannel, most_attempts: int, /) -> JavaDueMover: ...


class JavaConcurrentHashMapClass(Protocol):
    """java.util.concurrent.ConcurrentHashMap, for its concurrent key set."""

    def newKeySet(self) -> JavaStringSet: ...


class JavaArrowColumnsClass(Protocol):
    """org.pyjms.shim.spark.ArrowColumns (static methods)."""

    def receive(
        self, source: JavaReceiver, max_messages: int, timeout_ms: int, duplicate_id_property: str, /
    ) -> JavaBytes: ...

    def browse(
        self,
        source: JavaBrowser,
        max_messages: int,
        duplicate_id_property: str,
        partition: int,
        partitions: int,
        /,
    ) -> JavaBytes: ...


_I32 = struct.Struct(">i")
_SLOT_COUNT = struct.Struct(">qi")  # a slot, how many were filed under it

#: what a caller makes of each record of an answer (pyjms.api.bulk: a Message)
R = TypeVar("R")
Decode = Callable[[IncomingRecord], R]


def _records(raw: bytes, pos: int, count: int, decode: Decode[R]) -> tuple[list[R], int]:
    """``count`` records of an answer from ``pos`` on, decoded; and where they end."""
    out = []
    for _ in range(count):
        rec = IncomingRecord(raw, pos)
        pos = rec.end
        out.append(decode(rec))
    return out, pos


# ---------------------------------------------------------------------------- a shared set


class ConcurrentKeySet:
    """A set of strings that Python changes while the shim reads it (a Java concurrent set):
    the keys of the delay processor's plain targets, and the (user, target) pairs that passed
    its write check."""

    __slots__ = ("java",)

    def __init__(self) -> None:
        maps = cast(JavaConcurrentHashMapClass, jvm.shim().jclass("java.util.concurrent.ConcurrentHashMap"))
        self.java = maps.newKeySet()

    def add(self, key: str) -> None:
        self.java.add(key)

    def discard(self, key: str) -> None:
        self.java.remove(key)


# ---------------------------------------------------------------------------- the delay processor


@dataclass
class SlotFiling(Generic[R]):
    """What one SlotFiler.file took: how many it filed under each slot, those due within the
    horizon (for the caller to put), and how many poison messages it quarantined instead."""

    filed: dict[int, int]
    soon: list[R]
    quarantined: int


class SlotFiler:
    """Files staged messages under their time slots in the JVM (org.pyjms.shim.delay.SlotFiler),
    in the transaction of the channel's session; the first message of a new slot also records
    the slot's marker. Messages due within ``horizon_ms`` come back instead."""

    def __init__(
        self,
        channel: Channel,
        slot_prefix: str,
        suffix: str,
        slot_ms: int,
        horizon_ms: int,
        most_attempts: int,
    ) -> None:
        filer_class = cast(JavaSlotFilerClass, jvm.shim().jclass("org.pyjms.shim.delay.SlotFiler"))
        self._channel = channel
        self._java = channel.call(
            lambda: filer_class(channel.java, slot_prefix, suffix, slot_ms, horizon_ms, most_attempts),
            "create the delay processor's slot filer",
        )

    def file(
        self, source: Receiver, max_messages: int, timeout_ms: int, decode: Decode[R], what: str
    ) -> SlotFiling[R]:
        """Takes up to max_messages off ``source`` (waiting up to timeout_ms for the first) and
        files them, in one crossing."""
        java, receiver = self._java, source.java
        raw = self._channel.call(lambda: java.file(receiver, max_messages, timeout_ms), what)
        return read_filing(bytes(raw), decode)


def read_filing(raw: bytes, decode: Decode[R]) -> SlotFiling[R]:
    """SlotFiler.file's answer: ``count:i32`` then (slot:i64, filed:i32) each; ``count:i32``
    then the records due soon; then how many it quarantined, i32."""
    (n,) = _I32.unpack_from(raw, 0)
    pos = 4
    filed: dict[int, int] = {}
    for _ in range(n):
        slot, count = _SLOT_COUNT.unpack_from(raw, pos)
        filed[slot] = count
        pos += _SLOT_COUNT.size
    (m,) = _I32.unpack_from(raw, pos)
    soon, pos = _records(raw, pos + 4, m, decode)
    (quarantined,) = _I32.unpack_from(raw, pos)
    return SlotFiling(filed, soon, quarantined)


#: DueMover's entry for a poison message it put on the dead-letter queue instead (DueMover.QUARANTINED)
QUARANTINED = -(2**31)


@dataclass
class DueChunk(Generic[R]):
    """What one DueMover.deliverDue did with a chunk of a slot: either it moved ``moved``
    messages (``early_by_ms``: each one's delivery time minus the time of its put, without the
    ``quarantined`` poison it dead-lettered instead), or it moved none and handed the chunk
    back (``returned``: a message in it is not plain)."""

    moved: int
    early_by_ms: list[int] = field(default_factory=list)
    quarantined: int = 0
    returned: list[R] = field(default_factory=list)


class DueMover:
    """Moves a slot's due messages to plain targets in the JVM (org.pyjms.shim.delay.DueMover),
    in the transaction of the channel's session."""

    def __init__(self, channel: Channel, most_attempts: int) -> None:
        mover_class = cast(JavaDueMoverClass, jvm.shim().jclass("org.pyjms.shim.delay.DueMover"))
        self._channel = channel
        self._java = channel.call(
            lambda: mover_class(channel.java, most_attempts), "create the delay processor's mover"
        )

    def deliver_due(
        self,
        source: Receiver,
        max_messages: int,
        timeout_ms: int,
        plain_targets: ConcurrentKeySet,
        allowed: ConcurrentKeySet | None,
        decode: Decode[R],
        what: str,
    ) -> DueChunk[R]:
        """Takes a chunk of up to max_messages off ``source`` (waiting up to timeout_ms for the
        first) and moves it if every message is plain: due, unexpired, bound for a key of
        ``plain_targets`` and, where ``allowed`` is given, staged by a user it pairs with that
        target (DueMover.pair). One crossing."""
        java, receiver = self._java, source.java
        plain, pairs = plain_targets.java, None if allowed is None else allowed.java
        raw = self._channel.call(
            lambda: java.deliverDue(receiver, max_messages, timeout_ms, plain, pairs), what
        )
        return read_due_chunk(bytes(raw), decode)


def read_due_chunk(raw: bytes, decode: Decode[R]) -> DueChunk[R]:
    """DueMover.deliverDue's answer: ``n:i32`` then n early-by times (i32; QUARANTINED for
    poison), or for a negative n the -n records it handed back."""
    (n,) = _I32.unpack_from(raw, 0)
    if n < 0:
        return DueChunk(0, returned=_records(raw, 4, -n, decode)[0])
    if not n:
        return DueChunk(0)
    early_by = [d for d in struct.unpack_from(f">{n}i", raw, 4) if d != QUARANTINED]
    return DueChunk(n, early_by, n - len(early_by))


# ---------------------------------------------------------------------------- Spark's columns

_ARROW_HEAD = struct.Struct("<ii8x")  # status (-1: records follow), rows kept
_ARROW_LENGTH = struct.Struct("<i4x")
#: the buffers of a columnar answer, in the shim's order (ArrowColumns.BUFFERS)
ARROW_BUFFERS = 41


@dataclass
class Columns(Generic[R]):
    """One ArrowColumns answer: ``received`` messages taken off the queue or browsed (0: none
    came, or the browse's end), and either the ``rows`` kept as the buffers of the read
    schema's Arrow arrays (zero-copy views of the answer, in ArrowColumns.BUFFERS's order), or,
    where only Python renders a value exactly, the received messages themselves."""

    received: int
    rows: int = 0
    buffers: list[memoryview] | None = None
    messages: list[R] | None = None


class ArrowColumns:
    """A read's batches transposed into Arrow buffers in the JVM (org.pyjms.shim.spark.ArrowColumns),
    with the same poison, expiry and acknowledgement rules as any receive or browse."""

    def __init__(self) -> None:
        self._java = cast(JavaArrowColumnsClass, jvm.shim().jclass("org.pyjms.shim.spark.ArrowColumns"))

    def receive(
        self,
        channel: Channel,
        source: Receiver,
        max_messages: int,
        timeout_ms: int,
        duplicate_id_property: str,
        decode: Decode[R],
        what: str,
    ) -> Columns[R]:
        java, receiver = self._java, source.java
        raw = channel.call(
            lambda: java.receive(receiver, max_messages, timeout_ms, duplicate_id_property), what
        )
        return _told_of_poison(read_columns(bytes(raw), decode))

    def browse(
        self,
        channel: Channel,
        source: Browser,
        max_messages: int,
        duplicate_id_property: str,
        partition: int,
        partitions: int,
        decode: Decode[R],
        what: str,
    ) -> Columns[R]:
        java, browser = self._java, source.java
        raw = channel.call(
            lambda: java.browse(browser, max_messages, duplicate_id_property, partition, partitions), what
        )
        return _told_of_poison(read_columns(bytes(raw), decode))


def _told_of_poison(columns: Columns[R]) -> Columns[R]:
    """An answer with no message logs the poison the shim quarantined, as a receive does."""
    if columns.received == 0 and columns.messages is None:
        log_poison_notes()
    return columns


def read_columns(raw: bytes, decode: Decode[R]) -> Columns[R]:
    """ArrowColumns' answer: status and rows kept (little-endian i32 each, then 8 bytes of
    padding); for status -1 a batch of records from offset 4 instead; else ARROW_BUFFERS
    buffers, each its size (little-endian i32, 4 bytes of padding) and its bytes, padded to 8."""
    status, n = _ARROW_HEAD.unpack_from(raw, 0)
    if status < 0:
        (count,) = _I32.unpack_from(raw, 4)
        return Columns(count, messages=_records(raw, 8, count, decode)[0])
    if n == 0:
        return Columns(status)
    whole = memoryview(raw)
    buffers = []
    at = _ARROW_HEAD.size
    for _ in range(ARROW_BUFFERS):
        (size,) = _ARROW_LENGTH.unpack_from(raw, at)
        at += _ARROW_LENGTH.size
        buffers.append(whole[at : at + size])
        at += (size + 7) & ~7
    return Columns(status, n, buffers)
