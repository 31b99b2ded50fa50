"""The ``jms`` Spark data source: DataFrames to JMS destinations and queues to DataFrames.

Register it once per session, then use the format name ``jms``::

    import pyjms.spark
    pyjms.spark.register(spark)        # or spark.dataSource.register(pyjms.spark.JMSDataSource)
    url = "tcp://127.0.0.1:61616"      # executors are other processes: never vm://

    df.write.format("jms").mode("append").option("url", url).option("destination", "ORDERS").save()
    spark.read.format("jms").option("url", url).option("destination", "ORDERS").load()   # browse
    spark.readStream.format("jms").option("url", url).option("destination", "ORDERS").load()

Like Spark's Kafka connector, one entry point hands each mode to its own class:
``JMSBatchWrite`` and ``JMSStreamingWrite`` (pyjms.spark.sink), ``JMSBrowseBatch`` and
``JMSConsumeBatch`` (pyjms.spark.batch_read), ``JMSMicroBatchStream``
(pyjms.spark.stream_read). Their docstrings state the transaction and delivery guarantees.
A write's task (pyjms.spark.task_writer) sends its rows, encoded by pyjms.spark.row_records,
in one transaction.
``consume_after_job`` (pyjms.spark.consume_after) removes what a batch job read only after
the job succeeded.

Executors need pyjms importable (``pip install 'pyjms-jakarta[spark]'`` of the wheel, which carries
the shim and the default provider's jars, in their environment) and a JDK 17 on every node;
for another provider, its resolved jars (``pyjms providers fetch``) or ``PYJMS_CLASSPATH``. Each Spark Python worker starts one JVM on its first
task and keeps it for the tasks that follow; every task opens and closes its own connection.
"""

from __future__ import annotations

from typing import Any

try:
    from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, DataSourceWriter
    from pyspark.sql.types import StructType
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"pyjms.spark needs PySpark 4 with pandas < 3 and pyarrow: pip install 'pyjms-jakarta[spark]' ({e})"
    ) from None

from pyjms.bridge.contract import DLQ_DETAIL
from pyjms.errors import NotSupportedRuntimeException
from pyjms.spark.batch_read import JMSBrowseBatch, JMSConsumeBatch, JMSPartition
from pyjms.spark.consume_after import ConsumeResult, consume_after_job
from pyjms.spark.options import JMSOptions
from pyjms.spark.schema import READ_SCHEMA, WRITE_COLUMNS, check_read_schema, check_write_schema
from pyjms.spark.sink import JMSBatchWrite, JMSStreamingWrite
from pyjms.spark.stream_read import JMSMicroBatchStream
from pyjms.spark.task_writer import JMSCommitMessage
from pyjms.spark.workers import WorkerPythonError, check_worker_python


class JMSDataSource(DataSource):
    """The ``jms`` format. Options (camelCase) are checked when Spark plans the job."""

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.jms_options = JMSOptions.parse(options)

    @classmethod
    def name(cls) -> str:
        return "jms"

    def schema(self) -> StructType:
        return READ_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        columns = check_read_schema(schema)
        if self.jms_options.mode == "consume":
            return JMSConsumeBatch(self.jms_options, columns)
        return JMSBrowseBatch(self.jms_options, columns)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return JMSBatchWrite(self.jms_options, self._write_columns(schema, overwrite))

    def streamWriter(self, schema: StructType, overwrite: bool) -> JMSStreamingWrite:
        return JMSStreamingWrite(self.jms_options, self._write_columns(schema, overwrite))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return JMSMicroBatchStream(self.jms_options, check_read_schema(schema))

    def _write_columns(self, schema: StructType, overwrite: bool) -> dict[str, Any]:
        if overwrite:
            raise NotSupportedRuntimeException(
                "a JMS destination cannot be overwritten, only appended to: use mode('append')"
            )
        columns = check_write_schema(schema)
        if "destination" not in columns:
            self.jms_options.require_destination()
        return columns


def register(spark: Any) -> None:
    """Registers the ``jms`` data source on a session. For a local master it first checks that
    Spark's Python workers can import pyjms, so a worker that cannot is one clear error naming
    the Python it runs and PYSPARK_PYTHON (on a cluster, the executors' Python is not this
    machine's: see docs/spark.md)."""
    if str(spark.sparkContext.master).startswith("local"):
        check_worker_python(spark.conf.get("spark.pyspark.python", None))
    spark.dataSource.register(JMSDataSource)


__all__ = [
    "register",
    "WorkerPythonError",
    "check_worker_python",
    "JMSDataSource",
    "JMSOptions",
    "READ_SCHEMA",
    "WRITE_COLUMNS",
    "JMSBatchWrite",
    "JMSStreamingWrite",
    "JMSCommitMessage",
    "JMSBrowseBatch",
    "JMSConsumeBatch",
    "JMSPartition",
    "JMSMicroBatchStream",
    "DLQ_DETAIL",
    "consume_after_job",
    "ConsumeResult",
]
