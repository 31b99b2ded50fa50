"""Writing DataFrames to JMS destinations (batch and streaming): one transaction per task.

Each Spark task (one partition of one job, or of one micro-batch) opens its own
SESSION_TRANSACTED context, checks every row against pyjms.rules.delivery, sends the rows in
routed batches (one JVM crossing per ``batchSize`` rows, each row with its own destination and
send options: ``Channel.sendRouted``) and commits as the last thing the task does. Spark's
driver-side ``commit``/``abort`` run in another process and cannot reach a task's JMS session,
so the task's transaction is the unit of atomicity:

* a task that fails or is killed before its commit sends nothing: an exception rolls the
  transaction back, a dead worker's connection drops and the broker discards it. The attempt
  Spark retries therefore starts from a clean slate: no duplicate, nothing lost;
* a task that committed stays sent even if another task then fails the job (``abort`` logs
  how many rows that left on the destinations);
* the one window for a duplicate is a task whose commit succeeded but whose result never
  reached the driver (its executor lost in that instant), or speculative execution running
  two attempts of one partition: keep ``spark.speculation`` off (its default) for this sink.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Iterable, Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import DataType, StringType

from pyjms.api.constants import DEFAULT_PRIORITY, PERSISTENT, SESSION_TRANSACTED
from pyjms.api.message import check_property_name
from pyjms.bridge import codec as C
from pyjms.bridge.errors import translate
from pyjms.errors import InvalidDestinationRuntimeException, JMSRuntimeException
from pyjms.rules import delivery as rules
from pyjms.spark.options import JMSOptions, connection_factory, delivery_mode_value, destination_key

try:  # PySpark >= 4.1
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriterBase

    _ARROW_STREAM_WRITER = True
except ImportError:  # pragma: no cover - PySpark 4.0 has only the row writer
    from pyspark.sql.datasource import DataSourceStreamWriter as _StreamWriterBase

    _ARROW_STREAM_WRITER = False

_log = logging.getLogger("pyjms.spark")

# what follows a row's destination key in Channel.sendRouted: delivery mode, priority, TTL, delay
_ROUTE = struct.Struct(">iiqq")

#: properties of a row sent to deadLetterQueue (the facts IBM MQ's dead-letter header carries)
DLQ_REASON = "JMS_PYJMS_DLQReason"  # the MQRC of the broken rule (0 where IBM MQ defines none)
DLQ_DESTINATION = "JMS_PYJMS_DLQDestination"  # where the row was going, as a destination key
DLQ_DETAIL = "JMS_PYJMS_DLQDetail"  # the error, naming the values that broke the rule

_OPTIONAL = ("destination", "priority", "delivery_mode", "time_to_live", "delivery_delay",
             "correlation_id", "type", "reply_to", "properties")


@dataclass
class JMSCommitMessage(WriterCommitMessage):
    """What one task did. Spark hands these to the driver's commit/abort."""

    partition: int
    attempt: int
    sent: int = 0
    skipped: int = 0
    dead_lettered: int = 0


