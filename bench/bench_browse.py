"""Browse with mark (#4): cooperative dispatch with 1, 2 and 4 dispatcher processes against a
raw Java drain with 1, 2 and 4 consumers, and the cost per message of marking, on a standalone
pyjms broker over tcp://127.0.0.1 (its defaults), a new one per provider (--providers
activemq,artemis; default ActiveMQ), each against its own raw Java client.

Dispatch: each dispatcher (examples/cooperative_dispatch.py's dispatcher()) browses with
BROWSE_CO_OP, hands the tokens to its consumer (--batch at a time), which gets exactly those
messages by token in a transaction and commits. Each dispatcher is a process of its own that
stays up for the whole run (bench_browse.py --dispatcher-worker) and takes a round per command,
so its JVM is as warm as the baseline's. The baseline is raw Java (bench/RawJms.java in ONE warm
JVM, bench/raw_java.py): as many consumer threads as there are dispatchers, each with its own
connection and transacted session, draining the same number of messages from the same broker,
committing as often (--batch): no browse, no marks, no selectors. Both sides first run
--warmup untimed rounds of every case (same volume), then --rounds interleaved rounds; medians.
Targets: 1 dispatcher at 0.5x or better of the raw drain with 1 consumer; throughput that grows
with dispatchers. Beside them, raw Java doing what a get by token does on a JMS provider
(RawJms.java's bytoken: browse the ids, then a consumer selecting exactly each transaction's
ids), without marks: how far the design itself can go, whatever the client.

Marking cost: one process browses a queue of --mark-messages messages (a) with a plain
QueueBrowser, (b) with BROWSE_HANDLE (marks kept in the handle), (c) with BROWSE_CO_OP (marks
at the broker's mark service), interleaved over --rounds rounds; medians.

    python bench/bench_browse.py [--providers activemq,artemis] [--messages 50000]
                                 [--dispatchers 1,2,4] [--batch 10] [--rounds 3] [--warmup 1]
                                 [--mark-messages 10000]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

from cooperative_dispatch import dispatcher  # noqa: E402
from raw_java import PROVIDERS, RawJava, listed, start_broker  # noqa: E402

import pyjms  # noqa: E402
from pyjms.browse import BROWSE_CO_OP, BROWSE_HANDLE, set_mark_browse_interval  # noqa: E402

DISPATCH_TARGET = 0.5
IDLE_S = 2.0  # a dispatcher ends its round after this long without a message (not timed)


def fill(url: str, queue: str, n: int) -> None:
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        q = ctx.create_queue(queue)
        p = ctx.create_producer()
        body = "x" * 100
        for start in range(0, n, 1000):
            p.send_batch(q, [body] * min(1000, n - start))


def worker() -> None:
    """--dispatcher-worker: one dispatcher round per stdin line "URL QUEUE NAME BATCH OUTFILE",
    its output in OUTFILE; answers "ok" (the JVM and interpreter stay warm between rounds)."""
    for line in sys.stdin:
        url, queue, name, batch, out = line.split()
        with open(out, "w") as f, contextlib.redirect_stdout(f):
            dispatcher(url, queue, name, IDLE_S, 0, None, int(batch))
        print("ok", flush=True)


class Dispatchers:
    """Dispatcher processes kept up for the whole run; a round uses the first d of them."""

    def __init__(self, count: int) -> None:
        self.procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--dispatcher-worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            for _ in range(count)
        ]

    def dispatch(self, url: str, queue: str, n: int, d: int, batch: int) -> tuple[float, int]:
        """msg/s from the first dispatch to the last commit over all d dispatchers; messages
        another dispatcher's consumer had first (gone). Fewer than n handled ends the bench."""
        fill(url, queue, n)
        with tempfile.TemporaryDirectory() as tmp:
            outs = [Path(tmp) / f"d{i}.out" for i in range(d)]
            for i, (proc, out) in enumerate(zip(self.procs, outs, strict=False)):
                assert proc.stdin is not None
                proc.stdin.write(f"{url} {queue} d{i} {batch} {out}\n")
                proc.stdin.flush()
            for proc in self.procs[:d]:
                assert proc.stdout is not None
                if proc.stdout.readline().strip() != "ok":
                    raise SystemExit(f"dispatcher worker {proc.pid} failed (exit {proc.poll()})")
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
        if handled != n:
            raise SystemExit(f"{queue}: {d} dispatcher(s) handled {handled} of {n} messages")
        return handled / (max(lasts) - min(firsts)), gone

    def close(self) -> None:
        for proc in self.procs:
            if proc.stdin:
                proc.stdin.close()
        for proc in self.procs:
            proc.wait()


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


def raw_case(k: int) -> str:
    return f"raw Java drain, {k} consumer{'s' if k > 1 else ''}"


DESIGN_CASE = "raw Java, browse + a get-by-id consumer per tx"


def pyjms_case(d: int) -> str:
    return f"pyjms cooperative dispatch, {d} dispatcher{'s' if d > 1 else ''}"


