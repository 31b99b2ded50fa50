"""Writing DataFrames to JMS destinations (batch and streaming): one transaction per task.

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
import struct
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import DataType, StringType

from pyjms.api.constants import DEFAULT_PRIORITY, PERSISTENT, SESSION_TRANSACTED
from pyjms.api.context import JMSContext
from pyjms.api.destination import Destination, from_key
from pyjms.api.message import TextMessage
from pyjms.api.message.properties import check_duplicate_id, check_property_name
from pyjms.bridge import codec as C
from pyjms.bridge.contract import DLQ_DETAIL, DUPLICATE_ID
from pyjms.dlq.header import MQFMT_NONE, MQFMT_STRING, DeadLetterHeader, destination_name, reason_for
from pyjms.errors import (
    DuplicateRejectedRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    TransactionInDoubtRuntimeException,
)
from pyjms.reasons import MQRC
from pyjms.rules import delivery as rules
from pyjms.spark.options import (
    JMSOptions,
    close_context,
    connection_factory,
    delivery_mode_value,
    destination_key,
)

try:  # PySpark >= 4.1
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriterBase

    _ARROW_STREAM_WRITER = True
except ImportError:  # pragma: no cover - PySpark 4.0 has only the row writer
    from pyspark.sql.datasource import DataSourceStreamWriter as _StreamWriterBase  # type: ignore[assignment]

    _ARROW_STREAM_WRITER = False

_log = logging.getLogger("pyjms.spark")

# what follows a row's destination key in a routed entry: delivery mode, priority, TTL, delay
_ROUTE = C.ROUTE
_LENGTH = struct.Struct(">i")
_NULL_TEXT = _LENGTH.pack(-1)  # a TextMessage with no text

#: PutApplName in the dead-letter header of a row this sink dead-letters
PUT_APPL_NAME = "pyjms.spark"
#: beside the header (pyjms.dlq.header: JMS_PYJMS_DLH_Reason, _DestQ, ...): the error itself,
#: naming the row and the values that broke the rule (pyjms.bridge.contract.DLQ_DETAIL)

_OPTIONAL = (
    "duplicate_id",
    "destination",
    "priority",
    "delivery_mode",
    "time_to_live",
    "delivery_delay",
    "correlation_id",
    "type",
    "reply_to",
    "properties",
)


@dataclass
class JMSCommitMessage(WriterCommitMessage):
    """What one task did. Spark hands these to the driver's commit/abort."""

    partition: int
    attempt: int
    sent: int = 0
    skipped: int = 0
    dead_lettered: int = 0
    #: the broker refused these rows as duplicates: an earlier attempt of the task committed them
    already_sent: int = 0
    #: how many times the task reconnected and resent its transaction
    resends: int = 0


#: the errors after which a task's transaction can only be resent whole: the connection failed
#: (so it was rolled back), or the commit's outcome is unknown
_CONNECTION_REASONS = (MQRC.CONNECTION_BROKEN, MQRC.Q_MGR_NOT_AVAILABLE)
#: how long a task waits between attempts to reach the broker again
_RECONNECT_PAUSE_S = 0.5


def _connection_lost(error: JMSRuntimeException) -> bool:
    return isinstance(error, TransactionInDoubtRuntimeException) or error.reason in _CONNECTION_REASONS


def _connect(options: JMSOptions, deadline: float | None = None) -> JMSContext:
    """A task's transacted context. While the broker cannot be reached (it may be restarting)
    the task keeps trying until ``deadline`` (time.monotonic), by default reconnectTimeout from now."""
    if deadline is None:
        deadline = time.monotonic() + options.reconnect_timeout / 1000.0
    while True:
        try:
            return connection_factory(options).create_context(SESSION_TRANSACTED)
        except JMSRuntimeException as e:
            if e.reason not in _CONNECTION_REASONS or time.monotonic() >= deadline:
                raise
        time.sleep(_RECONNECT_PAUSE_S)


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


