"""A read's batches built as Arrow columns in the JVM (pyjms.api.bulk.ColumnarReader).

The shim takes a batch as its packed records (the same poison, expiry and acknowledgement rules
as any receive or browse) and transposes it into the buffers of the read schema's Arrow arrays;
here they are wrapped without a Python step per row. The values are those ArrowRows renders
from the same records (pyjms.spark.schema); a batch holding a value only Python renders
exactly (a float property, for one) comes back as its records, and goes through ArrowRows.

What stays in Python is dropping resent copies (pyjms.api.duplicates): the JVM hands over each
row's duplicate id, and only rows that have one are looked at.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa

from pyjms.api.bulk import ColumnarReader, Columns
from pyjms.api.consumer import JMSConsumer, QueueBrowser
from pyjms.api.message import Message
from pyjms.spark.schema import READ_SCHEMA, ArrowRows

_STRING_COLUMNS = ("message_id", "destination", "correlation_id", "type", "reply_to")


@dataclass
class ColumnBatch:
    """One answer of the JVM: ``received`` records taken off the queue or browsed (0: none
    came, or the browse's end), and either their rows as a record batch (None if none is
    kept) with each row's duplicate id, or, where only Python renders a value exactly, the
    received messages themselves (for ArrowRows, as the reader's other path does)."""

    received: int
    batch: pa.RecordBatch | None = None
    #: each row's duplicate id and provider message id, or None when no row has a duplicate id
    duplicate_ids: list[str | None] | None = None
    message_ids: list[str | None] | None = None
    messages: list[Message] | None = None

    def without_resends(self, is_resend_by_ids: Callable[[str, str | None], bool]) -> pa.RecordBatch | None:
        """The batch without the rows ``is_resend_by_ids(duplicate id, message id)`` calls resends
        (pyjms.api.duplicates), or None if no row is left."""
        if self.batch is None or self.duplicate_ids is None or self.message_ids is None:
            return self.batch
        keep = [
            d is None or not is_resend_by_ids(d, m)
            for d, m in zip(self.duplicate_ids, self.message_ids, strict=True)
        ]
        if all(keep):
            return self.batch
        kept = self.batch.filter(pa.array(keep, type=pa.bool_()))
        return kept if kept.num_rows else None


class ArrowColumnReader:
    """Builds record batches of ``rows``' schema from the shim's columnar answers."""

    def __init__(self, rows: ArrowRows) -> None:
        self.rows = rows
        full = ArrowRows(READ_SCHEMA).arrow_schema
        self._micros = full.field("timestamp").type
        self._map = full.field("properties").type
        self._wanted = [full.get_field_index(f.name) for f in rows.arrow_schema]
        self._reader = ColumnarReader()

    def receive(self, consumer: JMSConsumer, max_messages: int, timeout_ms: int) -> ColumnBatch:
        """Up to max_messages from a consumer, waiting up to timeout_ms for the first."""
        return self._answer(self._reader.receive(consumer, max_messages, timeout_ms))

    def browse(
        self, browser: QueueBrowser, max_messages: int, partition: int, partitions: int
    ) -> ColumnBatch:
        """The next up to max_messages messages of a browse (received 0: its end), keeping the
        rows ``partition`` owns (pyjms.spark.batch_read's owner; the messages of a batch
        handed back as messages are all there, for the caller to choose from)."""
        return self._answer(self._reader.browse(browser, max_messages, partition, partitions))

    def _answer(self, columns: Columns[Message]) -> ColumnBatch:
        n = columns.rows
        if columns.messages is not None:
            return ColumnBatch(columns.received, messages=columns.messages)
        if columns.buffers is None:
            return ColumnBatch(columns.received)
        arrays = self._arrays([pa.py_buffer(b) for b in columns.buffers], n)
        batch = pa.RecordBatch.from_arrays([arrays[i] for i in self._wanted], schema=self.rows.arrow_schema)
        duplicates = arrays[-1]
        if duplicates.null_count == n:
            return ColumnBatch(columns.received, batch)
        return ColumnBatch(columns.received, batch, duplicates.to_pylist(), arrays[0].to_pylist())

    def _arrays(self, b: list[pa.Buffer], n: int) -> list[pa.Array]:
        """The read schema's 16 arrays, then the duplicate ids."""
        out: list[pa.Array] = []
        for i in range(len(_STRING_COLUMNS)):
            out.append(pa.Array.from_buffers(pa.string(), n, b[3 * i : 3 * i + 3]))
        out.append(pa.Array.from_buffers(pa.int32(), n, [None, b[15]]))  # priority
        out.append(pa.Array.from_buffers(pa.int32(), n, [None, b[16]]))  # delivery_mode
        micros = self._micros
        for at in (17, 19, 21):  # timestamp, delivery_time, expiration
            out.append(pa.Array.from_buffers(micros, n, [b[at], b[at + 1]]))
        out.append(pa.Array.from_buffers(pa.int64(), n, [None, b[23]]))  # remaining_expiry
        out.append(pa.Array.from_buffers(pa.bool_(), n, [None, b[24]]))  # redelivered
        out.append(pa.Array.from_buffers(pa.int32(), n, [None, b[25]]))  # delivery_count
        map_type = self._map
        entries = _int32_count(b[26], n)
        keys = pa.Array.from_buffers(pa.string(), entries, [None, b[27], b[28]])
        values = pa.Array.from_buffers(pa.string(), entries, [b[29], b[30], b[31]])
        pairs = pa.StructArray.from_arrays([keys, values], fields=[map_type.key_field, map_type.item_field])
        out.append(pa.Array.from_buffers(map_type, n, [None, b[26]], children=[pairs]))
        out.append(pa.Array.from_buffers(pa.binary(), n, b[32:35]))  # body
        out.append(pa.Array.from_buffers(pa.string(), n, b[35:38]))  # text
        out.append(pa.Array.from_buffers(pa.string(), n, b[38:41]))  # duplicate ids
        return out


def _int32_count(offsets: pa.Buffer, n: int) -> int:
    """The last of n + 1 little-endian int32 offsets: how many values they span."""
    return int.from_bytes(offsets.slice(4 * n, 4).to_pybytes(), "little", signed=True)
