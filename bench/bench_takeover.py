"""Takeover: how soon a standby pyjms service takes over when the active one is SIGKILLed
(issue 32 item 5), on ActiveMQ and Artemis, each a ``pyjms broker`` process over TCP.

For each service (the delay processor, the mark service) two standalone instances run beside
a broker that runs neither itself. Each round SIGKILLs the active one and measures:

* **elected**: SIGKILL → the standby prints that it is active (the broker handed it the lock);
* **serving**: SIGKILL → the service does its job again: a delayed message due 100 ms after the
  kill is delivered; a cooperative browse is granted a mark.
* **late** (delay processor): how late the load's messages due in the 5 s after each kill
  arrived (the probe is sent after the kill, so the new leader's sorter usually puts it itself;
  the load's messages were filed by the killed processor, and wait for the new leader's slots).

A new standby is started after each kill but the last (after it, the load goes on for the 5 s
the late figure covers), so two instances stand for every round. Throughout, a steady load of
delayed messages (delays of 0.2-3 s) runs through the staging queue, and at the end every one
is checked: lost, duplicated, early. Prints the median and the max of each
figure against the target (5 s). There is no raw Java row: no JMS client elects a leader.
Exits 1 only if a delayed message was lost, duplicated or early (times are figures, not checks).

    python bench/bench_takeover.py [--kills 10] [--providers activemq,artemis] [--services delay,marks]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyjms  # noqa: E402
from pyjms.browse import BROWSE_CO_OP  # noqa: E402
from tests.conftest import BrokerProcess  # noqa: E402
from tests.faults.processes import ACTIVE, PyjmsProcess  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 5.0
#: the late figure: the load's messages due in this long after each kill
LATE_WINDOW_MS = 5000
#: a service says it became active: the processor prints "active", the mark service "...: active"


class ServiceProcess(PyjmsProcess):
    """``python -m pyjms <command> --url URL``, its output lines kept with when they came."""

    def active_since(self, after: float = 0.0) -> float | None:
        """When it first said it became active after ``after`` (None: it has not)."""
        return self.line_at(lambda line: bool(ACTIVE.search(line)), after)


def wait_for(condition, within_s: float, what: str):
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.01)
    raise SystemExit(f"bench_takeover: {what} did not happen within {within_s:g} s")


class DelayedLoad:
    """Delayed messages through the staging queue at a steady pace, each checked on arrival."""

    def __init__(self, factory: pyjms.ConnectionFactory, queue: str, every_s: float = 0.01) -> None:
        self.factory, self.queue, self.every_s = factory, queue, every_s
        self.sent: dict[str, int] = {}  # body -> due (epoch ms)
        self.got: dict[str, list[int]] = {}  # body -> arrival times (epoch ms)
        self.early = 0
        self._stop = threading.Event()
        self._settle_until = float("inf")
        self._threads = [threading.Thread(target=f, daemon=True) for f in (self._send, self._receive)]
        for t in self._threads:
            t.start()

    def _send(self) -> None:
        rng = random.Random(7)
        with self.factory.create_context() as ctx:
            q = ctx.create_queue(self.queue)
            producer = ctx.create_producer()
            n = 0
            while not self._stop.wait(self.every_s):
                delay = rng.randint(200, 3000)
                body = f"load-{n}"
                self.sent[body] = int(time.time() * 1000) + delay
                producer.set_delivery_delay(delay).send(q, body)
                n += 1

    def _receive(self) -> None:
        with self.factory.create_context() as ctx:
            consumer = ctx.create_consumer(ctx.create_queue(self.queue))
            while not self._stop.is_set() or len(self.got) < len(self.sent):
                m = consumer.receive(500)
                if m is None:
                    if self._stop.is_set() and time.monotonic() > self._settle_until:
                        return
                    continue
                body = m.get_text()
                arrived = int(time.time() * 1000)
                self.got.setdefault(body, []).append(arrived)
                if m.get_jms_delivery_time() > arrived:
                    self.early += 1

    def lateness_after(self, kills_ms: list[int], window_ms: int = LATE_WINDOW_MS) -> list[float]:
        """Per kill (epoch ms), the largest lateness (s) of a message due in the window after it."""
        return [
            max(
                (
                    min(self.got[b]) - due
                    for b, due in self.sent.items()
                    if b in self.got and k <= due < k + window_ms
                ),
                default=0,
            )
            / 1000
            for k in kills_ms
        ]

    def finish(self, settle_s: float = 30.0) -> str:
        self._settle_until = time.monotonic() + settle_s
        self._stop.set()
        for t in self._threads:
            t.join(settle_s + 10)
        lost = sum(1 for b in self.sent if b not in self.got)
        duplicated = sum(len(v) - 1 for v in self.got.values() if len(v) > 1)
        return (
            f"delayed load: sent {len(self.sent)} received {len(self.got)} lost {lost} "
            f"duplicated {duplicated} early {self.early}"
        )


def probe_delay(factory: pyjms.ConnectionFactory, queue: str, killed: float) -> float:
    """SIGKILL → delivery of a message sent at the kill with a 100 ms delay."""
    with factory.create_context() as ctx:
        q = ctx.create_queue(queue)
        body = f"probe-{uuid.uuid4().hex[:8]}"
        ctx.create_producer().set_delivery_delay(100).send(q, body)
        consumer = ctx.create_consumer(q)
        while (m := consumer.receive(30_000)) is not None:
            if m.get_text() == body:
                return time.monotonic() - killed
        raise SystemExit("bench_takeover: a probe was not delivered within 30 s of a takeover")


def probe_marks(browser, killed: float) -> float:
    """SIGKILL → a cooperative browse granted a mark again."""
    deadline = killed + 60
    while time.monotonic() < deadline:
        try:
            if browser.get_or_none(BROWSE_CO_OP, wait_ms=100) is not None:
                return time.monotonic() - killed
        except pyjms.JMSRuntimeException:
            time.sleep(0.05)  # nothing answered yet: the takeover is under way
    raise SystemExit("bench_takeover: no mark was granted within 60 s of a takeover")


def run_service(service: str, provider: str, kills: int) -> tuple[list[float], list[float], list[float], str]:
    broker = BrokerProcess("--no-delay-processor", "--no-mark-service", provider=provider)
    url = broker.tcp_url
    command = "delay-processor" if service == "delay" else "mark-service"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging")
    instances = [ServiceProcess(command, "--url", url) for _ in range(2)]
    elected: list[float] = []
    serving: list[float] = []
    killed_ms: list[int] = []
    late: list[float] = []
    load = None
    browser = ctx = None
    try:
        wait_for(lambda: any(i.active_since() for i in instances), 120, f"a {command} becoming active")
        wait_for(
            lambda: all(i.said("standing by") or i.active_since() for i in instances), 120, "both standing"
        )
        if service == "delay":
            load = DelayedLoad(factory, f"TAKEOVER.LOAD.{uuid.uuid4().hex[:6]}")
            probe_queue = f"TAKEOVER.PROBE.{uuid.uuid4().hex[:6]}"
        else:
            ctx = factory.create_context()
            q = ctx.create_queue(f"TAKEOVER.MARKS.{uuid.uuid4().hex[:6]}")
            ctx.create_producer().send_batch(q, [f"m{i}" for i in range(kills * 50 + 100)])
            browser = ctx.create_marking_browser(q, cooperative=True)
            browser.get(BROWSE_CO_OP, wait_ms=5000)  # the handle is open and marking
        time.sleep(1.0)
        for round_ in range(kills):
            active = next(i for i in instances if i.proc.poll() is None and i.active_since())
            standby = next(i for i in instances if i is not active and i.proc.poll() is None)
            killed = time.monotonic()
            killed_ms.append(int(time.time() * 1000))
            active.kill()
            if service == "delay":
                serving.append(probe_delay(factory, probe_queue, killed))
            else:
                serving.append(probe_marks(browser, killed))
            at = wait_for(lambda s=standby: s.active_since(killed), 60, "the standby becoming active")
            elected.append(at - killed)
            if round_ == kills - 1:  # the last round: no takeover follows, so no new standby
                instances = [standby]
                if load is not None:  # the load goes on over the window its lateness is taken in
                    time.sleep(max(0.0, killed + LATE_WINDOW_MS / 1000 - time.monotonic()))
                break
            instances = [standby, ServiceProcess(command, "--url", url)]
            wait_for(lambda: instances[1].said("standing by"), 120, "a new standby standing by")
            time.sleep(0.5)
        checked = (
            load.finish()
            if load is not None
            else "marks: this bench times the takeover only; tests/faults/test_mark_takeover.py checks no message goes to two dispatchers"
        )
        if load is not None:
            late = load.lateness_after(killed_ms)
    finally:
        if browser is not None:
            browser.close()  # its lease renewals stop with it
        if ctx is not None:
            ctx.close()
        for i in instances:
            i.kill()
        broker.stop()
    return elected, serving, late, checked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--providers", default="activemq,artemis")
    ap.add_argument("--services", default="delay,marks")
    args = ap.parse_args()
    failed = False
    for provider in args.providers.split(","):
        for service in args.services.split(","):
            name = "delay processor" if service == "delay" else "mark service"
            print(
                f"== {name} on {provider} (a pyjms broker over TCP; 2 instances, {args.kills} SIGKILLs)",
                flush=True,
            )
            elected, serving, late, checked = run_service(service, provider, args.kills)
            what = (
                "a delayed message due 100 ms after the kill delivered"
                if service == "delay"
                else "a mark granted"
            )
            rows = [("elected (standby says active)", elected), (f"serving ({what})", serving)]
            if late:
                rows.append(("late (the load's messages due in the 5 s after a kill, worst)", late))
            for label, values in rows:
                med, most = statistics.median(values), max(values)
                ok = most <= TARGET_S
                print(
                    f"  {label:<70} median {med:6.2f} s  max {most:6.2f} s   target <= {TARGET_S:g} s "
                    f"{'met' if ok else 'MISSED'}",
                    flush=True,
                )
            print(f"  {checked}", flush=True)
            if " lost 0 duplicated 0 early 0" not in checked and service == "delay":
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