def bench_dispatch(provider: str, url: str, args: argparse.Namespace, counts: list[int]) -> None:
    n, batch = args.messages, args.batch
    raw = RawJava(PROVIDERS[provider], url)
    workers = Dispatchers(max(counts))
    try:
        results: dict[str, list[float]] = {}
        gone: dict[int, list[int]] = {d: [] for d in counts}
        for r in range(-args.warmup, args.rounds):  # negative rounds warm every JVM, untimed
            for d in counts:
                queue = f"BENCH.DISPATCH.{r}.{d}"
                fill(url, queue + ".RAW", n)
                raw_rate = raw.rate("drain", queue + ".RAW", n, d, batch)
                rate, lost_race = workers.dispatch(url, queue, n, d, batch)
                if d == 1:
                    fill(url, queue + ".DESIGN", n)
                    design_rate = raw.rate("bytoken", queue + ".DESIGN", n, batch)
                    if r >= 0:
                        results.setdefault(DESIGN_CASE, []).append(design_rate)
                if r >= 0:
                    results.setdefault(raw_case(d), []).append(raw_rate)
                    results.setdefault(pyjms_case(d), []).append(rate)
                    gone[d].append(lost_race)
    finally:
        raw.close()
        workers.close()
    med = {case: statistics.median(v) for case, v in results.items()}
    print(
        f"== dispatch on {provider}: {n:,} messages, BROWSE_CO_OP then get by token, {batch} per transaction; "
        f"{args.warmup} untimed warm-up round(s), {args.rounds} interleaved rounds, medians"
    )
    print(f"{'client':42} {'msg/s (median)':>15} {'ratio':>7}  {'vs':28} rounds")
    for d in counts:
        base, ours = raw_case(d), pyjms_case(d)
        print(
            f"{base:42} {med[base]:15,.0f} {'':7}  {'':28} " + ", ".join(f"{v:,.0f}" for v in results[base])
        )
        ratio = med[ours] / med[base]
        line = f"{ours:42} {med[ours]:15,.0f} {ratio:6.2f}x  {base:28} " + ", ".join(
            f"{v:,.0f}" for v in results[ours]
        )
        if d == 1:
            line += f"  (target >= {DISPATCH_TARGET}x: {'met' if ratio >= DISPATCH_TARGET else 'MISSED'})"
        print(line + f"  gone to another dispatcher: {', '.join(map(str, gone[d]))}")
        if d == 1 and DESIGN_CASE in med:
            print(
                f"{DESIGN_CASE:42} {med[DESIGN_CASE]:15,.0f} {med[DESIGN_CASE] / med[base]:6.2f}x  {base:28} "
                + ", ".join(f"{v:,.0f}" for v in results[DESIGN_CASE])
                + f"  (pyjms, 1 dispatcher, is {med[ours] / med[DESIGN_CASE]:.2f}x of it)"
            )
    if len(counts) > 1 and counts[0] == 1:
        scaling = ", ".join(
            f"{d}: {med[pyjms_case(d)] / med[pyjms_case(1)]:.2f}x (raw Java {med[raw_case(d)] / med[raw_case(1)]:.2f}x)"
            for d in counts[1:]
        )
        print(f"dispatch scaling against 1 dispatcher (target: grows with dispatchers): {scaling}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--dispatchers", default="1,2,4", help="dispatcher processes (and raw Java consumers)")
    ap.add_argument("--batch", type=int, default=10, help="tokens per consumer transaction")
    ap.add_argument("--mark-messages", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--warmup", type=int, default=1, help="untimed dispatch rounds of every case before timing"
    )
    ap.add_argument("--providers", default="activemq", help="of activemq, artemis (each its own broker)")
    ap.add_argument("--dispatcher-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dispatcher_worker:
        worker()
        return
    counts = sorted({int(d) for d in args.dispatchers.split(",")})
    for provider in listed("--providers", args.providers, ("activemq", "artemis")):
        bench_provider(provider, args, counts)


def bench_provider(provider: str, args: argparse.Namespace, counts: list[int]) -> None:
    """Dispatch, then the cost of marking, on a new standalone broker of the provider's."""
    broker, url = start_broker(PROVIDERS[provider])
    try:
        print(f"pyjms {pyjms.__version__} browse with mark, standalone {provider} broker over {url}\n")
        bench_dispatch(provider, url, args, counts)

        # a browse slower than MsgMarkBrowseInterval (5 s) would see its first marks lapse and
        # return those messages again, as IBM MQ does: marks that never lapse, for this part
        set_mark_browse_interval(pyjms.ConnectionFactory(url), -1)
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
        print(
            f"\nmarking cost on {provider}: browse {n:,} messages, {args.rounds} interleaved rounds, medians"
        )
        print(f"{'browse':44} {'msg/s':>8} {'us/msg':>8} {'marking us/msg':>15} {'time vs plain':>14}")
        for how, label in (
            ("plain", "plain QueueBrowser (no marks)"),
            ("handle", "BROWSE_HANDLE (marks in the handle)"),
            ("co_op", "BROWSE_CO_OP (marks at the mark service)"),
        ):
            extra = (med[how] - med["plain"]) / n * 1e6
            print(
                f"{label:44} {n / med[how]:8,.0f} {med[how] / n * 1e6:8.1f} {extra:15.1f} "
                f"{med[how] / med['plain']:13.2f}x"
            )
    finally:
        broker.terminate()
        broker.wait()
    print()


if __name__ == "__main__":
    main()
