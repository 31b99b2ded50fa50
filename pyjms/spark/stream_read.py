"""Reading a queue as a stream (``spark.readStream.format("jms")``): at-least-once.

A queue cannot replay: a message is either still on it or gone. So the messages of a
micro-batch stay in an open JMS transaction until Spark has finished that micro-batch, and
only then are they removed. PySpark runs a stream reader's planning methods (``latestOffset``,
``partitions``, ``commit``) in one long-lived Python process on the driver, which is where the
consuming happens: one SESSION_TRANSACTED session with one consumer, receiving a batch's
messages in ``latestOffset`` and shipping their records to the executors inside the input
partitions (``read`` only decodes, it needs no connection and no JVM).

Offsets are ``{"received": n}``, the number of messages this query has taken so far.

When does a batch commit? ``commit(end)`` runs one batch late in Spark: only when the
*next* batch is planned, after ``latestOffset`` was already called for it (and for the
query's last batch, not in that run at all). But Spark calls ``latestOffset(start)`` for batch
k+1 only after batch k ran and its sink committed, with ``start`` = batch k's end offset. So
``latestOffset`` commits every batch that ends at or before ``start`` first, then receives
the next one; ``commit(end)`` does the same if it comes first. One session therefore holds at
most one uncommitted batch, and its consumer stays open, so no message sits prefetched in a
closed consumer waiting for a transaction to end.

Guarantees:

* a batch's messages leave the queue only after Spark committed that batch to the sink;
* if the query fails or stops, ``stop()`` closes the session: the broker puts the messages of
  the uncommitted batch back on the queue (redelivered, delivery count + 1);
* on restart from a checkpoint, Spark first replays a batch that is in its offset log but not
  its commit log: the new process holds no messages for it, so ``partitions`` receives as many
  messages as the batch had (normally those put back, which come first; fewer if fewer are
  there within receiveTimeout). A batch whose sink committed but whose queue commit did not
  happen (crash in between) is delivered again: duplicates are possible, loss is not. Make
  the sink idempotent (e.g. by message_id) for effectively-once results;
* ``trigger(availableNow=True)``: the source reads only messages stamped no later than the
  moment the query started (``JMSTimestamp <= t`` is added to the selector, so delayed
  messages that fall due later wait for the next run) and ends when none is left; every batch
  of the run, the last included, is committed before the query returns.

Options: ``maxMessagesPerTrigger`` bounds a batch (Spark's ReadMaxRows); ``receiveTimeout``
is how long planning waits for the first message of a batch; ``numPartitions`` splits a
batch's records over that many tasks. Batches travel from the driver to the executors, so
keep them to what the driver can hold (``maxMessagesPerTrigger``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from pyjms.api.bulk import iter_received, pack_received, received_bytes
from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.destination import from_key
from pyjms.api.expiry import is_expired, now_ms
from pyjms.api.message import Message
from pyjms.errors import JMSRuntimeException
from pyjms.spark.options import JMSOptions, connection_factory
from pyjms.spark.schema import ArrowRows

try:  # PySpark >= 4.2: admission control and Trigger.AvailableNow for Python sources
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )
except ImportError:  # pragma: no cover
    ReadAllAvailable = ReadMaxRows = None  # type: ignore[assignment, misc]

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        pass


_log = logging.getLogger("pyjms.spark")
#: once a batch has its first message, how long to wait for each further burst (ms)
_TRICKLE_MS = 50
#: a batch with no bound still stops somewhere: it has to fit in the driver's memory
_DEFAULT_BATCH_BOUND = 100_000


class JMSStreamPartition(InputPartition):
    """Part of a micro-batch: ``count`` received messages, packed as one bytes (pyjms.api.bulk.pack_received)."""

    def __init__(self, records: bytes, count: int) -> None:
        super().__init__(count)
        self.records = records
        self.count = count


@dataclass
class _Batch:
    start: int
    end: int
    records: list[bytes]


class JMSMicroBatchStream(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming source. Everything but ``read`` runs in Spark's driver-side Python runner."""

    def __init__(self, options: JMSOptions, schema: StructType) -> None:
        self.options = options
        self.queue_key = options.require_queue()
        self.schema = schema
        self._ctx: Any = None  # opened on first use, in the runner process (never pickled)
        self._consumer: Any = None
        self._pending: _Batch | None = None  # the one uncommitted batch
        self._position = 0  # offset reached, for PySpark < 4.2 (latestOffset without start)
        self._until: int | None = None  # Trigger.AvailableNow: messages stamped up to here

    def __getstate__(self) -> dict[str, Any]:
        # PySpark pickles the reader to ship read() to the executors: no JVM objects with it
        return {**self.__dict__, "_ctx": None, "_consumer": None, "_pending": None}

    # ------------------------------------------------------------------ offsets

    def initialOffset(self) -> dict[str, Any]:
        return {"received": 0}

    def getDefaultReadLimit(self) -> Any:
        n = self.options.max_messages_per_trigger
        return ReadMaxRows(n) if n else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._until = now_ms()

    def latestOffset(self, start: dict[str, Any] | None = None, limit: Any = None) -> dict[str, Any]:
        s = self._position if start is None else int(start["received"])
        # Spark plans batch k+1 only after batch k ran and its sink committed: take k off the queue
        self._commit_through(s)
        if self._pending is not None and self._pending.start == s:
            return {"received": self._pending.end}  # asked again for the batch already taken
        self._rollback()  # a batch Spark never planned (cannot happen in one run; be safe)
        records = self._receive(self._bound(limit), self.options.receive_timeout)
        if not records:
            return {"received": s}
        self._pending = _Batch(s, s + len(records), records)
        self._position = self._pending.end
        return {"received": self._pending.end}

    def _bound(self, limit: Any) -> int:
        """Spark's ReadMaxRows; otherwise (ReadAllAvailable) still what the driver can hold."""
        if ReadMaxRows is not None and isinstance(limit, ReadMaxRows):
            return max(1, int(limit.max_rows))
        return self.options.max_messages_per_trigger or _DEFAULT_BATCH_BOUND

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        s, e = int(start["received"]), int(end["received"])
        if e <= s:
            return []
        batch = self._pending
        if batch is None or (batch.start, batch.end) != (s, e):
            # a replay after a restart: this process never received the batch. The old session
            # died with the old driver, so its messages are back on the queue: take as many.
            self._commit_through(s)
            self._rollback()
            records = self._receive(e - s, self.options.receive_timeout)
            batch = self._pending = _Batch(s, e, records)
            if len(records) < e - s:
                _log.warning(
                    "replaying batch %d..%d of %s: only %d messages were there",
                    s,
                    e,
                    self.queue_key,
                    len(records),
                )
        parts = max(1, min(self.options.num_partitions, len(batch.records)))
        chunks = [batch.records[i::parts] for i in range(parts)]
        return [JMSStreamPartition(pack_received(chunk), len(chunk)) for chunk in chunks if chunk]

    def read(self, partition: JMSStreamPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        # runs on an executor: decoding only, the messages came with the partition
        rows = ArrowRows(self.schema)
        size = self.options.batch_size
        chunk: list[Message] = []
        for m in iter_received(partition.records):
            chunk.append(m)
            if len(chunk) >= size:
                batch = rows.batch(chunk)
                chunk = []
                if batch is not None:
                    yield batch
        batch = rows.batch(chunk)
        if batch is not None:
            yield batch

    def commit(self, end: dict[str, Any]) -> None:
        self._commit_through(int(end["received"]))

    def stop(self) -> None:
        """The query ended: an uncommitted batch goes back to the queue."""
        try:
            self._rollback()
        finally:
            if self._ctx is not None:
                ctx, self._ctx, self._consumer = self._ctx, None, None
                ctx.close()

    # ------------------------------------------------------------------ the session

    def _session(self) -> Any:
        if self._ctx is None:
            o = self.options
            selector = o.message_selector
            if self._until is not None:
                bound = f"JMSTimestamp <= {self._until}"
                selector = f"({selector}) AND {bound}" if selector else bound
            self._ctx = connection_factory(o).create_context(SESSION_TRANSACTED)
            self._consumer = self._ctx.create_consumer(from_key(self.queue_key), selector)
        return self._consumer

    def _receive(self, bound: int, wait_ms: int) -> list[bytes]:
        """Up to ``bound`` unexpired messages as raw records, in the open transaction."""
        consumer = self._session()
        out: list[bytes] = []
        now = now_ms()
        while len(out) < bound:
            messages = consumer.receive_batch(
                min(self.options.batch_size, bound - len(out)), wait_ms if not out else _TRICKLE_MS
            )
            if not messages:
                break
            for m in messages:
                # an expired message is consumed with the batch and never shown (IBM MQ discards on get)
                if not is_expired(m.get_jms_expiration(), now):
                    out.append(received_bytes(m))
        if not out:
            self._ctx.commit()  # nothing to deliver; anything taken had expired
        return out

    def _commit_through(self, offset: int) -> None:
        batch = self._pending
        if batch is not None and batch.end <= offset:
            self._ctx.commit()
            self._pending = None

    def _rollback(self) -> None:
        if self._pending is not None and self._ctx is not None:
            self._pending = None
            try:
                self._ctx.rollback()
            except JMSRuntimeException:
                pass  # a dead connection has discarded the transaction already
