"""Reading a queue into a DataFrame: ``mode=browse`` (the default) or ``mode=consume``.

Both read ``numPartitions`` partitions, each in its own Spark task with its own connection.

browse
    A non-destructive look (QueueBrowser). Every partition browses the queue and keeps the
    messages whose message id hashes to it, so each message present throughout the read
    appears exactly once; messages that come or go while it runs may or may not appear, as
    with any JMS browser. ActiveMQ brokers show a browser at most ``maxBrowsePageSize``
    messages (400 unless the broker's destination policy raises it).

consume
    A destructive read: the partitions are competing consumers, each in one session that
    removes what it read all at once (a transaction, or a CLIENT_ACKNOWLEDGE session
    acknowledged once, whichever the provider does faster: ProviderPlugin.bulk_read_context).
    PySpark's batch reader API has no commit callback (neither per job nor per task), so a
    partition commits (or acknowledges) when Spark has taken its last row, i.e. when the
    iterator is exhausted. Until then nothing is removed: if the task fails while the partition
    is still being read (in the read itself or anywhere downstream in the same task, since Spark
    streams the partition through it), the session closes without committing and every message
    stays on the queue (redelivered, delivery count + 1). What fails after a partition finished (a later stage,
    another task, the job's output commit) cannot un-consume it. For delivery that is
    acknowledged only after the sink committed, read with ``readStream`` and
    ``trigger(availableNow=True)``: see pyjms.spark.stream_read.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from pyjms.api.constants import AUTO_ACKNOWLEDGE
from pyjms.api.destination import Queue, from_key
from pyjms.api.duplicates import DuplicateWindow, duplicate_id_of
from pyjms.api.message import Message
from pyjms.api.observers import consumer_observers
from pyjms.spark.arrow_columns import ArrowColumnReader
from pyjms.spark.options import JMSOptions, close_context, connection_factory
from pyjms.spark.schema import ArrowRows


class JMSPartition(InputPartition):
    """Partition ``index`` of ``count``; reads at most ``limit`` messages (None: no bound)."""

    def __init__(self, index: int, count: int, limit: int | None) -> None:
        super().__init__(index)
        self.index = index
        self.count = count
        self.limit = limit


def _limits(total: int | None, parts: int) -> list[int | None]:
    """maxMessages spread over the partitions (the first ones take the remainder)."""
    if total is None:
        return [None] * parts
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


class _JMSBatchRead(DataSourceReader):
    """What both modes share: options, schema, partitions. Holds no connection: it is pickled
    on the driver and read() opens its own connection in the executor's Python worker."""

    def __init__(self, options: JMSOptions, schema: StructType) -> None:
        self.options = options
        self.queue_key = options.require_queue()
        self.schema = schema

    def partitions(self) -> list[InputPartition]:
        n = self.options.num_partitions
        return [JMSPartition(i, n, limit) for i, limit in enumerate(_limits(self.options.max_messages, n))]

    def _queue(self) -> Queue:
        q = from_key(self.queue_key)
        assert isinstance(q, Queue)
        return q


