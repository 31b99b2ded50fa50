"""A small Spark pipeline over JMS: orders with per-row delivery delays, written to a queue,
read back as a stream as each one falls due.

    python examples/spark_orders.py            # starts its own broker on tcp://127.0.0.1
    PYJMS_URL=tcp://127.0.0.1:61616 python examples/spark_orders.py   # or uses yours

Needs pyjms with the spark extra (pip install 'pyjms-jakarta[spark]') and a JDK 17.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Spark's Python workers must run this interpreter and import this pyjms
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from pyjms.spark import JMSDataSource  # noqa: E402

QUEUE = f"ORDERS.{os.getpid()}"
ORDERS = 12
_broker = None  # the example's own broker, if it started one


def broker_url() -> str:
    """PYJMS_URL, or a broker in this process that Spark's workers reach over tcp://."""
    if os.environ.get("PYJMS_URL"):
        return os.environ["PYJMS_URL"]
    from pyjms.broker import EmbeddedBroker

    global _broker
    _broker = EmbeddedBroker(port=0)
    return _broker.tcp_url


def main() -> None:
    url = broker_url()
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("pyjms-orders")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(JMSDataSource)

    # orders due 0 to 5.5 s after they are sent, in shuffled order; big ones get priority 7,
    # so they go first among orders that fall due together
    orders = spark.createDataFrame(
        [
            (f"order-{i:02d}", f"customer-{i % 4}", 10.0 * (i + 1), (i * 7 % ORDERS) * 500)
            for i in range(ORDERS)
        ],
        "order_id string, customer string, amount double, due_in_ms long",
    )
    outgoing = orders.select(
        F.to_json(F.struct("order_id", "customer", "amount")).alias("body"),
        F.col("order_id").alias("correlation_id"),
        F.col("due_in_ms").alias("delivery_delay"),
        F.lit(60_000).cast("long").alias("time_to_live"),  # an order nobody takes within a minute lapses
        F.when(F.col("amount") > 100, 7).otherwise(4).alias("priority"),
        F.create_map(F.lit("customer"), F.col("customer")).alias("properties"),
    )

    arrivals: dict[str, tuple[int, float, float]] = {}

    def on_batch(df: Any, batch_id: int) -> None:
        now = time.time()
        for r in df.select("correlation_id", "priority", "timestamp", "delivery_time").collect():
            due = r.delivery_time.timestamp()
            delay = due - r.timestamp.timestamp()
            arrivals[r.correlation_id] = (r.priority, delay, now - due)
            print(
                f"  batch {batch_id:2d}: {r.correlation_id} (priority {r.priority}) delayed {delay:4.1f} s, "
                f"read {1000 * (now - due):4.0f} ms after it fell due"
            )

    with tempfile.TemporaryDirectory() as checkpoint:
        # the reader runs first, so that each order is read as it falls due
        query = (
            spark.readStream.format("jms")
            .option("url", url)
            .option("destination", QUEUE)
            .option("receiveTimeout", 100)
            .load()
            .writeStream.foreachBatch(on_batch)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="250 milliseconds")
            .start()
        )
        # a first small write starts Spark's Python workers and their JVMs, not timed
        spark.range(1).selectExpr("'warm-up' AS body").write.format("jms").mode("append").option(
            "url", url
        ).option("destination", QUEUE + ".WARMUP").save()
        while query.lastProgress is None:
            time.sleep(0.1)

        t0 = time.time()
        outgoing.write.format("jms").mode("append").option("url", url).option("destination", QUEUE).save()
        print(
            f"wrote {ORDERS} orders to queue://{QUEUE} in {time.time() - t0:.2f} s "
            f"(one JMS transaction per task); reading them as they fall due:"
        )
        deadline = time.time() + 60
        while len(arrivals) < ORDERS and time.time() < deadline:
            time.sleep(0.1)
        query.stop()

    late = sorted(lateness for _, _, lateness in arrivals.values())
    print(
        f"\n{len(arrivals)} of {ORDERS} orders read back; from falling due to being read: "
        f"median {1000 * late[len(late) // 2]:.0f} ms, max {1000 * late[-1]:.0f} ms "
        f"(a micro-batch every 250 ms)"
    )
    spark.stop()


if __name__ == "__main__":
    main()
