"""The Spark data source against the raw Java JMS client, on one standalone broker over tcp.

One run:
  * a standalone pyjms broker process on tcp://127.0.0.1, with two ActiveMQ limits raised
    (see TUNING): its memory limit, so that a million queued messages fit (the default 1 GB
    holds ~950k 100-byte messages, then producer flow control blocks every sender), and the
    queues' page size, which bounds how fast ActiveMQ feeds a transacted consumer;
  * raw Java (bench/RawJmsSend.java): one producer in one thread sends N non-persistent
    100-byte text messages, then one consumer drains them;
  * Spark local[2]: a cached DataFrame of N rows with a 100-character body is written with
    ``df.write.format("jms")`` (2 tasks, one JMS transaction each), then read back with
    ``spark.read.format("jms").option("mode", "consume")`` (2 concurrent consumers, each one
    JMS transaction, without the client-side priority re-sorting of the prefetch buffer:
    ``factoryProperties=messagePrioritySupported=false``; on a default pyjms broker and client a
    transacted consumer trickles at ~2k messages/s, see the closing notes).
Both sides warm up first (JIT; Spark's Python workers and their JVMs). Prints rows per second
and the ratio of the Spark write to the raw Java send loop (target >= 0.7x).

    python bench/bench_spark.py [--rows 1000000] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pyjms.bridge import classpath  # noqa: E402

BODY_BYTES = 100
TUNING = {"broker memory limit": "4 GB (default 1 GB)", "queue maxPageSize": "10000 (default 200)"}

BROKER = """
import signal, threading
import jpype
from pyjms.broker import EmbeddedBroker
b = EmbeddedBroker(port=0)
service = b.service()
service.getSystemUsage().getMemoryUsage().setLimit(4 << 30)
every_queue = service.getDestinationPolicy().getEntryFor(jpype.JClass("org.apache.activemq.command.ActiveMQQueue")("Q"))
every_queue.setMaxPageSize(10000)
print("ready:", b.tcp_url, flush=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set())
stop.wait()
b.stop()
"""


def start_broker() -> tuple[subprocess.Popen[str], str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", BROKER], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env
    )
    line = proc.stdout.readline()
    if "ready:" not in line:
        raise SystemExit(f"broker did not start: {line!r}")
    return proc, line.split("ready:")[1].split()[0]


def raw_java(url: str, queue: str, n: int) -> tuple[float, float]:
    jars = os.pathsep.join(classpath.provider_jars("activemq"))
    out = subprocess.run(
        [
            "java",
            "-cp",
            jars,
            f"-Dlog4j2.configurationFile={ROOT / 'pyjms/bridge/log4j2.properties'}",
            str(ROOT / "bench" / "RawJmsSend.java"),
            url,
            queue,
            str(n),
            str(BODY_BYTES),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    _, count, send_s, receive_s = out.split()
    return int(count) / float(send_s), int(count) / float(receive_s)


def spark_session():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    from pyspark.sql import SparkSession

    from pyjms.spark import JMSDataSource

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("pyjms-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(JMSDataSource)
    return spark


def rows(spark, n: int):
    # id zero-padded to 10 characters, then 90 x: the same 100-character bodies as the Java loop
    df = spark.range(0, n, numPartitions=2).selectExpr(
        f"concat(lpad(cast(id AS string), 10, '0'), repeat('x', {BODY_BYTES - 10})) AS body"
    )
    df = df.cache()
    assert df.count() == n
    return df


def spark_write(df, url: str, queue: str) -> float:
    n = df.count()
    t0 = time.perf_counter()
    (
        df.write.format("jms")
        .mode("append")
        .option("url", url)
        .option("destination", queue)
        .option("deliveryMode", "NON_PERSISTENT")
        .option("batchSize", 2000)
        .save()
    )
    return n / (time.perf_counter() - t0)


def spark_read(spark, url: str, queue: str, n: int) -> float:
    t0 = time.perf_counter()
    got = (
        spark.read.format("jms")
        .option("url", url)
        .option("destination", queue)
        .option("mode", "consume")
        .option("numPartitions", 2)
        .option("batchSize", 2000)
        .option("receiveTimeout", 2000)
        .option("factoryProperties", "messagePrioritySupported=false")
        .load()
        .selectExpr("count(*) AS n", "sum(length(body)) AS bytes")
        .collect()[0]
    )
    elapsed = time.perf_counter() - t0
    if got.n != n or got.bytes != n * BODY_BYTES:
        raise SystemExit(f"read back {got.n} rows / {got.bytes} bytes, expected {n} / {n * BODY_BYTES}")
    return n / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    n = args.rows
    broker, url = start_broker()
    java_send: list[float] = []
    java_receive: list[float] = []
    writes: list[float] = []
    reads: list[float] = []
    try:
        t = time.perf_counter()
        spark = spark_session()
        session_s = time.perf_counter() - t
        warm = rows(spark, 20_000)
        spark_write(warm, url, "BENCH.SPARK.WARM")  # starts the Python workers and their JVMs
        spark_read(spark, url, "BENCH.SPARK.WARM", 20_000)
        df = rows(spark, n)
        for r in range(args.rounds):
            s, rcv = raw_java(url, f"BENCH.RAW.{r}", n)
            java_send.append(s)
            java_receive.append(rcv)
            writes.append(spark_write(df, url, f"BENCH.SPARK.{r}"))
            reads.append(spark_read(spark, url, f"BENCH.SPARK.{r}", n))
        spark.stop()
    finally:
        broker.terminate()
        broker.wait()
    med = statistics.median
    ratio = med(writes) / med(java_send)
    print(
        f"pyjms Spark data source: {n:,} rows of {BODY_BYTES} bytes, non-persistent, over {url} "
        f"(standalone broker process), local[2], {args.rounds} round(s), medians"
    )
    print(
        f"broker tuning: {', '.join(f'{k} {v}' for k, v in TUNING.items())}; "
        f"Spark session start {session_s:.1f} s, not counted\n"
    )
    print(f"{'':44} {'rows/s':>10}   rounds")
    for name, values in (
        ("raw Java JMS loop, send (1 producer)", java_send),
        ("Spark df.write.format('jms')", writes),
        ("raw Java JMS loop, receive (1 consumer)", java_receive),
        ("Spark read mode=consume (2 partitions)", reads),
    ):
        print(f"{name:44} {med(values):10,.0f}   {', '.join(f'{v:,.0f}' for v in values)}")
    print(
        f"\nSpark write / raw Java send: {ratio:.2f}x (target >= 0.7x: {'met' if ratio >= 0.7 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
