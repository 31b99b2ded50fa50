"""Browse with mark (#4): dispatch rate with 1 and 4 cooperating dispatcher processes, and
the cost per message of marking, against a standalone pyjms broker over tcp://127.0.0.1.

Dispatch: each dispatcher (examples/cooperative_dispatch.py) browses with BROWSE_CO_OP, hands
the tokens to its consumer (--batch at a time), which gets exactly those messages by token in
a transaction and commits. The baseline is a raw Java JMS consumer draining the same number of
messages from the same broker, committing as often: no browse, no marks, no selectors.

Marking cost: one process browses a queue of --mark-messages messages (a) with a plain
QueueBrowser, (b) with BROWSE_HANDLE (marks kept in the handle), (c) with BROWSE_CO_OP (marks
at the broker's mark service), interleaved over --rounds rounds; medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_throughput import PROVIDERS, start_broker  # noqa: E402  (the same standalone broker)

import pyjms  # noqa: E402
from pyjms.bridge import classpath  # noqa: E402
from pyjms.browse import BROWSE_CO_OP, BROWSE_HANDLE  # noqa: E402

EXAMPLE = ROOT / "examples" / "cooperative_dispatch.py"


def fill(url: str, queue: str, n: int) -> None:
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        q = ctx.create_queue(queue)
        p = ctx.create_producer()
        body = "x" * 100
        for start in range(0, n, 1000):
            p.send_batch(q, [body] * min(1000, n - start))


def dispatch(url: str, queue: str, n: int, dispatchers: int, batch: int) -> tuple[float, int, int]:
    """msg/s from the first dispatch to the last commit over all dispatchers; handled; gone."""
    fill(url, queue, n)
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"d{i}.out" for i in range(dispatchers)]
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(EXAMPLE),
                    "--url",
                    url,
                    "--queue",
                    queue,
                    "--dispatcher",
                    f"d{i}",
                    "--idle",
                    "3",
                    "--batch",
                    str(batch),
                ],
                stdout=out.open("w"),
                text=True,
                cwd=ROOT,
            )
            for i, out in enumerate(outs)
        ]
        for p in procs:
            p.wait()
        lines = [line for out in outs for line in out.read_text().splitlines()]
    firsts, lasts, handled, gone = [], [], 0, 0
    for line in lines:
        if line.startswith("done "):
            f = line.split()
            handled += int(f[3])
            gone += int(f[5])
            if int(f[3]):
                firsts.append(float(f[f.index("first") + 1]))
                lasts.append(float(f[f.index("last") + 1]))
    return handled / (max(lasts) - min(firsts)), handled, gone


def raw_drain(url: str, queue: str, n: int, batch: int) -> float:
    fill(url, queue, n)
    jars = os.pathsep.join(classpath.provider_jars("activemq"))
    out = subprocess.run(
        [
            "java",
            "-cp",
            jars,
            f"-Dlog4j2.configurationFile={ROOT / 'pyjms/bridge/log4j2.properties'}",
            str(ROOT / "bench" / "RawJmsDrain.java"),
            url,
            queue,
            str(n),
            str(batch),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    _, count, seconds = out.split()
    return int(count) / float(seconds)


def browse_all(ctx: pyjms.JMSContext, q: pyjms.Queue, how: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = 0
    if how == "plain":
        with ctx.create_browser(q) as b:
            for _ in b:
                n += 1
    else:
        options = BROWSE_HANDLE if how == "handle" else BROWSE_CO_OP
        with ctx.create_marking_browser(q, cooperative=how != "handle") as h:
            while h.get_or_none(options) is not None:
                n += 1
    return time.perf_counter() - t0, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--batch", type=int, default=10, help="tokens per consumer transaction")
    ap.add_argument("--mark-messages", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    broker, url = start_broker(PROVIDERS["activemq"])
    try:
        print(f"pyjms {pyjms.__version__} browse with mark, standalone broker over {url}\n")
        java = raw_drain(url, "BENCH.DRAIN", args.messages, args.batch)
        rows = []
        for d in (1, 4):
            rate, handled, gone = dispatch(url, f"BENCH.DISPATCH.{d}", args.messages, d, args.batch)
            rows.append((d, rate, handled, gone))
        print(
            f"dispatch: {args.messages:,} messages, BROWSE_CO_OP then get by token, {args.batch} per transaction"
        )
        print(f"{'client':44} {'msg/s':>8} {'vs raw Java':>12}  handled / gone")
        print(f"{'raw Java consumer drain (no marks)':44} {java:8,.0f} {1:11.2f}x")
        for d, rate, handled, gone in rows:
            print(
                f"{f'pyjms, {d} cooperating dispatcher process(es)':44} {rate:8,.0f} {rate / java:11.2f}x"
                f"  {handled:,} / {gone}"
            )

        with pyjms.ConnectionFactory(url).create_context() as ctx:
            q = ctx.create_queue("BENCH.MARK")
            fill(url, q.name, args.mark_messages)
            times: dict[str, list[float]] = {"plain": [], "handle": [], "co_op": []}
            for _ in range(args.rounds):
                for how in times:
                    seconds, n = browse_all(ctx, q, how)
                    assert n == args.mark_messages, (how, n)
                    times[how].append(seconds)
        med = {k: statistics.median(v) for k, v in times.items()}
        n = args.mark_messages
        print(f"\nmarking cost: browse {n:,} messages, {args.rounds} interleaved rounds, medians")
        print(f"{'browse':44} {'msg/s':>8} {'us/msg':>8} {'marking us/msg':>15}")
        for how, label in (
            ("plain", "plain QueueBrowser (no marks)"),
            ("handle", "BROWSE_HANDLE (marks in the handle)"),
            ("co_op", "BROWSE_CO_OP (marks at the mark service)"),
        ):
            extra = (med[how] - med["plain"]) / n * 1e6
            print(f"{label:44} {n / med[how]:8,.0f} {med[how] / n * 1e6:8.1f} {extra:15.1f}")
    finally:
        broker.terminate()
        broker.wait()


if __name__ == "__main__":
    main()
