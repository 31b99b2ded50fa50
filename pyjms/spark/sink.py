"""Writing DataFrames to JMS destinations (batch and streaming): one transaction per task.

Spark's Kafka connector gives each mode its own class, apart from the task's writer and the
row's encoding; so does this sink: JMSBatchWrite and JMSStreamingWrite here, on the driver;
one task's transaction in pyjms.spark.task_writer; a row as a routed record in
pyjms.spark.row_records.

Each Spark task (one partition of one job, or of one micro-batch) opens its own
SESSION_TRANSACTED context, checks every row against pyjms.rules.delivery, sends the rows in
routed batches (one JVM crossing per ``batchSize`` rows, each row with its own destination and
send options: ``JMSContext.send_routed``) and commits as the last thing the task does. A row with a
delivery delay is sent through a ``JMSProducer`` on the same context instead, so that it gets
exactly what the Python API does for a delayed message: the target checks (D05, D22, D23) and
the delay mechanism the factory probed (broker scheduler or IBM MQ's staging queue). Spark's
driver-side ``commit``/``abort`` run in another process and cannot reach a task's JMS session,
so the task's transaction is the unit of atomicity:

* a task that fails or is killed before its commit sends nothing: an exception rolls the
  transaction back, a dead worker's connection drops and the broker discards it. The attempt
  Spark retries therefore starts from a clean slate: no duplicate, nothing lost;
* a task that committed stays sent even if another task then fails the job (``abort`` logs
  how many rows that left on the destinations);
* every row carries a duplicate-detection id (Message.set_duplicate_id): the row's
  ``duplicate_id`` column, or else one made of the write (a batch write's id, or a streaming
  query's id and batch id), the partition and the row's index in it. So a retried attempt of a
  task resends its rows with the same ids. If the connection fails, or the commit's outcome is
  unknown (TransactionInDoubtRuntimeException), the task reconnects (for up to
  ``reconnectTimeout`` ms) and resends the whole transaction itself, from the rows it kept
  (up to ``resendBuffer`` rows; with more, or with delayed rows, the failure goes to Spark,
  which retries the task). Apache Artemis drops a resend of what was committed, by refusing
  the resend's commit (DuplicateRejectedRuntimeException), which tells the task that its rows
  were committed; ActiveMQ Classic keeps both copies and pyjms's receivers drop the resent one
  (pyjms.api.duplicates: within a bounded window, per process). A partition must give the same
  rows in the same order on a retry (as Spark's recomputation does), or carry its own
  ``duplicate_id`` column.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceArrowWriter
from pyspark.sql.types import DataType

from pyjms.spark.options import JMSOptions
from pyjms.spark.task_writer import JMSCommitMessage, write_partition

try:  # PySpark >= 4.1
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriterBase

    _ARROW_STREAM_WRITER = True
except ImportError:  # pragma: no cover - PySpark 4.0 has only the row writer
    from pyspark.sql.datasource import DataSourceStreamWriter as _StreamWriterBase  # type: ignore[assignment]

    _ARROW_STREAM_WRITER = False

_log = logging.getLogger("pyjms.spark")


def write_id_for_task(batch_write_id: str | None) -> str | None:
    """What a task's row ids start with, the same for every attempt of the task: a streaming
    query's id and micro-batch id (Spark's local properties), or else the batch write's id
    (made once, on the driver; None for a streaming write). None when neither is known: ids
    that were the same across micro-batches would make the broker drop new rows."""
    tc = TaskContext.get()
    query_id = tc.getLocalProperty("sql.streaming.queryId") if tc is not None else None
    batch_id = tc.getLocalProperty("streaming.sql.batchId") if tc is not None else None
    if query_id is not None and batch_id is not None:
        return f"{query_id}:{batch_id}"
    return batch_write_id


def _summary(messages: list[JMSCommitMessage | None]) -> str:
    done = [m for m in messages if m is not None]
    return (
        f"{sum(m.sent for m in done)} rows sent, {sum(m.skipped for m in done)} skipped, "
        f"{sum(m.dead_lettered for m in done)} dead-lettered by {len(done)} of {len(messages)} tasks"
    )


class JMSBatchWrite(DataSourceArrowWriter):
    """``df.write.format("jms")``: each task sends its partition in one JMS transaction."""

    def __init__(self, options: JMSOptions, columns: dict[str, DataType]) -> None:
        self.options = options
        self.columns = columns
        # made on the driver, once per write: every attempt of a task sees the same
        self.write_id = uuid.uuid4().hex

    def write(self, iterator: Iterator[pa.RecordBatch]) -> JMSCommitMessage:
        return write_partition(self.options, self.columns, iterator, write_id_for_task(self.write_id))

    def commit(self, messages: list[JMSCommitMessage | None]) -> None:  # type: ignore[override]
        _log.info("jms write committed: %s", _summary(messages))

    def abort(self, messages: list[JMSCommitMessage | None]) -> None:  # type: ignore[override]
        # failed tasks rolled back; a task that committed cannot be undone from here
        if any(m is not None for m in messages):
            _log.warning("jms write aborted, but tasks that committed stay sent: %s", _summary(messages))


class JMSStreamingWrite(_StreamWriterBase):
    """``df.writeStream.format("jms")``: the batch guarantees, for each micro-batch's tasks.

    A micro-batch that Spark replays after a restart (its tasks committed, its commit log entry
    never written) is sent again: across restarts the sink is at-least-once.
    """

    def __init__(self, options: JMSOptions, columns: dict[str, DataType]) -> None:
        self.options = options
        self.columns = columns

    def write(self, iterator: Iterator[Any]) -> JMSCommitMessage:
        if not _ARROW_STREAM_WRITER:  # pragma: no cover - PySpark 4.0 hands over Rows
            rows = [r.asDict() for r in iterator]
            iterator = iter([pa.RecordBatch.from_pylist(rows)] if rows else [])
        return write_partition(self.options, self.columns, iterator, write_id_for_task(None))

    def commit(self, messages: list[JMSCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        _log.info("jms stream batch %d committed: %s", batchId, _summary(messages))

    def abort(self, messages: list[JMSCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        if any(m is not None for m in messages):
            _log.warning(
                "jms stream batch %d aborted, but tasks that committed stay sent: %s",
                batchId,
                _summary(messages),
            )
