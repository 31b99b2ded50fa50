"""A quick side-by-side of pyjms.aio against the synchronous API, in ONE process on an embedded
broker (vm://, or --url): interleaved rounds of a few thousand non-persistent 100-byte messages,
sent all then received all, by the cases of bench_throughput.py, with ratios against the
synchronous per-message loop of the same run (ratios hold up on a loaded machine better than
rates), and the CPU this process (Python and its JVM; the embedded broker too, unless --url)
used per message. For guidance while working; the real numbers are bench_throughput.py's (`make bench`).

    python bench/aio_quick.py [--messages 5000] [--rounds 3] [--url tcp://...]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_throughput import (  # noqa: E402
    BODY,
    aio_batched,
    aio_gathered,
    aio_per_message,
    pyjms_batched,
    pyjms_per_message,
)

import pyjms  # noqa: E402
import pyjms.aio as aio  # noqa: E402

BASELINE = {
    "aio awaited per message": "sync per message",
    "aio gathered, async for": "sync per message",
    "aio send_batch/receive_batch": "sync send_batch/receive_batch",
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--url", default=None, help="a broker's URL (default: an embedded broker)")
    args = parser.parse_args()
    n = args.messages
    factory = pyjms.ConnectionFactory(args.url) if args.url else pyjms.ConnectionFactory()
    afactory = aio.ConnectionFactory.of(factory)
    # one loop and one asyncio context for the whole run, as the synchronous cases share one context
    with factory.create_context() as ctx, asyncio.Runner() as loop:
        actx = loop.run(afactory.create_context().__aenter__())
        cases: dict[str, Callable[[str], float]] = {
            "sync per message": lambda q: pyjms_per_message(ctx, q, n),
            "aio awaited per message": lambda q: loop.run(aio_per_message(actx, q, n)),
            "aio gathered, async for": lambda q: loop.run(aio_gathered(actx, q, n)),
            "sync send_batch/receive_batch": lambda q: pyjms_batched(ctx, q, n),
            "aio send_batch/receive_batch": lambda q: loop.run(aio_batched(actx, q, n)),
        }
        rates: dict[str, list[float]] = {case: [] for case in cases}
        cpu: dict[str, list[float]] = {case: [] for case in cases}  # µs of this process per message
        for r in range(-1, args.rounds):  # round -1 warms up, untimed
            for i, (case, rate) in enumerate(cases.items()):
                used = time.process_time()
                measured = rate(f"AIOQUICK.{r}.{i}")
                used = time.process_time() - used
                if r >= 0:
                    rates[case].append(measured)
                    cpu[case].append(used * 1e6 / n)
        loop.run(actx.close())
    print(f"{n:,} non-persistent {len(BODY)}-byte messages, {args.rounds} interleaved rounds, medians")
    for case, values in rates.items():
        med = statistics.median(values)
        us = statistics.median(cpu[case])
        line = f"{case:32} {med:10,.0f} msg/s {us:7.1f} µs CPU/msg"
        if case in BASELINE:
            base = BASELINE[case]
            line += f"  {med / statistics.median(rates[base]):5.2f}x rate, "
            line += f"{us / statistics.median(cpu[base]):5.2f}x CPU of {base}"
        print(line + "   (" + ", ".join(f"{v:,.0f}" for v in values) + ")", flush=True)


if __name__ == "__main__":
    main()
