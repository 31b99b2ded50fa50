"""The delay processor after a SIGKILL of the broker that hosts it (issue 15, finding 3).

One run: a ``pyjms broker --data DIR`` process (KahaDB, the delay processor inside it); N
persistent messages sent through the staging queue with delays spread over a window; a
transacted consumer in this process counting what it committed; the broker SIGKILLed at a
point in the window and started again on the same data; then everything is waited for.
Reported: sent, received, lost, duplicated, early (received before its delivery time),
stranded (left on the staging or slot queues at the end), the slot markers left, and the
time from the restarted broker's "ready" to the first and the last delivery after it.

Used by tests/faults/test_delay_recovery.py (a quick run) and bench/soak_delay_recovery.py
(``make soak``: ten long runs, as a table).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyjms
from pyjms.bridge.contract import SLOT_PREFIX, SLOTS_PREFIX, STAGING_QUEUE
from pyjms.errors import JMSRuntimeException

ROOT = Path(__file__).resolve().parents[2]
TARGET = "RECOVERY.TARGET"


class Broker:
    """``python -m pyjms broker --data DIR`` on a free port, its output in a log file."""

    def __init__(self, data_dir: Path, log: Path) -> None:
        self.log = log
        self._out = open(log, "a")  # noqa: SIM115 - closed by stop/kill
        start = log.stat().st_size
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pyjms",
                "broker",
                "--port",
                "0",
                "--data",
                str(data_dir),
                "--name",
                "pyjms-recovery",
            ],
            stdout=self._out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace")[start:]
            if match := re.search(r"ready:(.*)", text):
                self.url = next(u for u in match.group(1).split() if u.startswith("tcp://"))
                self.ready_at = time.time()
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"the broker did not start; see {log}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._out.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait()
        self._out.close()


@dataclass
class RunResult:
    sent: int = 0
    received: int = 0
    lost: int = 0
    duplicated: int = 0
    early: int = 0
    stranded: int = 0
    markers_left: int = 0
    dead_lettered: int = 0
    in_doubt: int = 0  # received in a consumer transaction whose commit failed, never again
    kill_after_s: float = 0.0
    first_after_restart_s: float | None = None
    last_after_restart_s: float | None = None
    worst_lateness_ms: int = 0
    restart_s: float = 0.0  # from the kill to the restarted broker's "ready"
    log: str = ""

    #: the counts a soak totals over its runs
    COUNTS = (
        "sent",
        "received",
        "lost",
        "duplicated",
        "early",
        "stranded",
        "markers_left",
        "dead_lettered",
        "in_doubt",
    )
    #: a run's row in the soak's table
    ROW = (
        *COUNTS,
        "kill_after_s",
        "restart_s",
        "first_after_restart_s",
        "last_after_restart_s",
        "worst_lateness_ms",
    )


@dataclass
class _Received:
    """What the consumer committed: (seq, receive ms, delivery time ms) per message; and what
    it received in a transaction whose commit failed with the broker (in doubt: committed or
    not, the broker alone knows; if not, it comes again)."""

    rows: list[tuple[int, int, int]] = field(default_factory=list)
    in_doubt: list[tuple[int, int, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _consume(url_of: list[str], got: _Received, stop: threading.Event) -> None:
    """Receives in transactions of up to 500 and records only what was committed; reconnects
    to the broker's newest URL when the connection fails."""
    while not stop.is_set():
        try:
            with pyjms.ConnectionFactory(url_of[-1]).create_context(pyjms.SESSION_TRANSACTED) as ctx:
                consumer = ctx.create_consumer(ctx.create_queue(TARGET))
                while not stop.is_set():
                    batch = consumer.receive_batch(500, 200)
                    if not batch:
                        continue
                    now = int(time.time() * 1000)
                    rows = [(m.get_int_property("seq"), now, m.get_jms_delivery_time()) for m in batch]
                    try:
                        ctx.commit()
                    except JMSRuntimeException:
                        with got.lock:
                            got.in_doubt.extend(rows)
                        raise
                    with got.lock:
                        got.rows.extend(rows)
        except JMSRuntimeException:
            stop.wait(0.2)  # the broker is gone: again, on its newest URL


