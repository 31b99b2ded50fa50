"""One Spark task of a write: its rows sent in one JMS transaction, committed as its last step.

The task's context is SESSION_TRANSACTED. Rows become routed records (pyjms.spark.row_records)
sent ``batchSize`` at a time, one JVM crossing each; a delayed row goes through a JMSProducer
on the same context. A row that breaks a rule fails the task, is skipped or is dead-lettered
(onInvalid). If the connection fails or the commit's outcome is unknown, the task reconnects
and resends its whole transaction from the records it kept (resendBuffer), with the same
duplicate ids. What the task did goes back to the driver as a JMSCommitMessage.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import WriterCommitMessage
from pyspark.sql.types import DataType

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.context import JMSContext
from pyjms.api.destination import Destination, from_key
from pyjms.api.message import TextMessage
from pyjms.api.property_types import KIND_TEXT
from pyjms.errors import (
    DuplicateRejectedRuntimeException,
    JMSRuntimeException,
    TransactionInDoubtRuntimeException,
)
from pyjms.reasons import MQRC
from pyjms.spark.options import JMSOptions, close_context, connection_factory
from pyjms.spark.row_records import OPTIONAL_COLUMNS, DelayedRow, RowEncoder

_log = logging.getLogger("pyjms.spark")


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


class _PartitionSender:
    """One task's rows: checked, routed, batched, sent in one transaction."""

    def __init__(self, options: JMSOptions, columns: dict[str, DataType], write_id: str | None) -> None:
        tc = TaskContext.get()
        self.partition = tc.partitionId() if tc is not None else 0
        self.attempt = tc.attemptNumber() if tc is not None else 0
        # "<write>:<partition>:" + row index: the same for every attempt of this task
        id_prefix = None if write_id is None else f"spark:{write_id}:{self.partition}:"
        # the task's transaction as sent so far, to resend it whole (None: more than resendBuffer
        # rows, or a delayed row, which went through a JMSProducer: Spark retries the task instead)
        self._sent_records: list[bytes] | None = [] if options.resend_buffer > 0 else None
        self.already_sent = self.resends = 0
        self._o = options
        self._encoder = RowEncoder(options, columns, id_prefix)
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
        for values in zip(column("body"), *(column(c) for c in OPTIONAL_COLUMNS), strict=True):
            row = self._row
            self._row += 1
            try:
                record = self._encoder.encode(row, *values)
                if isinstance(record, DelayedRow):
                    self._send_delayed(record)
                else:
                    records.append(record)
                self.sent += 1
            except JMSRuntimeException as e:
                self._invalid(row, e, values)
            if len(records) >= size:
                self.flush()
                records = self._records

    def _add_bodies(self, bodies: pa.Array) -> None:
        """The common case, rows with only a body and no delay (RowEncoder.bodies)."""
        self._records.extend(self._encoder.bodies(bodies, self._row))
        self.sent += len(bodies)
        self._row += len(bodies)
        if len(self._records) >= self._o.batch_size:
            self.flush()

    def _destination(self, key: str) -> Destination:
        d = self._destinations.get(key)
        if d is None:
            d = from_key(key)
            assert d is not None  # keys come from destination_key()
            self._destinations[key] = d
        return d

    def _send_delayed(self, row: DelayedRow) -> None:
        """One delayed row, the way JMSProducer sends a delayed message (its rules raise here)."""
        self._sent_records = None  # sent through a JMSProducer: not resendable from the records
        p = self._producer
        if p is None:
            p = self._producer = self.ctx.create_producer()
        p.set_delivery_delay(0)  # so that the TTL and the delay are checked as a pair below (D06)
        p.set_delivery_mode(row.mode).set_priority(row.priority).set_time_to_live(row.ttl)
        p.set_delivery_delay(row.delay)
        p.set_jms_correlation_id(row.correlation_id).set_jms_type(row.jms_type)
        p.set_jms_reply_to(None if row.reply_key is None else self._destination(row.reply_key))
        p.clear_properties()
        for name, (_, value) in row.props.items():
            p.set_string_property(name, value)
        body = row.body
        if body is None:
            body = TextMessage(None) if self._encoder.kind == KIND_TEXT else b""
        p.send(self._destination(row.key), body)

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
        self._records.append(self._encoder.dead_letter(row, self.partition, error, values))
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
