"""A real local Spark (local[2,3]: two task threads, a task may fail three times) against the
real standalone broker. Spark's Python workers are separate processes, so they reach the
broker over tcp://, never vm://."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyjms.bridge.jvm import COMMAND_JVM_OPTIONS

# each test module skips itself when PySpark is missing (tests/spark/__init__.needs_spark);
# nothing here imports it outside a fixture, so that collection gets that far
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    # workers must run this interpreter and import this checkout (pyjms and tests.spark.faults)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    from pyspark.sql import SparkSession

    from pyjms.spark import JMSDataSource
    from tests.spark.faults import CommitThenDieJMS, FailingConsumeJMS, FlakyWriteJMS, KillBrokerJMS

    session = (
        SparkSession.builder.master("local[2,3]")
        .appName("pyjms-spark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "1g")
        # C1 only, as every JVM of the suite (tests/conftest.py), and as pyjms's short
        # commands (COMMAND_JVM_OPTIONS): test_read.py took 137
        # CPU-seconds and 86 s with C2 in Spark's JVM, 107 and 76 s without
        .config("spark.driver.extraJavaOptions", " ".join(COMMAND_JVM_OPTIONS))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    for source in (JMSDataSource, FlakyWriteJMS, FailingConsumeJMS, CommitThenDieJMS, KillBrokerJMS):
        session.dataSource.register(source)
    yield session
    session.stop()


#: the brokers the Spark tests run against, as a Spark job reaches them: ActiveMQ Classic over
#: OpenWire, Apache Artemis over its core protocol, and Artemis over AMQP 1.0 (Qpid JMS)
SPARK_PROVIDERS = ["activemq", "artemis", "amqp-artemis"]


@pytest.fixture(scope="session", params=SPARK_PROVIDERS)
def jms_url(request: pytest.FixtureRequest) -> str:
    if request.param == "activemq":
        return request.getfixturevalue("tcp_broker").tcp_url
    artemis = request.getfixturevalue("artemis_tcp_broker")
    return artemis.tcp_url if request.param == "artemis" else artemis.amqp_url


@pytest.fixture
def jms_ctx(jms_url: str) -> Iterator[Any]:
    """A pyjms context in the test process, to check what Spark did on the broker."""
    import pyjms

    with pyjms.ConnectionFactory(jms_url).create_context() as ctx:
        yield ctx