def _count_left(url: str) -> tuple[int, int, int]:
    """Messages left on the staging and slot queues, markers left, and dead letters."""
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        names = ctx.channel.queue_names(SLOT_PREFIX, 2000, "list slot queues") or []
        stranded = 0
        for name in [STAGING_QUEUE, *names]:
            with ctx.create_browser(ctx.create_queue(name)) as browser:
                stranded += sum(1 for _ in browser)
        with ctx.create_browser(ctx.create_queue(SLOTS_PREFIX + STAGING_QUEUE)) as browser:
            markers = sum(1 for _ in browser)
        dead = 0
        for name in ("SYSTEM.DEAD.LETTER.QUEUE", "ActiveMQ.DLQ"):
            with ctx.create_browser(ctx.create_queue(name)) as browser:
                dead += sum(1 for _ in browser)
    return stranded, markers, dead


def run_once(
    messages: int,
    window_s: float,
    kill_at: float,
    *,
    seed: int = 0,
    settle_s: float = 60.0,
    work_dir: Path | None = None,
) -> RunResult:
    """One run. ``kill_at``: where in the delivery window the broker is killed (0..1)."""
    rng = random.Random(seed)
    work = Path(work_dir or tempfile.mkdtemp(prefix="pyjms-recovery-"))
    data, log = work / "data", work / "broker.log"
    log.touch()
    result = RunResult(log=str(log))
    broker = Broker(data, log)
    urls = [broker.url]
    got = _Received()
    stop = threading.Event()
    consumer = threading.Thread(target=_consume, args=(urls, got, stop), daemon=True)
    try:
        consumer.start()
        factory = pyjms.ConnectionFactory(broker.url, delivery_delay="staging")
        with factory.create_context() as ctx:
            producer = ctx.create_producer()  # persistent
            target = ctx.create_queue(TARGET)
            window_ms = int(window_s * 1000)
            for seq in range(messages):
                producer.set_delivery_delay(rng.randint(1000, 1000 + window_ms)).set_property("seq", seq)
                producer.send(target, "x")
        result.sent = messages
        sent_at = time.time()
        time.sleep(1.0 + kill_at * window_s)
        killed_at = time.time()
        result.kill_after_s = round(killed_at - sent_at, 2)
        broker.kill()
        broker = Broker(data, log)
        urls.append(broker.url)
        result.restart_s = round(broker.ready_at - killed_at, 2)
        deadline = time.monotonic() + window_s + settle_s
        while time.monotonic() < deadline:
            with got.lock:
                if len({row[0] for row in got.rows} | {row[0] for row in got.in_doubt}) >= messages:
                    break
            time.sleep(0.2)
        time.sleep(1.0)  # anything duplicated comes in too
        stop.set()
        consumer.join(10)
        result.stranded, result.markers_left, result.dead_lettered = _count_left(broker.url)
    finally:
        stop.set()
        broker.stop()
    rows = got.rows
    seqs = [row[0] for row in rows]
    reached = set(seqs) | {row[0] for row in got.in_doubt}
    result.in_doubt = len({row[0] for row in got.in_doubt} - set(seqs))
    result.received = len(reached)
    result.duplicated = len(seqs) - len(set(seqs))
    result.lost = messages - len(reached & set(range(messages)))
    result.early = sum(1 for _, at, due in rows if at < due)
    after = sorted(at for _, at, _ in rows if at >= broker.ready_at * 1000)
    if after:
        result.first_after_restart_s = round(after[0] / 1000 - broker.ready_at, 2)
        result.last_after_restart_s = round(after[-1] / 1000 - broker.ready_at, 2)
    result.worst_lateness_ms = max((at - due for _, at, due in rows), default=0)
    return result
