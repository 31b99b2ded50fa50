"""The Spark data source against the raw Java JMS client, on one standalone broker over tcp.

One run, on the defaults a user gets (a `pyjms broker` process on tcp://127.0.0.1, no tuning):
  * raw Java (bench/RawJms.java in ONE warm JVM, bench/raw_java.py): one producer in one
    thread sends N non-persistent 100-character text messages, then one auto-acknowledge
    consumer receives them; and one QueueBrowser browses the browse queue (for reference);
  * Spark local[2]: a cached DataFrame of N rows with a 100-character body is written with
    ``df.write.format("jms")`` (2 tasks, one JMS transaction each), then read back with
    ``mode=consume`` (2 concurrent consumers, each one JMS transaction; --partitions gives
    more cases, e.g. 1,2,4). A consume read ends when no message came for receiveTimeout
    (--receive-timeout, default 500 ms): that wait is part of its time. And a queue of
    min(N, 20,000) messages is read with ``mode=browse`` (2 partitions, each browsing the queue
    and keeping its share): a pyjms broker shows a browser 20,000 messages at most
    (maxBrowsePageSize).
Two kinds of reference rows, without targets, say where a distance comes from:
  * Spark's own ceiling: the same write and consume read through a Python data source that
    touches no broker (bench/spark_null_source.py: the jms read schema, Arrow batches of 2,000
    rows). Any Python data source is at most that fast on the machine;
  * raw Java doing what a consume read does: as many consumers as its partitions, each in the
    session the read uses on that provider (ProviderPlugin.bulk_read_context: one transaction,
    committed at its end, or a CLIENT_ACKNOWLEDGE session acknowledged once at its end;
    pyjms.spark.batch_read: nothing is removed until Spark has taken a partition's last row).
    This is the read's design at raw Java speed.
Both sides first run --warmup untimed rounds of every case at the same volume (JIT; Spark's
Python workers and their JVMs), then --rounds interleaved rounds; medians. Prints rows per
second and the ratios: Spark write to the raw Java send (target >= 0.8x), Spark reads
(consume and browse) to the raw Java single consumer (target >= 0.7x). The default N stays
under the broker's default memory limit (1 GB holds ~950k such messages; beyond it producer
flow control blocks every sender).

Each provider of --providers (default activemq; also artemis, amqp, amqp-artemis) gets a broker
of its own and its own raw Java client; every provider's browse reads min(N, 20,000) rows.

    python bench/bench_spark.py [--rows 500000] [--rounds 3] [--warmup 1] [--providers activemq]
                                [--partitions 2] [--receive-timeout 500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from raw_java import PROVIDERS, Provider, RawJava, listed, start_broker  # noqa: E402

BODY_BYTES = 100
BROWSE_LIMIT = 20_000  # a pyjms broker's maxBrowsePageSize: what one browser sees of a queue
WRITE_TARGET = 0.8
READ_TARGET = 0.7


def spark_session():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # bench/ too: Spark's Python workers import the reference source (spark_null_source)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), str(ROOT / "bench"), os.environ.get("PYTHONPATH")])
    )
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
    from spark_null_source import NullSource

    spark.dataSource.register(NullSource)
    return spark


def rows(spark, n: int):
    # id zero-padded to 10 characters, then 90 x: 100-character bodies, as the Java loop's
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


def null_write(df) -> float:
    """Rows per second of the same write to a source that drops them (Spark's own cost)."""
    n = df.count()
    t0 = time.perf_counter()
    df.write.format("pyjms-null").mode("append").save()
    return n / (time.perf_counter() - t0)


def counted(df) -> tuple[int, int]:
    """What every timed read computes: its rows and the bytes of their bodies."""
    got = df.selectExpr("count(*) AS n", "sum(length(body)) AS bytes").collect()[0]
    return got.n, got.bytes or 0


def null_read(spark, n: int, partitions: int) -> float:
    """Rows per second of the consume read's query over a source that makes its rows."""
    t0 = time.perf_counter()
    count, size = counted(
        spark.read.format("pyjms-null").option("rows", n).option("numPartitions", partitions).load()
    )
    if count != n or size != n * BODY_BYTES:
        raise SystemExit(f"the null source gave {count} rows / {size} bytes, expected {n}")
    return n / (time.perf_counter() - t0)


def spark_read(
    spark, url: str, queue: str, n: int, mode: str, partitions: int = 2, receive_timeout: int = 500
) -> float:
    def read() -> tuple[int, int]:
        return counted(
            spark.read.format("jms")
            .option("url", url)
            .option("destination", queue)
            .option("mode", mode)
            .option("numPartitions", partitions)
            .option("batchSize", 2000)
            .option("receiveTimeout", receive_timeout)
            .load()
        )

    t0 = time.perf_counter()
    count, size = read()
    reads = 1
    # a consume read ends once no message came for receiveTimeout (a broker's pause can do
    # that); what it left is still on the queue, and a user reads again: so does the bench, in
    # the same time, and only a read that finds nothing more means messages were lost
    while mode == "consume" and count < n:
        more, more_size = read()
        if more == 0:
            break
        count, size, reads = count + more, size + more_size, reads + 1
    elapsed = time.perf_counter() - t0
    if count != n or size != n * BODY_BYTES:
        raise SystemExit(
            f"{mode} read {count} rows / {size} bytes in {reads} read(s), expected {n} / {n * BODY_BYTES}"
        )
    if reads > 1:
        print(
            f"({mode} of {queue}: {reads} reads, the first ended after a {receive_timeout} ms pause)",
            flush=True,
        )
    return n / elapsed


RAW_SEND, SPARK_WRITE = "raw Java send (1 producer)", "Spark df.write.format('jms')"
RAW_RECEIVE, RAW_BROWSE = "raw Java receive (1 consumer)", "raw Java QueueBrowser"
#: a browse read on the user's default numPartitions (1): JMS cannot split a browse, so each
#: partition of a browse read browses the whole queue and keeps its share
BROWSE_PARTITIONS = 1
SPARK_BROWSE = f"Spark read mode=browse ({BROWSE_PARTITIONS} partition)"
NULL_WRITE = "Spark write, no broker (Spark's own)"
NULL_READ, RAW_DESIGN = "Spark read, no broker", "raw Java,"  # reference rows, per partitions
#: the browse read's size through the same source: what Spark's fixed cost of a job is for a read
#: of 20,000 rows, which the consume read's 500,000 rows spread thin
NULL_BROWSE = f"{NULL_READ}, browse's rows ({BROWSE_PARTITIONS} partition)"


def null_read_case(partitions: int) -> str:
    return f"{NULL_READ} ({partitions} partitions)"


def raw_design_case(partitions: int) -> str:
    return f"{RAW_DESIGN} {partitions} consumers, removing at their end"


def acknowledges_in_bulk(url: str) -> bool:
    """Whether a consume read on this broker removes what it read with an acknowledgement
    rather than a commit (the provider's choice: ProviderPlugin.bulk_read_context)."""
    import pyjms

    factory = pyjms.ConnectionFactory(url)
    with factory.provider.bulk_read_context(factory) as ctx:
        return not ctx.get_transacted()


def consume_case(partitions: int) -> str:
    return f"Spark read mode=consume ({partitions} partition{'s' if partitions > 1 else ''})"


def cases(partitions: list[int]) -> list[str]:
    return [
        RAW_SEND,
        SPARK_WRITE,
        NULL_WRITE,
        RAW_RECEIVE,
        *(consume_case(p) for p in partitions),
        null_read_case(partitions[0]),
        raw_design_case(partitions[0]),
        RAW_BROWSE,
        SPARK_BROWSE,
        NULL_BROWSE,
    ]


def baseline(case: str) -> tuple[str, float | None] | None:
    """A figure's baseline and target (None: a reference row, with no target)."""
    if case == SPARK_WRITE:
        return RAW_SEND, WRITE_TARGET
    if case == NULL_WRITE:
        return RAW_SEND, None
    if case.startswith((NULL_READ, RAW_DESIGN)):
        return RAW_RECEIVE, None
    if case.startswith("Spark read"):
        return RAW_RECEIVE, READ_TARGET
    return None


def bench_provider(
    p: Provider, spark, df, n: int, args: argparse.Namespace
) -> tuple[str, dict[str, list[float]]]:
    """The broker's URL and each case's rates, on a broker of p's of its own."""
    browse_n = min(n, BROWSE_LIMIT)
    broker, url = start_broker(p)
    raw = None
    results: dict[str, list[float]] = {case: [] for case in cases(args.partitions)}
    try:
        raw = RawJava(p, url)
        browse_q = "BENCH.SPARK.BROWSE"
        raw.run("send", browse_q, browse_n, BODY_BYTES, "non-persistent")  # browsed, never consumed
        design = args.partitions[0]  # the consume read the reference rows stand beside
        # in raw Java, a negative size is a CLIENT_ACKNOWLEDGE session acknowledged that often
        removal = -(-n // design) * (-1 if acknowledges_in_bulk(url) else 1)
        for r in range(-args.warmup, args.rounds):  # negative rounds warm both sides, untimed
            # each queue drained before the next is filled: one holds N at a time, well within the
            # broker's memory limit
            rates = {
                RAW_SEND: raw.rate("send", f"BENCH.RAW.{r}", n, BODY_BYTES, "non-persistent"),
                RAW_RECEIVE: raw.rate("receive", f"BENCH.RAW.{r}", n, BODY_BYTES),
                NULL_WRITE: null_write(df),
                null_read_case(design): null_read(spark, n, design),
            }
            raw.run("send", f"BENCH.RAWTX.{r}", n, BODY_BYTES, "non-persistent")  # untimed
            rates[raw_design_case(design)] = raw.rate("drain", f"BENCH.RAWTX.{r}", n, design, removal)
            for i, partitions in enumerate(args.partitions):
                queue = f"BENCH.SPARK.{r}.{i}"
                write = spark_write(df, url, queue)
                if i == 0:
                    rates[SPARK_WRITE] = write
                rates[consume_case(partitions)] = spark_read(
                    spark, url, queue, n, "consume", partitions, args.receive_timeout
                )
            rates[RAW_BROWSE] = raw.rate("browse", browse_q, browse_n)
            rates[SPARK_BROWSE] = spark_read(spark, url, browse_q, browse_n, "browse", BROWSE_PARTITIONS)
            rates[NULL_BROWSE] = null_read(spark, browse_n, BROWSE_PARTITIONS)
            if r >= 0:
                for case, rate in rates.items():
                    results[case].append(rate)
        return url, results
    finally:
        if raw is not None:
            raw.close()
        broker.terminate()
        broker.wait()


def report(p: Provider, url: str, n: int, args: argparse.Namespace, results: dict[str, list[float]]) -> None:
    med = {case: statistics.median(v) for case, v in results.items()}
    print(
        f"\n== {p.name}: {n:,} rows of {BODY_BYTES} bytes ({min(n, BROWSE_LIMIT):,} for browse), "
        f"non-persistent, over {url} (standalone broker on its defaults), local[2]; "
        f"{args.warmup} untimed warm-up round(s), {args.rounds} interleaved rounds, medians; "
        f"consume reads end after receiveTimeout {args.receive_timeout} ms without a message, counted"
    )
    print(f"{'':52} {'rows/s (median)':>15} {'ratio':>7}  {'vs':30} rounds")
    for case in results:
        line = f"{case:52} {med[case]:15,.0f} "
        tail = ""
        if (known := baseline(case)) is not None:
            base, target = known
            ratio = med[case] / med[base]
            line += f"{ratio:6.2f}x  {base:30} "
            if target is not None:
                tail = f"  (target >= {target}x: {'met' if ratio >= target else 'MISSED'})"
            else:
                tail = "  (reference)"
        else:
            line += f"{'':7}  {'':30} "
        print(line + ", ".join(f"{v:,.0f}" for v in results[case]) + tail, flush=True)
    design = args.partitions[0]
    own = med[consume_case(design)] / med[raw_design_case(design)]
    print(
        f"{consume_case(design)} against {raw_design_case(design)} (raw Java doing what the read does): "
        f"{own:.2f}x; against Spark's own ceiling, {null_read_case(design)}: "
        f"{med[consume_case(design)] / med[null_read_case(design)]:.2f}x",
        flush=True,
    )
    print(
        f"{SPARK_BROWSE} against {NULL_BROWSE} (Spark's own cost of a read that size): "
        f"{med[SPARK_BROWSE] / med[NULL_BROWSE]:.2f}x",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds of every case before timing")
    ap.add_argument(
        "--providers", default="activemq", help=f"of {', '.join(PROVIDERS)}; each on a broker of its own"
    )
    ap.add_argument("--partitions", default="2", help="numPartitions of the consume reads, e.g. 1,2,4")
    ap.add_argument(
        "--receive-timeout", type=int, default=500, help="ms a consume read waits for a further message"
    )
    args = ap.parse_args()
    try:
        args.partitions = [int(p) for p in args.partitions.split(",")]
    except ValueError:
        raise SystemExit(f"--partitions {args.partitions}: a comma-separated list of ints") from None
    providers = listed("--providers", args.providers, PROVIDERS)
    n = args.rows
    t = time.perf_counter()
    spark = spark_session()
    session_s = time.perf_counter() - t
    print(f"pyjms Spark data source against raw Java; Spark session start {session_s:.1f} s, not counted")
    try:
        df = rows(spark, n)
        for name in providers:
            url, results = bench_provider(PROVIDERS[name], spark, df, n, args)
            report(PROVIDERS[name], url, n, args, results)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
