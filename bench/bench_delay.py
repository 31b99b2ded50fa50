"""Delivery-delay lateness per mechanism (native, scheduler, staging) on a standalone broker.

For each mode: N non-persistent messages whose delays are spread evenly over a window
(default 100,000 over 30 s) are sent, then received as they become due. Prints p50, p99 and
maximum lateness (receive time minus delivery time), early deliveries, lost messages and
second copies (each must be 0: every text carries its number, and the receiver waits
DUPLICATE_GRACE_S after the last message for any copy), and the
memory of whatever holds the delayed messages (the broker for the scheduler, the broker with
its delay processor for staging).

Staging runs twice: with the delay processor inside the broker's process, as `pyjms broker`
runs it by default (its moves go over vm://), and with `pyjms delay-processor --url` as a
process of its own beside a broker started with --no-delay-processor (its moves go over tcp;
memory is then the processor process's alone).

The messages are received by a process of their own, started before the first send, so that
the time the sender spends sending does not count as lateness (a message due while a
single-threaded bench was still sending used to wait in its consumer's prefetch until the
sending ended, which made every mode look seconds late).

Before the measured messages, each mode sends --warmup messages (default 20,000, delays spread
over 1-10 s) on the same path and receives them in the same receiving process, unmeasured: a
delay processor or broker runs for days, and the first seconds of four new JVMs on a 2-core
machine are mostly JIT compilation (a cold 40,000-message run spent about 40% of all its CPU
in compiler threads), which is not what a delay costs. --warmup 0 measures cold JVMs.

A mode may name its peer as MODE@PEER: activemq (OpenWire, the default), amqp (Qpid JMS to
the ActiveMQ broker's AMQP connector), artemis (the Artemis core client to `pyjms broker
--provider artemis`) or amqp-artemis (Qpid JMS to Artemis's AMQP acceptor).

    python bench/bench_delay.py [--messages 100000] [--window-s 30] [--warmup 20000]
                                [--modes native@artemis,native@amqp,scheduler,staging,...]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pyjms  # noqa: E402

CHUNK = 100  # messages per send_batch, all with one delay
#: how long the receiver goes on after its last message, for a second copy of any
DUPLICATE_GRACE_S = 2.0
#: issue 17's targets for staging (at 100,000 messages over 30 s): p99 lateness, and the peak
#: RSS of the broker's process holding them with its delay processor
TARGET_P99_MS = 50
TARGET_RSS_MB = 300


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process, in MB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


class PeakRss:
    """Samples a process's RSS every 0.2 s on a thread of its own, from the warm-up's end to
    the last receive (sending included: the sorter's filing is when a broker grows most)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                self.peak = max(self.peak, rss_mb(self.pid)[0])
            except (OSError, KeyError):
                return

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def start(args: list[str], ready: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pyjms", *args], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    line = proc.stdout.readline()
    if ready not in line:
        raise SystemExit(f"{args[0]} did not start: {line!r}")
    proc.ready_line = line  # type: ignore[attr-defined]
    return proc


def receive(url: str, queue: str, n: int, deadline_s: float, warmup: int = 0) -> None:
    """The receiving side (its own process): receives the warm-up messages (on queue + ".WARMUP",
    says "warm"), then prints lateness figures as one JSON line."""
    import json

    factory = pyjms.ConnectionFactory(url)
    with factory.create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(queue))
        warm = ctx.create_consumer(ctx.create_queue(queue + ".WARMUP"))
        print("ready", flush=True)
        got, deadline = 0, time.time() + 120
        while got < warmup and time.time() < deadline:
            got += len(warm.receive_batch(100, 200))
        print(f"warm {got}", flush=True)
        received: list[tuple[int, list[pyjms.Message]]] = []
        count = 0
        deadline = time.time() + deadline_s
        while count < n and time.time() < deadline:
            # small batches: each one's receive time is taken when it returns; the headers are
            # read after the run, so that measuring costs the machine little while it runs
            batch = consumer.receive_batch(100, 200)
            received.append((int(time.time() * 1000), batch))
            count += len(batch)
        # a second copy of a message may come after the last first copy: wait for it a while
        grace = time.time() + DUPLICATE_GRACE_S
        while time.time() < grace:
            batch = consumer.receive_batch(100, 200)
            received.append((int(time.time() * 1000), batch))
    # each measured message's text starts with its number: the first copy of each counts
    lateness, seen, duplicates = [], set(), 0
    for now, batch in received:
        for m in batch:
            number = m.get_text()[:9]
            if number in seen:
                duplicates += 1
                continue
            seen.add(number)
            lateness.append(now - m.get_jms_delivery_time())
    early = sum(1 for late in lateness if late < 0)
    lateness.sort()
    summary = {"received": len(lateness), "early": early, "duplicates": duplicates}
    if lateness:
        summary.update(
            p50=lateness[len(lateness) // 2],
            p99=lateness[min(len(lateness) - 1, int(len(lateness) * 0.99))],
            max=lateness[-1],
        )
    print(json.dumps(summary), flush=True)


def run_mode(
    url: str, mode: str, n: int, window_ms: int, memory_pid: int, warmup: int = 0, label: str = ""
) -> str:
    import json

    label = label or mode
    factory = pyjms.ConnectionFactory(url, delivery_delay=mode)
    queue = f"BENCH.DELAY.{label or mode}".replace("@", ".")
    rng = random.Random(7)
    delays = sorted(rng.randrange(1000, window_ms) for _ in range(n // CHUNK))
    rng.shuffle(delays)
    with factory.create_context() as ctx:
        q = ctx.create_queue(queue)
        producer = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
        try:
            producer.set_delivery_delay(1000)
        except pyjms.JMSRuntimeException as e:
            return f"{label:18} not available on this provider: {e}"
        receiver = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--receive",
                url,
                queue,
                str(n),
                str(window_ms / 1000 + 120),
                str(warmup),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        if "ready" not in receiver.stdout.readline():
            raise SystemExit(f"the {mode} receiver did not start")
        body = "x" * 100
        warm_q = ctx.create_queue(queue + ".WARMUP")
        for i in range(warmup // CHUNK):
            producer.set_delivery_delay(1000 + (i * 1237) % 9000).send_batch(warm_q, [body] * CHUNK)
        warm = receiver.stdout.readline()
        if not warm.startswith("warm") or int(warm.split()[1]) < warmup // CHUNK * CHUNK:
            receiver.kill()
            return f"{label:18} warm-up incomplete: {warm.strip()!r}"
        with PeakRss(memory_pid) as rss:
            t0 = time.time()
            for i, d in enumerate(delays):  # each text numbered, so that a copy shows
                bodies = [f"{i * CHUNK + j:09d}" + body[9:] for j in range(CHUNK)]
                producer.set_delivery_delay(d).send_batch(q, bodies)
            send_s = time.time() - t0
            load = os.getloadavg()[0]
            output = receiver.communicate()[0]
        result = json.loads(output.strip().splitlines()[-1])
    if not result["received"]:
        return f"{label:18} nothing received"
    lost = n - result["received"]
    duplicates = result["duplicates"]
    verdict = ""
    if mode == "staging":
        met = result["p99"] <= TARGET_P99_MS and result["early"] == 0 and lost == 0 and duplicates == 0
        verdict = f"  p99 {'meets' if met else 'misses'} target {TARGET_P99_MS} ms"
        if label == "staging":  # the processor in the broker's process
            verdict += f", RSS {'meets' if rss.peak <= TARGET_RSS_MB else 'misses'} target {TARGET_RSS_MB} MB"
    return (
        f"{label:18} {result['received']:>8,} {result['p50']:>7} {result['p99']:>7} {result['max']:>7}"
        f" {result['early']:>6} {lost:>5} {duplicates:>5}   {rss.peak:8.0f} MB   (sent in {send_s:.1f} s, load {load:.1f}){verdict}"
    )


#: peer -> (pyjms broker arguments, the URL scheme of its ready line to use)
PEERS = {
    "activemq": ((), "tcp://"),
    "amqp": ((), "amqp://"),
    "artemis": (("--provider", "artemis"), "artemis+tcp://"),
    "amqp-artemis": (("--provider", "artemis"), "amqp://"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--window-s", type=int, default=30)
    ap.add_argument(
        "--modes",
        default="native@artemis,native@amqp-artemis,native@amqp,scheduler,staging,"
        "staging@artemis,staging-external",
    )
    ap.add_argument(
        "--warmup",
        type=int,
        default=20_000,
        help="unmeasured messages sent and received first, per mode (0: measure cold JVMs)",
    )
    ap.add_argument(
        "--receive", nargs=5, metavar=("URL", "QUEUE", "N", "DEADLINE_S", "WARMUP"), help=argparse.SUPPRESS
    )
    args = ap.parse_args()
    if args.receive:
        url, queue, count, deadline_s, warmup = args.receive
        return receive(url, queue, int(count), float(deadline_s), int(warmup))
    n = args.messages - args.messages % CHUNK
    print(
        f"pyjms delivery delay: {n:,} messages, delays spread over {args.window_s} s, over tcp://127.0.0.1"
        f" ({args.warmup:,} unmeasured warm-up messages first per mode; a new broker per mode)"
    )
    print(
        "lateness = receive time - delivery time, in ms; memory = peak RSS of the broker (with its delay"
        " processor) or, for staging-external, of the delay processor's own process"
    )
    print(
        f"targets (issue 17, at 100,000 over 30 s): staging p99 <= {TARGET_P99_MS} ms, none early, lost or twice;"
        f" broker with its delay processor <= {TARGET_RSS_MB} MB RSS; load average now"
        f" {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n"
    )
    print(
        f"{'mode':18} {'received':>8} {'p50':>7} {'p99':>7} {'max':>7} {'early':>6} {'lost':>5} {'dup':>5}   {'memory':>11}"
    )
    for label in args.modes.split(","):
        mode, _, peer = label.partition("@")
        external = mode == "staging-external"
        broker_args, scheme = PEERS[peer or "activemq"]
        # a pyjms broker runs its delay processor in its own process unless told not to
        try:
            broker = start(
                ["broker", "--port", "0", *broker_args, *(["--no-delay-processor"] if external else [])],
                "ready:",
            )
        except SystemExit as e:
            print(f"{label:18} not measured: {e}", flush=True)
            continue
        urls = broker.ready_line.split("ready:")[1].split()  # type: ignore[attr-defined]
        url = next((u for u in urls if u.startswith(scheme)), urls[0])
        processes = [broker]
        try:
            memory_pid = broker.pid
            if external:
                processor = start(["delay-processor", "--url", url, "--report-every", "3600"], "running")
                processes.insert(0, processor)
                memory_pid = processor.pid
            print(
                run_mode(
                    url,
                    "staging" if external else mode,
                    n,
                    args.window_s * 1000,
                    memory_pid,
                    args.warmup,
                    label=label,
                ),
                flush=True,
            )
        finally:
            for p in processes:
                p.terminate()
                p.wait()


if __name__ == "__main__":
    main()
