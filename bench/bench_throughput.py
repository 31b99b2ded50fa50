"""Throughput of pyjms against each provider's own Java client, side by side on one broker.

For each provider: a standalone broker process on tcp://127.0.0.1 (`pyjms broker`), then,
in interleaved rounds, N non-persistent 100-byte messages sent and received back by
  * raw Java: bench/RawJms.java, the provider's JMS client used directly, in ONE JVM that
    stays up for the whole run (a new JVM per round has a cold JIT: that flattered pyjms
    by about 1.75x), sequential (send all, then receive all) and pipelined (a consumer
    thread receives while the producer sends), with the client options pyjms's own client is
    made with (raw_java.client_url); where those differ from the client's defaults (Qpid JMS
    on fewer than 4 CPUs, Artemis's producer window), also sequential with the client's
    defaults, to show what they give;
  * pyjms with a send()/receive() per message, sequential;
  * pyjms with send_batch()/receive_batch(), sequential;
  * the bulk-consumer recipe: send_batch, then receive_batch in a CLIENT_ACKNOWLEDGE context
    acknowledging each batch, beside raw Java doing the same (a CLIENT_ACKNOWLEDGE session
    acknowledging every 1,000 messages); each acknowledgement pattern against the other side's
    same pattern, and raw Java's against its per-message loop;
  * pyjms pipelined: a consumer thread receives while the main thread sends;
  * pyjms.aio (asyncio) on one context whose calls run on its worker thread, printed beside
    the synchronous rows they match: an `await` per send and per receive; sends started
    1,000 at a time and `gather`ed, then `async for`; `await send_batch`/`receive_batch`.
Each round runs every case once, starting one case further on than the round before (so no
case is always measured right after the same one), each case on a connection opened for it
(a pyjms context, or raw Java's connection anew) and warmed, untimed, by the case itself with
2,000 messages. On Artemis what a connection did before changes what it does next: two
identical AUTO_ACKNOWLEDGE contexts doing the same batches, one of which had received 2,000
messages one at a time just before, ran at 72,147 against 54,007 msg/s (medians of 8 rounds;
the client's I/O threads 4.9 against 7.5 µs a message), and a connection keeps such a speed
for minutes. Cases that shared a connection inherited each other's speed (the synchronous
batches ran on the context of the per-message case, the CLIENT_ACKNOWLEDGE ones on one of
their own), so the ratios measured which case followed which on a connection. Both sides
first run --warmup untimed rounds of every case (same volume, same JVM options as a library
user gets). Prints medians and ratios (pyjms sequential against raw Java
sequential, pyjms pipelined against raw Java pipelined), then the cold start of a new
process to its first message on the embedded broker. Numbers are messages per second for
send plus receive. A second table gives the CPU each case used per message (medians), in the
client's process (pyjms: Python and its JVM; raw Java: its JVM) and in the broker's: on a
shared 2-core machine that the broker and the client split, it holds steadier than a rate,
and says whose work a distance is.

    python bench/bench_throughput.py [--providers activemq,artemis,amqp,amqp-artemis] [--messages 50000]
                                     [--rounds 5] [--warmup 2] [--cold-starts 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from raw_java import CPU_HEADING, PROVIDERS, Provider, RawJava, cpu_meter, plain_url, start_broker  # noqa: E402

import pyjms  # noqa: E402
import pyjms.aio  # noqa: E402

BODY = "x" * 100
BATCH = 1000
#: messages each case's new connection exchanges, untimed, before the case: the case itself
FRESH_WARMUP = 2 * BATCH


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
    """send_batch, then receive_batch; a CLIENT_ACKNOWLEDGE context acknowledges each batch once
    it is handled (the bulk-consumer recipe, docs/api.md: a consumer that dies mid-batch loses
    nothing)."""
    q = ctx.create_queue(queue)
    p = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
    c = ctx.create_consumer(q)
    acknowledging = ctx.get_session_mode() == pyjms.CLIENT_ACKNOWLEDGE
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
        if acknowledging:
            ctx.acknowledge()
    elapsed = time.perf_counter() - t0
    c.close()
    assert chars == n * len(BODY)
    return n / elapsed


def pyjms_pipelined(factory: pyjms.ConnectionFactory, queue: str, n: int) -> float:
    """A consumer thread with a context of its own (a context is used from one thread)."""
    with factory.create_context() as sending, factory.create_context() as receiving:
        q = sending.create_queue(queue)
        p = sending.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
        c = receiving.create_consumer(q)
        received: list[int] = []

        def drain() -> None:
            chars = 0
            for _ in range(n):
                m = c.receive(10_000)
                if m is None:
                    break
                chars += len(m.get_text())
            received.append(chars)

        t0 = time.perf_counter()
        receiver = threading.Thread(target=drain)
        receiver.start()
        for _ in range(n):
            p.send(q, BODY)
        receiver.join()
        elapsed = time.perf_counter() - t0
        assert received == [n * len(BODY)], "lost messages"
        return n / elapsed


async def aio_per_message(ctx: pyjms.aio.JMSContext, queue: str, n: int) -> float:
    """pyjms.aio: an await per send and per receive, on one context (its worker thread)."""
    q = ctx.create_queue(queue)
    p = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
    c = await ctx.create_consumer(q)
    t0 = time.perf_counter()
    for _ in range(n):
        await p.send(q, BODY)
    chars = 0
    for _ in range(n):
        m = await c.receive(10_000)
        chars += len(m.get_text()) if m is not None else 0
    elapsed = time.perf_counter() - t0
    await c.close()
    assert chars == n * len(BODY), "lost messages"
    return n / elapsed


async def aio_gathered(ctx: pyjms.aio.JMSContext, queue: str, n: int) -> float:
    """pyjms.aio: sends started BATCH at a time and gathered, then `async for` over the consumer."""
    q = ctx.create_queue(queue)
    p = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
    c = await ctx.create_consumer(q)
    t0 = time.perf_counter()
    for start in range(0, n, BATCH):
        await asyncio.gather(*(p.send(q, BODY) for _ in range(min(BATCH, n - start))))
    got = chars = 0
    async for m in c:
        chars += len(m.get_text())
        got += 1
        if got == n:
            break
    elapsed = time.perf_counter() - t0
    await c.close()
    assert chars == n * len(BODY), "lost messages"
    return n / elapsed


async def aio_batched(ctx: pyjms.aio.JMSContext, queue: str, n: int) -> float:
    q = ctx.create_queue(queue)
    p = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
    c = await ctx.create_consumer(q)
    bodies = [BODY] * BATCH
    t0 = time.perf_counter()
    for _ in range(n // BATCH):
        await p.send_batch(q, bodies)
    got = chars = 0
    while got < n:
        batch = await c.receive_batch(BATCH, 10_000)
        assert batch, "lost messages"
        got += len(batch)
        chars += sum(len(m.get_text()) for m in batch)
    elapsed = time.perf_counter() - t0
    await c.close()
    assert chars == n * len(BODY)
    return n / elapsed


CASES = (
    "raw Java, sequential",
    "raw Java, pipelined",
    "pyjms per message",
    "pyjms.aio per message",
    "pyjms.aio gathered, async for",
    "pyjms send_batch/receive_batch",
    "pyjms.aio send_batch/receive_batch",
    "raw Java, CLIENT_ACK per 1,000",
    "pyjms batches, CLIENT_ACK each",
    "pyjms per message, pipelined",
)
# raw Java with the client's own defaults, where pyjms makes its client with other options
# (raw_java.client_url): what those options give a user, beside the like-for-like baseline
CLIENT_DEFAULTS = "raw Java, client's defaults"
BASELINE = {
    "pyjms per message": "raw Java, sequential",
    "pyjms send_batch/receive_batch": "raw Java, sequential",
    "pyjms per message, pipelined": "raw Java, pipelined",
    # the asyncio rows beside the synchronous ones they wrap
    "pyjms.aio per message": "pyjms per message",
    "pyjms.aio gathered, async for": "pyjms per message",
    "pyjms.aio send_batch/receive_batch": "pyjms send_batch/receive_batch",
    CLIENT_DEFAULTS: "raw Java, sequential",
    "raw Java, CLIENT_ACK per 1,000": "raw Java, sequential",
    "pyjms batches, CLIENT_ACK each": "raw Java, CLIENT_ACK per 1,000",
}
TARGETS = {
    "pyjms per message": 0.5,
    "pyjms send_batch/receive_batch": 1.0,
    "pyjms per message, pipelined": 0.5,
    # issue 34: asyncio against the synchronous API
    "pyjms.aio per message": 0.5,
    "pyjms.aio gathered, async for": 1.0,
    "pyjms.aio send_batch/receive_batch": 1.0,
}


@dataclass
class Results:
    """Per case, a figure per timed round: msg/s, and CPU µs per message in the client's
    process and in the broker's."""

    cases: tuple[str, ...]
    raw_url: str = ""
    rates: dict[str, list[float]] = field(init=False)
    client_us: dict[str, list[float]] = field(init=False)
    broker_us: dict[str, list[float]] = field(init=False)

    def __post_init__(self) -> None:
        self.rates = {case: [] for case in self.cases}
        self.client_us = {case: [] for case in self.cases}
        self.broker_us = {case: [] for case in self.cases}