class JMSBrowseBatch(_JMSBatchRead):
    """``mode=browse``: a snapshot that removes nothing."""

    def read(self, partition: JMSPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        rows = ArrowRows(self.schema)
        if partition.limit == 0:
            return
        columns = ArrowColumnReader(rows)
        taken = 0
        # a browser shows every copy on the queue: a resent one (the same duplicate id with
        # another message id, pyjms.api.duplicates) is left out, as a consumer would drop it
        seen = DuplicateWindow()

        def is_resend_by_ids(duplicate_id: str, message_id: str | None) -> bool:
            return seen.is_resend(self.queue_key, duplicate_id, message_id)

        with (
            connection_factory(self.options).create_context(AUTO_ACKNOWLEDGE) as ctx,
            # sent a batch ahead: the broker keeps sending while Python and Spark take one
            ctx.create_browser(
                self._queue(), self.options.message_selector, read_ahead=self.options.batch_size
            ) as browser,
        ):
            while True:
                # the shim keeps only this partition's rows (owner_of, computed in the JVM)
                got = columns.browse(browser, self.options.batch_size, partition.index, partition.count)
                if got.received == 0:
                    return  # the end of the queue
                if got.messages is not None:
                    batch = rows.batch(self._browsed(got.messages, partition, is_resend_by_ids))
                else:
                    batch = got.without_resends(is_resend_by_ids)
                if batch is None:
                    continue
                taken += batch.num_rows
                yield _head(batch, partition.limit, taken)
                if partition.limit is not None and taken >= partition.limit:
                    return

    @staticmethod
    def _browsed(
        messages: list[Message], partition: JMSPartition, is_resend_by_ids: Callable[[str, str | None], bool]
    ) -> list[Message]:
        """The messages of a batch the shim handed back as messages that this partition keeps."""
        kept = []
        for m in messages:
            duplicate_id = duplicate_id_of(m)
            if partition.count > 1 and owner_of(m, duplicate_id, partition.count) != partition.index:
                continue
            if duplicate_id is not None and is_resend_by_ids(
                duplicate_id, m.wire_headers().get("message_id")
            ):
                continue
            kept.append(m)
        return kept


def owner_of(m: Message, duplicate_id: str | None, partitions: int) -> int:
    """Which partition keeps a browsed message: a hash of its duplicate id (so that every copy
    of a resent message meets in one partition), or else of its message id; the same in every
    process (org.pyjms.shim.spark.ArrowColumns computes it alike)."""
    mid = duplicate_id if duplicate_id is not None else m.get_jms_message_id()
    return zlib.crc32(mid.encode("utf-8", "surrogatepass")) % partitions if mid else 0


def _head(batch: pa.RecordBatch, limit: int | None, taken: int) -> pa.RecordBatch:
    """The batch without the rows that would take the partition past its limit."""
    if limit is None or taken <= limit:
        return batch
    return batch.slice(0, batch.num_rows - (taken - limit))


class JMSConsumeBatch(_JMSBatchRead):
    """``mode=consume``: competing consumers, each removing what it read when its partition is
    done (a commit or an acknowledgement: the provider's bulk_read_context)."""

    def read(self, partition: JMSPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        rows = ArrowRows(self.schema)
        if partition.limit == 0:
            return
        o = self.options
        factory = connection_factory(o)
        ctx = factory.provider.bulk_read_context(factory)
        committed = False
        try:
            consumer = ctx.create_consumer(self._queue(), o.message_selector)
            # the JVM builds the Arrow columns; consumer observers hear of Message objects
            columns = None if consumer_observers() else ArrowColumnReader(rows)
            left = partition.limit
            while left is None or left > 0:
                want = o.batch_size if left is None else min(o.batch_size, left)
                if columns is None:
                    messages = consumer.receive_batch(want, o.receive_timeout)
                    taken = len(messages)
                    batch = rows.batch(messages)  # expired ones are consumed but never shown
                else:
                    got = columns.receive(consumer, want, o.receive_timeout)
                    taken = got.received
                    if got.messages is not None:
                        batch = rows.batch([m for m in got.messages if not consumer.is_resend(m)])
                    else:
                        batch = got.without_resends(consumer.is_resend_by_ids)
                if not taken:
                    break  # nothing more within receiveTimeout: the queue is drained for us
                if left is not None:
                    left -= taken
                if batch is not None:
                    yield batch
            # Spark has taken every row of this partition: the earliest moment we may commit
            if ctx.get_transacted():
                consumer.close()  # what it holds unread goes back first
                ctx.commit()
            else:
                ctx.acknowledge()  # what this session consumed, not what it holds unread
                consumer.close()
            committed = True
        finally:
            close_context(ctx, rollback=not committed)
