"""A broker SIGKILLed under a Spark write (issue 15, section 4): nothing lost, nothing twice.

A persistent broker process (``pyjms broker --data``) takes a write of 4 partitions. Partition
1's first attempt SIGKILLs it once its rows went out in its transaction, before its commit; the
other task runs on meanwhile. The test restarts the broker on the same port and data. Tasks
whose connection broke, or whose commit's outcome became unknown, reconnect and resend their
transaction with the same duplicate ids (pyjms.spark.sink). After the write every row is on
the queue once, as a pyjms receiver sees it: Artemis drops resends at the broker; ActiveMQ
Classic keeps them and the receiver drops them.
"""

from __future__ import annotations

import signal
import threading
import uuid

import pytest

from tests.spark import needs_spark

needs_spark()

import pyjms  # noqa: E402
from tests.conftest import BrokerProcess, drain  # noqa: E402
from tests.ports import free_port  # noqa: E402

ROWS = 2000


@pytest.mark.parametrize("provider", ["activemq", "artemis"])
def test_a_broker_killed_under_a_spark_write_leaves_each_row_once(spark, tmp_path, provider):
    port = free_port()
    args = ("--data", str(tmp_path / "data"), "--port", str(port))
    brokers = [BrokerProcess(*args, provider=provider)]
    url = brokers[0].tcp_url
    queue = f"KILL.{uuid.uuid4().hex[:8]}"

    def restart_when_killed() -> None:
        brokers[0].proc.wait()
        brokers.append(BrokerProcess(*args, provider=provider))

    restarter = threading.Thread(target=restart_when_killed, daemon=True)
    restarter.start()
    try:
        df = spark.range(0, ROWS, numPartitions=4).selectExpr("concat('row-', id) AS body")
        (
            df.write.format("jms_kill_broker")
            .mode("append")
            .option("url", url)
            .option("destination", queue)
            .option("batchSize", "100")
            .option("killBroker", str(brokers[0].proc.pid))
            .save()
        )
        restarter.join(timeout=120)
        assert brokers[0].proc.returncode == -signal.SIGKILL  # it was killed under the write
        with pyjms.ConnectionFactory(url).create_context() as ctx:
            got = [m.get_text() for m in drain(ctx.create_consumer(ctx.create_queue(queue)), 2000)]
        expected = {f"row-{i}" for i in range(ROWS)}
        lost = expected - set(got)
        duplicated = len(got) - len(set(got))
        assert (len(lost), duplicated) == (0, 0), f"lost {sorted(lost)[:10]}..., duplicated {duplicated}"
        assert len(got) == ROWS
    finally:
        for b in brokers:
            b.stop()