#: the kind of context each pyjms case runs on, a new one for every case and round (see the
#: module's docstring); the pipelined case opens its own two
CONTEXT_OF = {
    "pyjms per message": pyjms.AUTO_ACKNOWLEDGE,
    "pyjms send_batch/receive_batch": pyjms.AUTO_ACKNOWLEDGE,
    "pyjms batches, CLIENT_ACK each": pyjms.CLIENT_ACKNOWLEDGE,
    "pyjms.aio per message": "asyncio",
    "pyjms.aio gathered, async for": "asyncio",
    "pyjms.aio send_batch/receive_batch": "asyncio",
}


class CaseContext:
    """The context the pyjms case being measured runs on: opened for it, and closed when the
    next one is opened."""

    def __init__(self, factory: pyjms.ConnectionFactory, loop: asyncio.Runner) -> None:
        self._factory = factory
        self._afactory = pyjms.aio.ConnectionFactory.of(factory)
        self._loop = loop
        self._open = contextlib.ExitStack()
        self.context: Any = None

    def open(self, kind: int | str) -> None:
        self.close()
        if kind == "asyncio":
            aio = self._loop.run(self._afactory.create_context().__aenter__())
            self._open.callback(lambda: self._loop.run(aio.close()))
            self.context = aio
        else:
            self.context = self._open.enter_context(self._factory.create_context(kind))

    def close(self) -> None:
        self._open.close()
        self.context = None

    def __enter__(self) -> CaseContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def bench_provider(p: Provider, n: int, rounds: int, warmup: int) -> Results:
    broker, url = start_broker(p)
    raw = defaults = None
    try:
        raw = RawJava(p, url)
        cases = CASES
        if raw.url != plain_url(url):
            defaults = RawJava(p, url, as_pyjms=False)
            cases = (CASES[0], CLIENT_DEFAULTS, *CASES[1:])
        factory = pyjms.ConnectionFactory(url, **dict(p.pyjms_options))
        with asyncio.Runner() as loop, CaseContext(factory, loop) as on:
            # each case as a function of the queue and the number of messages
            run: dict[str, Callable[[str, int], float]] = {
                "raw Java, sequential": lambda q, m: raw.rate("sequential", q, m, len(BODY)),
                "raw Java, pipelined": lambda q, m: raw.rate("pipelined", q, m, len(BODY)),
                CLIENT_DEFAULTS: lambda q, m: defaults.rate("sequential", q, m, len(BODY)),  # type: ignore[union-attr]
                "pyjms per message": lambda q, m: pyjms_per_message(on.context, q, m),
                "pyjms send_batch/receive_batch": lambda q, m: pyjms_batched(on.context, q, m),
                "raw Java, CLIENT_ACK per 1,000": lambda q, m: raw.rate("acked", q, m, len(BODY), BATCH),
                "pyjms batches, CLIENT_ACK each": lambda q, m: pyjms_batched(on.context, q, m),
                "pyjms per message, pipelined": lambda q, m: pyjms_pipelined(factory, q, m),
                "pyjms.aio per message": lambda q, m: loop.run(aio_per_message(on.context, q, m)),
                "pyjms.aio gathered, async for": lambda q, m: loop.run(aio_gathered(on.context, q, m)),
                "pyjms.aio send_batch/receive_batch": lambda q, m: loop.run(aio_batched(on.context, q, m)),
            }
            results = Results(cases, raw.url)
            for r in range(-warmup, rounds):  # negative rounds warm both JVMs, untimed
                # each round starts one case further on: a case measured always right after the
                # same one would pay that one's debts (garbage in both JVMs, the broker's
                # cleanup) in every round
                order = list(enumerate(cases))
                shift = r % len(cases)
                for i, case in order[shift:] + order[:shift]:
                    java = defaults if case == CLIENT_DEFAULTS else raw
                    raw_case = case.startswith("raw Java")
                    # a new connection for the case, warmed untimed by the case itself (see the
                    # module's docstring)
                    if case in CONTEXT_OF:
                        on.open(CONTEXT_OF[case])
                    elif raw_case:
                        java.run("reconnect")  # type: ignore[union-attr]
                    run[case](f"BENCH.{p.name}.{r}.{i}.warm", FRESH_WARMUP)
                    cpu = cpu_meter(java.proc.pid if raw_case else os.getpid(), broker.pid)  # type: ignore[union-attr]
                    rate = run[case](f"BENCH.{p.name}.{r}.{i}", n)
                    if r >= 0:
                        client_us, broker_us = cpu(n)
                        results.rates[case].append(rate)
                        results.client_us[case].append(client_us)
                        results.broker_us[case].append(broker_us)
        return results
    finally:
        for java in (raw, defaults):
            if java is not None:
                java.close()
        broker.terminate()
        broker.wait()


