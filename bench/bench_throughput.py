"""Throughput of pyjms against the raw Java JMS client, side by side on one broker.

One run: a standalone pyjms broker on tcp://127.0.0.1, then, in interleaved rounds,
  * raw Java: bench/RawJms.java (a plain JMS loop, compiled by the java source launcher),
  * pyjms with a send()/receive() per message,
  * pyjms with send_batch()/receive_batch(),
each sending N non-persistent 100-byte messages and receiving them back. Prints medians
and the ratios to raw Java, then the cold start (new process to first message received on
the embedded broker). Numbers are messages per second for send plus receive.

    python bench/bench_throughput.py [--messages 100000] [--rounds 3]
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

import pyjms  # noqa: E402
from pyjms.bridge import classpath  # noqa: E402

BODY = "x" * 100
BATCH = 1000


def start_broker() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "pyjms", "broker", "--port", "0"],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    line = proc.stdout.readline()
    if "ready:" not in line:
        raise SystemExit(f"broker did not start: {line!r}")
    return proc, line.split("ready:")[1].split()[0]


def raw_java(url: str, queue: str, n: int) -> float:
    jars = os.pathsep.join(classpath.provider_jars("activemq"))
    out = subprocess.run(
        ["java", "-cp", jars, f"-Dlog4j2.configurationFile={ROOT / 'pyjms/bridge/log4j2.properties'}",
         str(ROOT / "bench" / "RawJms.java"), url, queue, str(n), str(len(BODY))],
        capture_output=True, text=True, check=True,
    ).stdout
    _, count, send_s, receive_s = out.split()
    return int(count) / (float(send_s) + float(receive_s))


def pyjms_per_message(ctx: pyjms.JMSContext, queue: str, n: int) -> float:
    q = ctx.create_queue(queue)
    p = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
    c = ctx.create_consumer(q)
    t0 = time.perf_counter()
    for _ in range(n):
        p.send(q, BODY)
    chars = 0
    for _ in range(n):
        chars += len(c.receive(10_000).get_text())
    elapsed = time.perf_counter() - t0
    c.close()
    assert chars == n * len(BODY), "lost messages"
    return n / elapsed


def pyjms_batched(ctx: pyjms.JMSContext, queue: str, n: int) -> float:
    q = ctx.create_queue(queue)
    p = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
    c = ctx.create_consumer(q)
    bodies = [BODY] * BATCH
    t0 = time.perf_counter()
    for _ in range(n // BATCH):
        p.send_batch(q, bodies)
    got = chars = 0
    while got < n:
        batch = c.receive_batch(BATCH, 10_000)
        assert batch, "lost messages"
        got += len(batch)
        chars += sum(len(m.get_text()) for m in batch)
    elapsed = time.perf_counter() - t0
    c.close()
    assert chars == n * len(BODY)
    return n / elapsed


COLD_START = """
import time, pyjms
t = time.time()
with pyjms.ConnectionFactory().create_context() as ctx:
    q = ctx.create_queue("COLD")
    ctx.create_producer().send(q, "first")
    assert ctx.create_consumer(q).receive(10000).get_text() == "first"
print(time.time())
"""


def cold_start() -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYJMS_URL"}
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", COLD_START], capture_output=True, text=True, check=True,
                         cwd=ROOT, env=env).stdout
    return float(out.strip().splitlines()[-1]) - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = args.messages - args.messages % BATCH
    broker, url = start_broker()
    results: dict[str, list[float]] = {"raw Java JMS loop": [], "pyjms send/receive per message": [],
                                      "pyjms send_batch/receive_batch": []}
    try:
        with pyjms.ConnectionFactory(url).create_context() as ctx:
            pyjms_per_message(ctx, "BENCH.WARM", 5000)  # JIT and caches, not timed
            pyjms_batched(ctx, "BENCH.WARM", 5000)
            for r in range(args.rounds):
                results["raw Java JMS loop"].append(raw_java(url, f"BENCH.RAW.{r}", n))
                results["pyjms send/receive per message"].append(pyjms_per_message(ctx, f"BENCH.ONE.{r}", n))
                results["pyjms send_batch/receive_batch"].append(pyjms_batched(ctx, f"BENCH.BATCH.{r}", n))
        colds = [cold_start() for _ in range(3)]
    finally:
        broker.terminate()
        broker.wait()
    base = statistics.median(results["raw Java JMS loop"])
    print(f"pyjms {pyjms.__version__} throughput: {n:,} non-persistent {len(BODY)}-byte messages sent and received")
    print(f"over {url} (standalone broker process), {args.rounds} interleaved rounds, medians\n")
    print(f"{'client':34} {'msg/s (median)':>15} {'vs raw Java':>12}   rounds")
    targets = {"pyjms send/receive per message": 0.4, "pyjms send_batch/receive_batch": 0.9}
    for name, values in results.items():
        med = statistics.median(values)
        ratio = med / base
        target = f"  (target >= {targets[name]}x: {'met' if ratio >= targets[name] else 'MISSED'})" if name in targets else ""
        print(f"{name:34} {med:15,.0f} {ratio:11.2f}x   {', '.join(f'{v:,.0f}' for v in values)}{target}")
    cold = statistics.median(colds)
    print(f"\ncold start, new process to first message received on the embedded broker: "
          f"median {cold:.2f} s of {', '.join(f'{c:.2f}' for c in colds)} (target <= 2 s: {'met' if cold <= 2 else 'MISSED'})")


if __name__ == "__main__":
    main()