class _PartitionSender:
    """One task's rows: checked, routed, batched, sent in one transaction."""

    def __init__(self, options: JMSOptions, columns: dict[str, DataType], write_id: str | None) -> None:
        tc = TaskContext.get()
        self.partition = tc.partitionId() if tc is not None else 0
        self.attempt = tc.attemptNumber() if tc is not None else 0
        # "<write>:<partition>:" + row index: the same for every attempt of this task
        self._id_prefix = None if write_id is None else f"spark:{write_id}:{self.partition}:"
        # the task's transaction as sent so far, to resend it whole (None: more than resendBuffer
        # rows, or a delayed row, which went through a JMSProducer: Spark retries the task instead)
        self._sent_records: list[bytes] | None = [] if options.resend_buffer > 0 else None
        self.already_sent = self.resends = 0
        self._o = options
        self._columns = columns
        self._kind = C.KIND_TEXT if isinstance(columns["body"], StringType) else C.KIND_BYTES
        self._keys: dict[str, bytes] = {}
        self._records: list[bytes] = []
        self._producer: Any = None  # for delayed rows, made on the first one
        self._destinations: dict[str, Destination] = {}
        self._row = 0
        self.sent = self.skipped = self.dead_lettered = 0
        self._first_skip: JMSRuntimeException | None = None
        self.ctx = _connect(options)

    # ------------------------------------------------------------------ rows

    def add(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        names = batch.schema.names
        if names == ["body"] and not self._o.delivery_delay:
            self._add_bodies(batch.column(0))
            return

        def column(name: str) -> Iterable[Any]:
            return batch.column(names.index(name)).to_pylist() if name in names else repeat(None, n)

        size = self._o.batch_size
        records = self._records
        for values in zip(column("body"), *(column(c) for c in _OPTIONAL), strict=True):
            row = self._row
            self._row += 1
            try:
                record = self._encode(row, *values)
                if record is not None:
                    records.append(record)
                self.sent += 1
            except JMSRuntimeException as e:
                self._invalid(row, e, values)
            if len(records) >= size:
                self.flush()
                records = self._records

    def _add_bodies(self, bodies: pa.Array) -> None:
        """The common case, rows with only a body and no delay: every send option comes from
        the options, which passed the rules when the job was planned, so no row can break one.
        Bodies stay UTF-8 bytes from Arrow to the JVM (a string column is cast to binary)."""
        o = self._o
        key = o.require_destination()
        prefix = self._route(key, o.delivery_mode, o.priority, o.time_to_live, None, None, None, None, {})[
            :-4
        ]  # the record for a null body, without the body
        length = _LENGTH.pack
        empty = b"" if self._kind == C.KIND_BYTES else _NULL_TEXT
        raw = (
            bodies.cast(pa.binary())
            if pa.types.is_string(bodies.type) or pa.types.is_large_string(bodies.type)
            else bodies
        )
        if self._id_prefix is None:
            self._records.extend(
                [prefix + (length(len(b)) + b if b is not None else empty) for b in raw.to_pylist()]
            )
        else:
            # the same record with the row's duplicate id, "<prefix><row>", as its one property:
            # the property block is packed once up to the id's length, and each row adds its
            # length and its number (packing a property map per row cost 1.9 us of 2.1)
            route, kind = prefix[:-2], prefix[-2]
            head = route + bytes((kind, C.FLAG_PROPERTIES))
            head += C.pack_properties({DUPLICATE_ID: (C.T_STRING, "")})[: -_LENGTH.size]
            ids = self._id_prefix.encode("utf-8")
            id_length = len(ids)
            self._records.extend(
                [
                    head
                    + length(id_length + len(number := str(row)))
                    + ids
                    + number.encode("ascii")
                    + (length(len(b)) + b if b is not None else empty)
                    for row, b in enumerate(raw.to_pylist(), self._row)
                ]
            )
        self.sent += len(bodies)
        self._row += len(bodies)
        if len(self._records) >= self._o.batch_size:
            self.flush()

    def _duplicate_id(self, row: int, given: str | None) -> str | None:
        if given is not None:
            return check_duplicate_id(given)
        return None if self._id_prefix is None else f"{self._id_prefix}{row}"

    def _encode(
        self,
        row: int,
        body: Any,
        duplicate_id: str | None,
        dest: str | None,
        priority: int | None,
        mode: Any,
        ttl: int | None,
        delay: int | None,
        correlation_id: str | None,
        jms_type: str | None,
        reply_to: str | None,
        properties: list[tuple[str, str | None]] | None,
    ) -> bytes | None:
        """A routed record for one row, after the same rules as JMSProducer's setters; a delayed
        row is sent at once through a JMSProducer (None is returned)."""
        o = self._o
        key = o.destination if dest is None else destination_key(dest, "destination")
        if key is None:
            raise InvalidDestinationRuntimeException(
                "the row has no destination and the option destination is not set",
                values={"destination": None},
            )
        priority = o.priority if priority is None else rules.check_priority(priority)
        mode = o.delivery_mode if mode is None else delivery_mode_value(mode)
        ttl = o.time_to_live if ttl is None else rules.check_time_to_live(ttl)
        delay = o.delivery_delay if delay is None else rules.check_delivery_delay(delay)
        rules.check_delay_within_ttl(delay, ttl)
        props = _string_properties(properties)
        key_of_row = self._duplicate_id(row, duplicate_id)
        if key_of_row is not None:
            props[DUPLICATE_ID] = (C.T_STRING, key_of_row)
        reply_key = None if reply_to is None else destination_key(reply_to, "reply_to")
        if delay:
            self._send_delayed(
                key, mode, priority, ttl, delay, body, correlation_id, jms_type, reply_key, props
            )
            return None
        return self._route(key, mode, priority, ttl, body, correlation_id, jms_type, reply_key, props)

    def _destination(self, key: str) -> Destination:
        d = self._destinations.get(key)
        if d is None:
            d = from_key(key)
            assert d is not None  # keys come from destination_key()
            self._destinations[key] = d
        return d

    def _send_delayed(
        self,
        key: str,
        mode: int,
        priority: int,
        ttl: int,
        delay: int,
        body: Any,
        correlation_id: str | None,
        jms_type: str | None,
        reply_key: str | None,
        props: dict[str, tuple[int, Any]],
    ) -> None:
        """One delayed row, the way JMSProducer sends a delayed message (its rules raise here)."""
        self._sent_records = None  # sent through a JMSProducer: not resendable from the records
        p = self._producer
        if p is None:
            p = self._producer = self.ctx.create_producer()
        p.set_delivery_delay(0)  # so that the TTL and the delay are checked as a pair below (D06)
        p.set_delivery_mode(mode).set_priority(priority).set_time_to_live(ttl).set_delivery_delay(delay)
        p.set_jms_correlation_id(correlation_id).set_jms_type(jms_type)
        p.set_jms_reply_to(None if reply_key is None else self._destination(reply_key))
        p.clear_properties()
        for name, (_, value) in props.items():
            p.set_string_property(name, value)
        if body is None:
            body = TextMessage(None) if self._kind == C.KIND_TEXT else b""
        p.send(self._destination(key), body)

    def _route(
        self,
        key: str,
        mode: int,
        priority: int,
        ttl: int,
        body: Any,
        correlation_id: str | None,
        jms_type: str | None,
        reply_key: str | None,
        props: dict[str, tuple[int, Any]],
    ) -> bytes:
        head = self._keys.get(key)
        if head is None:
            head = self._keys[key] = C.pack_string(key)
        has_headers = correlation_id is not None or jms_type is not None or reply_key is not None
        headers = C.pack_headers(correlation_id, jms_type, reply_key) if has_headers else b""
        if body is None and self._kind == C.KIND_BYTES:
            body = b""
        return (
            head
            + _ROUTE.pack(mode, priority, ttl, 0)  # no delay: delayed rows go through _send_delayed
            + C.pack_record(self._kind, body, headers, C.pack_properties(props) if props else b"")
        )

    def _invalid(self, row: int, error: JMSRuntimeException, values: tuple[Any, ...]) -> None:
        """A row that broke a rule: fail the task, skip the row, or dead-letter it (onInvalid)."""
        o = self._o
        if o.on_invalid == "fail":
            raise type(error)(
                f"row {row} of partition {self.partition}: {error.message}",
                error_code=error.error_code,
                reason=error.reason,
                values={**error.values, "row": row, "partition": self.partition},
            ) from None
        if o.on_invalid == "skip":
            self.skipped += 1
            self._first_skip = self._first_skip or error
            return
        body, duplicate_id, dest, *_, correlation_id, jms_type, reply_to, properties = values
        try:
            intended = o.destination if dest is None else destination_key(dest, "destination")
        except JMSRuntimeException:
            intended = dest
        try:
            reply_key = None if reply_to is None else destination_key(reply_to, "reply_to")
        except JMSRuntimeException:
            reply_key = None
        # IBM MQ's dead-letter header, as pyjms carries it, so that pyjms's DLQ handler (or
        # anyone reading DLH_Reason / DLH_DestQ) can deal with the row like any dead letter
        header = DeadLetterHeader.create(
            reason_for(error),
            destination_name(intended),
            put_appl_name=PUT_APPL_NAME,
            format=MQFMT_STRING if self._kind == C.KIND_TEXT else MQFMT_NONE,
        )
        props = {**_string_properties(properties, strict=False), **header.typed_properties()}
        props[DLQ_DETAIL] = (C.T_STRING, f"row {row} of partition {self.partition}: {error}")
        try:
            key_of_row = self._duplicate_id(row, duplicate_id)
        except JMSRuntimeException:
            key_of_row = self._duplicate_id(row, None)
        if key_of_row is not None:
            props[DUPLICATE_ID] = (C.T_STRING, key_of_row)
        # no delay and no TTL: the dead-letter queue keeps the row until someone looks at it
        self._records.append(
            self._route(
                o.dead_letter_queue or "",
                PERSISTENT,
                DEFAULT_PRIORITY,
                0,
                body,
                correlation_id,
                jms_type,
                reply_key,
                props,
            )
        )
        self.dead_lettered += 1

    # ------------------------------------------------------------------ the transaction

    def flush(self) -> None:
        """Sends what is pending, at most batchSize records per JVM crossing. If the connection
        fails, the transaction (rolled back with it) is resent whole on a new one."""
        records, self._records = self._records, []
        kept = self._sent_records
        if kept is not None:
            if len(kept) + len(records) <= self._o.resend_buffer:
                kept.extend(records)
            else:
                kept = self._sent_records = None  # too many rows to keep: Spark retries the task
        try:
            self._send(records)
        except JMSRuntimeException as e:
            if kept is None or not _connection_lost(e):
                raise
            self._resend(e, commit=False)

    def _send(self, records: list[bytes]) -> None:
        size, ctx = self._o.batch_size, self.ctx
        for at in range(0, len(records), size):
            ctx.send_routed(records[at : at + size])

    def commit(self) -> JMSCommitMessage:
        self.flush()
        try:
            self.ctx.commit()
        except DuplicateRejectedRuntimeException:
            self._committed_before()
        except JMSRuntimeException as e:
            if self._sent_records is None or not _connection_lost(e):
                raise
            self._resend(e, commit=True)
        if self.skipped:
            _log.warning(
                "partition %d skipped %d invalid rows (the first: %s)",
                self.partition,
                self.skipped,
                self._first_skip,
            )
        return JMSCommitMessage(
            self.partition,
            self.attempt,
            self.sent - self.already_sent,
            self.skipped,
            self.dead_lettered,
            self.already_sent,
            self.resends,
        )

    def _committed_before(self) -> None:
        """The broker refused the rows as duplicates: an earlier attempt committed them all."""
        self.already_sent = self.sent
        _log.warning(
            "partition %d (attempt %d): the broker already had these %d rows from an earlier "
            "attempt, which committed; nothing was sent twice",
            self.partition,
            self.attempt,
            self.sent,
        )

    def _resend(self, error: JMSRuntimeException, commit: bool) -> None:
        """After a failed connection or an in-doubt commit: the transaction's rows again, with
        the same duplicate ids, on a new connection, waiting up to reconnectTimeout for the
        broker; committed too if ``commit``. Raises the last error when the time is up."""
        assert self._sent_records is not None
        deadline = time.monotonic() + self._o.reconnect_timeout / 1000.0
        while True:
            _log.warning(
                "partition %d: %s; resending its %d rows on a new connection",
                self.partition,
                error,
                len(self._sent_records),
            )
            close_context(self.ctx, rollback=True)
            self._producer = None
            try:
                self.ctx = _connect(self._o, deadline)
                self.resends += 1
                self._send(self._sent_records)
                if commit:
                    self.ctx.commit()
                return
            except DuplicateRejectedRuntimeException:
                self._committed_before()
                return
            except JMSRuntimeException as e:
                if not _connection_lost(e) or time.monotonic() >= deadline:
                    raise
                error = e
            time.sleep(_RECONNECT_PAUSE_S)

    def close(self, rollback: bool) -> None:
        close_context(self.ctx, rollback)


def _string_properties(
    properties: list[tuple[str, str | None]] | None, strict: bool = True
) -> dict[str, tuple[int, Any]]:
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


def write_partition(
    options: JMSOptions,
    columns: dict[str, DataType],
    batches: Iterator[pa.RecordBatch],
    write_id: str | None = None,
) -> JMSCommitMessage:
    """Sends one task's rows and commits them, or rolls everything back if anything fails.
    ``write_id``: what the rows' duplicate ids start with (write_id_for_task), None for none."""
    sender = _PartitionSender(options, columns, write_id)
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