def report(p: Provider, n: int, rounds: int, warmup: int, measured: Results) -> None:
    results = measured.rates
    print(
        f"\n== {p.name}: {n:,} non-persistent {len(BODY)}-byte messages sent and received, standalone "
        f"broker over {p.scheme}127.0.0.1; {warmup} untimed warm-up rounds, {rounds} interleaved rounds, medians"
    )
    if CLIENT_DEFAULTS in results:
        print(f"raw Java runs the client as pyjms makes it: {measured.raw_url}")
    print(f"{'client':34} {'msg/s (median)':>15} {'ratio':>7}  {'vs':30} rounds")
    for case in results:
        med = statistics.median(results[case])
        line = f"{case:34} {med:15,.0f}"
        if case in BASELINE:
            ratio = med / statistics.median(results[BASELINE[case]])
            line += f" {ratio:6.2f}x  {BASELINE[case]:30} "
            tail = ""
            if case in TARGETS:
                verdict = "met" if ratio >= TARGETS[case] else "MISSED"
                tail = f"  (target >= {TARGETS[case]}x: {verdict})"
        else:
            line += f" {'':7}  {'':30} "
            tail = ""
        print(line + ", ".join(f"{v:,.0f}" for v in results[case]) + tail, flush=True)
    print(CPU_HEADING)
    print(f"  {'cpu of':42} {'client µs':>10} {'broker µs':>10}  client against its baseline's")
    for case in results:
        client, broker = (
            statistics.median(measured.client_us[case]),
            statistics.median(measured.broker_us[case]),
        )
        line = f"  {'cpu of ' + case:42} {client:10.1f} {broker:10.1f}"
        if case in BASELINE:
            base = statistics.median(measured.client_us[BASELINE[case]])
            line += f"  {client / base:.2f}x the client CPU of {BASELINE[case]}"
        print(line, flush=True)


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
    out = subprocess.run(
        [sys.executable, "-c", COLD_START], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    ).stdout
    return float(out.strip().splitlines()[-1]) - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--providers", default="activemq,artemis,amqp,amqp-artemis")
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2, help="untimed rounds of every case before timing")
    ap.add_argument(
        "--cold-starts", type=int, default=3, help="new processes timed to their first message (0: none)"
    )
    args = ap.parse_args()
    n = max(BATCH, args.messages - args.messages % BATCH)
    print(f"pyjms {pyjms.__version__} throughput, {os.cpu_count()} CPUs")
    for name in args.providers.split(","):
        p = PROVIDERS[name]
        try:
            results = bench_provider(p, n, args.rounds, args.warmup)
        except Exception as e:  # one provider that cannot run does not hide the others
            print(f"\n== {name}: not measured: {e}", flush=True)
            continue
        report(p, n, args.rounds, args.warmup, results)
    if args.cold_starts < 1:
        return
    colds = [cold_start() for _ in range(args.cold_starts)]
    cold = statistics.median(colds)
    print(
        f"\ncold start, new process to first message received on the embedded broker: "
        f"median {cold:.2f} s of {', '.join(f'{c:.2f}' for c in colds)}"
    )


if __name__ == "__main__":
    main()
