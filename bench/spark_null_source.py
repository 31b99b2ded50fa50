"""A Spark data source that touches no broker, for bench/bench_spark.py: Spark's own cost of a
Python data source with the jms source's read schema, Arrow batches of 2,000 rows and 100-byte
bodies. Its rows per second are the ceiling of any Python data source on the machine, so the
bench can tell Spark's share of a distance from pyjms's."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from pyjms.spark.schema import READ_SCHEMA

BATCH_ROWS = 2_000  # the bench's batchSize
BODY = b"x" * 100


class _Partition(InputPartition):
    def __init__(self, index: int, rows: int) -> None:
        super().__init__(index)
        self.rows = rows


def _batch(rows: int) -> pa.RecordBatch:
    """Rows as a jms read gives them for a plain 100-byte text message."""
    now = datetime.datetime.now(datetime.UTC)
    ts = pa.timestamp("us", tz="UTC")
    columns = {
        "message_id": pa.array([f"ID:null-source-{i:012d}" for i in range(rows)]),
        "destination": pa.array(["queue://BENCH.NULL"] * rows),
        "correlation_id": pa.nulls(rows, pa.string()),
        "type": pa.nulls(rows, pa.string()),
        "reply_to": pa.nulls(rows, pa.string()),
        "priority": pa.array([4] * rows, pa.int32()),
        "delivery_mode": pa.array([1] * rows, pa.int32()),
        "timestamp": pa.array([now] * rows, ts),
        "delivery_time": pa.array([now] * rows, ts),
        "expiration": pa.nulls(rows, ts),
        "remaining_expiry": pa.array([-1] * rows, pa.int64()),
        "redelivered": pa.array([False] * rows),
        "delivery_count": pa.array([1] * rows, pa.int32()),
        "properties": pa.array([[]] * rows, pa.map_(pa.string(), pa.string())),
        "body": pa.array([BODY] * rows, pa.binary()),
        "text": pa.array([BODY.decode()] * rows),
    }
    return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))


class _Reader(DataSourceReader):
    def __init__(self, rows: int, partitions: int) -> None:
        self.rows, self.partitions_ = rows, partitions

    def partitions(self) -> list[InputPartition]:
        share = [
            self.rows // self.partitions_ + (i < self.rows % self.partitions_)
            for i in range(self.partitions_)
        ]
        return [_Partition(i, n) for i, n in enumerate(share)]

    def read(self, partition: _Partition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        batch, left = _batch(BATCH_ROWS), partition.rows
        while left > 0:
            yield batch if left >= BATCH_ROWS else batch.slice(0, left)
            left -= BATCH_ROWS


class _Writer(DataSourceArrowWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        for _ in iterator:
            pass  # taken from Spark and dropped
        return WriterCommitMessage()


class NullSource(DataSource):
    """format("pyjms-null"): options rows and numPartitions for reads; writes drop every row."""

    @classmethod
    def name(cls) -> str:
        return "pyjms-null"

    def schema(self) -> StructType:
        return READ_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        return _Reader(int(self.options.get("rows", "0")), int(self.options.get("numPartitions", "2")))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return _Writer()
