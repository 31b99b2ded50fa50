"""Bench: how long cooperative browsing waits when the active mark service is SIGKILLed (issue 32).

A broker in this process (ActiveMQ or Artemis, with a TCP port) and two ``pyjms mark-service``
processes beside it; the broker's own mark service steps down, so a process is active. Then,
--kills times: the active process (found by the instance its answers name) is SIGKILLed, and
the time is taken until a client's request is answered by another service (a standby that took
over); a new process replaces the killed one as standby. Prints each kill and the median and
max. Exits 1 if a takeover took more than 5 s.

    python bench/bench_mark_takeover.py [--provider activemq|artemis] [--kills 10]
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyjms  # noqa: E402
from pyjms.api.requests import ServiceUnavailable  # noqa: E402
from pyjms.browse.client import MarkClient  # noqa: E402
from tests.faults.mark_services import MARK_LEASE_MS, MarkServiceProcess  # noqa: E402

TAKEOVER_S = 5.0


def active_instance(ctx: pyjms.JMSContext, deadline: float, not_this: str | None = None) -> str:
    """The instance (host:pid) of the mark service that answers, once it is not ``not_this``."""
    with MarkClient(ctx, timeout_ms=250) as marks:
        while True:
            try:
                instance = str(marks.call("config")["instance"])
                if instance != not_this:
                    return instance
            except ServiceUnavailable:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"no mark service other than {not_this} answered")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=("activemq", "artemis"), default="activemq")
    parser.add_argument("--kills", type=int, default=10)
    args = parser.parse_args(argv)
    from pyjms.broker import EmbeddedBroker
    from pyjms.providers.artemis import EmbeddedArtemisBroker

    broker_class = EmbeddedArtemisBroker if args.provider == "artemis" else EmbeddedBroker
    broker = broker_class(port=0, mark_lease_ms=MARK_LEASE_MS)
    url = str(broker.tcp_url)
    services = [MarkServiceProcess(url) for _ in range(2)]
    times: list[float] = []
    try:
        broker.marks.stop()  # the broker's own service steps down: a process takes over
        with pyjms.ConnectionFactory(url).create_context() as ctx:
            active = active_instance(ctx, time.monotonic() + 30, not_this=broker.marks.instance)
            for kill in range(1, args.kills + 1):
                pid = int(active.rsplit(":", 1)[1])
                victim = next(s for s in services if s.proc.pid == pid)
                killed = time.monotonic()
                victim.proc.send_signal(signal.SIGKILL)
                active = active_instance(ctx, killed + 60, not_this=active)
                took = time.monotonic() - killed
                times.append(took)
                print(f"kill {kill}: {args.provider} mark service takeover {took:.3f} s", flush=True)
                victim.stop()
                services.remove(victim)
                services.append(MarkServiceProcess(url))  # a new standby
    finally:
        for s in services:
            s.stop()
        broker.stop()
    print(
        f"{args.provider}: mark service takeover after SIGKILL over {len(times)} kills: "
        f"median {statistics.median(times):.3f} s, max {max(times):.3f} s",
        flush=True,
    )
    return 0 if max(times) <= TAKEOVER_S else 1


if __name__ == "__main__":
    sys.exit(main())
