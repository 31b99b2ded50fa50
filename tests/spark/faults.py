"""Data sources that fail on purpose, to test what a failed task or job leaves on the broker.

They live in an importable module because Spark pickles a registered data source by reference
and its Python workers import it.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

from pyspark import TaskContext

from pyjms.spark import JMSDataSource
from pyjms.spark.batch_read import JMSConsumeBatch
from pyjms.spark.sink import JMSBatchWrite
from pyjms.spark.task_writer import JMSCommitMessage


class _FlakyWrite(JMSBatchWrite):
    """The first attempt of each task dies after its first Arrow batch went out (uncommitted):
    partition 0 raises, the others SIGKILL their own Python worker (and the JVM in it)."""

    def write(self, iterator: Iterator[Any]) -> JMSCommitMessage:
        tc = TaskContext.get()

        def then_fail() -> Iterator[Any]:
            for batch in iterator:
                yield batch  # sent in the task's transaction before the next one is asked for
                if tc.attemptNumber() == 0:
                    if tc.partitionId() == 0:
                        raise RuntimeError("injected task failure")
                    os.kill(os.getpid(), signal.SIGKILL)  # a killed task: no cleanup at all

        return super().write(then_fail())


class FlakyWriteJMS(JMSDataSource):
    @classmethod
    def name(cls) -> str:
        return "jms_flaky"

    def writer(self, schema: Any, overwrite: bool) -> Any:
        w = super().writer(schema, overwrite)
        return _FlakyWrite(w.options, w.columns)


class _CommitThenDie(JMSBatchWrite):
    """Partition 0's first attempt commits its rows, then its Python worker is SIGKILLed before
    Spark hears of it: Spark retries a task that did commit (the sink's classic duplicate window)."""

    def write(self, iterator: Iterator[Any]) -> JMSCommitMessage:
        result = super().write(iterator)
        tc = TaskContext.get()
        if tc.partitionId() == 0 and tc.attemptNumber() == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return result


class CommitThenDieJMS(JMSDataSource):
    @classmethod
    def name(cls) -> str:
        return "jms_commit_then_die"

    def writer(self, schema: Any, overwrite: bool) -> Any:
        w = super().writer(schema, overwrite)
        return _CommitThenDie(w.options, w.columns)


class _KillBrokerMidWrite(JMSBatchWrite):
    """Partition 1's first attempt SIGKILLs the broker process (option ``killBroker``: its pid)
    once its rows went out in its transaction, before its commit; the other partitions are
    wherever they are at that moment."""

    def __init__(self, w: JMSBatchWrite, pid: int) -> None:
        super().__init__(w.options, w.columns)
        self.write_id = w.write_id
        self.pid = pid

    def write(self, iterator: Iterator[Any]) -> JMSCommitMessage:
        tc = TaskContext.get()

        def then_kill() -> Iterator[Any]:
            yield from iterator
            if tc.partitionId() == 1 and tc.attemptNumber() == 0:
                os.kill(self.pid, signal.SIGKILL)

        return super().write(then_kill())


class KillBrokerJMS(JMSDataSource):
    @classmethod
    def name(cls) -> str:
        return "jms_kill_broker"

    def writer(self, schema: Any, overwrite: bool) -> Any:
        return _KillBrokerMidWrite(super().writer(schema, overwrite), int(self.options["killBroker"]))


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