class _PartitionSender:
    """One task's rows: checked, routed, batched, sent in one transaction."""

    def __init__(self, options: JMSOptions, columns: dict[str, DataType]) -> None:
        from pyspark import TaskContext

        tc = TaskContext.get()
        self.partition = tc.partitionId() if tc is not None else 0
        self.attempt = tc.attemptNumber() if tc is not None else 0
        self._o = options
        self._columns = columns
        self._kind = C.KIND_TEXT if isinstance(columns["body"], StringType) else C.KIND_BYTES
        self._keys: dict[str, bytes] = {}
        self._records: list[bytes] = []
        self._delayed = False  # whether the pending batch holds a delayed row
        self._delay_flag: int | None = None  # probed on the first delayed row only
        self._row = 0
        self.sent = self.skipped = self.dead_lettered = 0
        self._first_skip: JMSRuntimeException | None = None
        self.ctx = connection_factory(options).create_context(SESSION_TRANSACTED)

    # ------------------------------------------------------------------ rows

    def add(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        names = batch.schema.names

        def column(name: str) -> Iterable[Any]:
            return batch.column(names.index(name)).to_pylist() if name in names else repeat(None, n)

        size = self._o.batch_size
        records = self._records
        for values in zip(column("body"), *(column(c) for c in _OPTIONAL)):
            row = self._row
            self._row += 1
            try:
                records.append(self._encode(*values))
                self.sent += 1
            except JMSRuntimeException as e:
                self._invalid(row, e, values)
            if len(records) >= size:
                self.flush()
                records = self._records

    def _encode(self, body: Any, dest: str | None, priority: int | None, mode: Any, ttl: int | None,
                delay: int | None, correlation_id: str | None, jms_type: str | None, reply_to: str | None,
                properties: list[tuple[str, str | None]] | None) -> bytes:
        """A routed record for one row, after the same rules as JMSProducer's setters and send."""
        o = self._o
        key = o.destination if dest is None else destination_key(dest, "destination")
        if key is None:
            raise InvalidDestinationRuntimeException(
                "the row has no destination and the option destination is not set", values={"destination": None})
        priority = o.priority if priority is None else rules.check_priority(priority)
        mode = o.delivery_mode if mode is None else delivery_mode_value(mode)
        ttl = o.time_to_live if ttl is None else rules.check_time_to_live(ttl)
        delay = o.delivery_delay if delay is None else rules.check_delivery_delay(delay)
        rules.check_delay_within_ttl(delay, ttl)
        props = _string_properties(properties)
        if delay:
            rules.check_delayed_message(delay, {k: v for k, (_, v) in props.items()})
            self._require_delay(delay)
        reply_key = None if reply_to is None else destination_key(reply_to, "reply_to")
        return self._route(key, mode, priority, ttl, delay, body, correlation_id, jms_type, reply_key, props)

    def _route(self, key: str, mode: int, priority: int, ttl: int, delay: int, body: Any,
               correlation_id: str | None, jms_type: str | None, reply_key: str | None,
               props: dict[str, tuple[int, Any]]) -> bytes:
        head = self._keys.get(key)
        if head is None:
            head = self._keys[key] = C.pack_string(key)
        has_headers = correlation_id is not None or jms_type is not None or reply_key is not None
        headers = C.pack_headers(correlation_id, jms_type, reply_key) if has_headers else b""
        if body is None and self._kind == C.KIND_BYTES:
            body = b""
        return (head + _ROUTE.pack(mode, priority, ttl, delay)
                + C.pack_record(self._kind, body, headers, C.pack_properties(props) if props else b""))

    def _require_delay(self, delay: int) -> None:
        if self._delay_flag is None:
            self._delay_flag = self.ctx._delay_mechanism().send_flag  # probed once per worker process
        if not self._delay_flag:
            raise rules.delay_not_supported(delay, self.ctx.provider_name)
        self._delayed = True

    def _invalid(self, row: int, error: JMSRuntimeException, values: tuple[Any, ...]) -> None:
        """A row that broke a rule: fail the task, skip the row, or dead-letter it (onInvalid)."""
        o = self._o
        if o.on_invalid == "fail":
            raise type(error)(
                f"row {row} of partition {self.partition}: {error.message}",
                error_code=error.error_code, reason=error.reason,
                values={**error.values, "row": row, "partition": self.partition},
            ) from None
        if o.on_invalid == "skip":
            self.skipped += 1
            self._first_skip = self._first_skip or error
            return
        body, dest, *_, correlation_id, jms_type, reply_to, properties = values
        try:
            intended = o.destination if dest is None else destination_key(dest, "destination")
        except JMSRuntimeException:
            intended = dest
        try:
            reply_key = None if reply_to is None else destination_key(reply_to, "reply_to")
        except JMSRuntimeException:
            reply_key = None
        props = {k: v for k, v in _string_properties(properties, strict=False).items()}
        props[DLQ_REASON] = (C.T_INT, error.reason or 0)
        props[DLQ_DESTINATION] = (C.T_STRING, intended or "")
        props[DLQ_DETAIL] = (C.T_STRING, f"row {row} of partition {self.partition}: {error}")
        # no delay and no TTL: the dead-letter queue keeps the row until someone looks at it
        self._records.append(self._route(o.dead_letter_queue or "", PERSISTENT, DEFAULT_PRIORITY, 0, 0, body,
                                         correlation_id, jms_type, reply_key, props))
        self.dead_lettered += 1

    # ------------------------------------------------------------------ the transaction

    def flush(self) -> None:
        records = self._records
        if not records:
            return
        flags = self._delay_flag if self._delayed and self._delay_flag else 0
        ctx = self.ctx
        try:
            ctx._ch.sendRouted(C.pack_batch(records, len(records)), flags)  # one JVM crossing
        except ctx._s.JException as e:
            raise translate(e, f"send of {len(records)} rows of partition {self.partition}") from None
        self._records = []
        self._delayed = False

    def commit(self) -> JMSCommitMessage:
        self.flush()
        self.ctx.commit()
        if self.skipped:
            _log.warning("partition %d skipped %d invalid rows (the first: %s)", self.partition, self.skipped,
                         self._first_skip)
        return JMSCommitMessage(self.partition, self.attempt, self.sent, self.skipped, self.dead_lettered)

    def close(self, rollback: bool) -> None:
        try:
            if rollback:
                self.ctx.rollback()
        except JMSRuntimeException:
            pass  # the connection may be what failed; closing it discards the transaction anyway
        finally:
            try:
                self.ctx.close()
            except JMSRuntimeException:
                if not rollback:
                    raise


def _string_properties(properties: list[tuple[str, str | None]] | None,
                       strict: bool = True) -> dict[str, tuple[int, Any]]:
    """A properties map<string,string> as JMS String properties (null values are left unset)."""
    out: dict[str, tuple[int, Any]] = {}
    for name, value in properties or ():
        if value is None:
            continue
        try:
            check_property_name(name)
        except JMSRuntimeException:
            if strict:
                raise
            continue  # dead-lettering: keep what can be kept
        out[name] = (C.T_STRING, value)
    return out


def write_partition(options: JMSOptions, columns: dict[str, DataType],
                    batches: Iterator[pa.RecordBatch]) -> JMSCommitMessage:
    """Sends one task's rows and commits them, or rolls everything back if anything fails."""
    sender = _PartitionSender(options, columns)
    committed = False
    try:
        for batch in batches:
            sender.add(batch)
        result = sender.commit()
        committed = True
        return result
    finally:
        sender.close(rollback=not committed)


def _summary(messages: list[JMSCommitMessage | None]) -> str:
    done = [m for m in messages if m is not None]
    return (f"{sum(m.sent for m in done)} rows sent, {sum(m.skipped for m in done)} skipped, "
            f"{sum(m.dead_lettered for m in done)} dead-lettered by {len(done)} of {len(messages)} tasks")


class JMSBatchWrite(DataSourceArrowWriter):
    """``df.write.format("jms")``: each task sends its partition in one JMS transaction."""

    def __init__(self, options: JMSOptions, columns: dict[str, DataType]) -> None:
        self.options = options
        self.columns = columns

    def write(self, iterator: Iterator[pa.RecordBatch]) -> JMSCommitMessage:
        return write_partition(self.options, self.columns, iterator)

    def commit(self, messages: list[JMSCommitMessage | None]) -> None:  # type: ignore[override]
        _log.info("jms write committed: %s", _summary(messages))

    def abort(self, messages: list[JMSCommitMessage | None]) -> None:  # type: ignore[override]
        # failed tasks rolled back; a task that committed cannot be undone from here
        if any(m is not None for m in messages):
            _log.warning("jms write aborted, but tasks that committed stay sent: %s", _summary(messages))


class JMSStreamingWrite(_StreamWriterBase):  # type: ignore[misc, valid-type]
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
        return write_partition(self.options, self.columns, iterator)

    def commit(self, messages: list[JMSCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        _log.info("jms stream batch %d committed: %s", batchId, _summary(messages))

    def abort(self, messages: list[JMSCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        if any(m is not None for m in messages):
            _log.warning("jms stream batch %d aborted, but tasks that committed stay sent: %s", batchId,
                         _summary(messages))
