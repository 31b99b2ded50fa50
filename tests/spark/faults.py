"""Data sources that fail on purpose, to test what a failed task or job leaves on the broker.

They live in an importable module because Spark pickles a registered data source by reference
and its Python workers import it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pyspark import TaskContext

from pyjms.spark import JMSDataSource
from pyjms.spark.batch_read import JMSConsumeBatch
from pyjms.spark.sink import JMSBatchWrite, JMSCommitMessage


class _FlakyWrite(JMSBatchWrite):
    """The first attempt of each task dies after its first Arrow batch went out (uncommitted):
    partition 0 raises, the others kill their Python worker (and its JVM) outright."""

    def write(self, iterator: Iterator[Any]) -> JMSCommitMessage:
        tc = TaskContext.get()

        def then_fail() -> Iterator[Any]:
            for batch in iterator:
                yield batch  # sent in the task's transaction before the next one is asked for
                if tc.attemptNumber() == 0:
                    if tc.partitionId() == 0:
                        raise RuntimeError("injected task failure")
                    os._exit(3)

        return super().write(then_fail())


class FlakyWriteJMS(JMSDataSource):
    @classmethod
    def name(cls) -> str:
        return "jms_flaky"

    def writer(self, schema: Any, overwrite: bool) -> Any:
        w = super().writer(schema, overwrite)
        return _FlakyWrite(w.options, w.columns)


class _FailingConsume(JMSConsumeBatch):
    """Every attempt fails after handing Spark its partition's first batch of rows."""

    def read(self, partition: Any) -> Iterator[Any]:
        for batch in super().read(partition):
            yield batch
            raise RuntimeError("injected read failure")


class FailingConsumeJMS(JMSDataSource):
    @classmethod
    def name(cls) -> str:
        return "jms_failing_consume"

    def reader(self, schema: Any) -> Any:
        r = super().reader(schema)
        return _FailingConsume(r.options, r.schema)
