"""Issue 32, part 5 for the delay processor: high availability through the broker.

Two ``pyjms delay-processor`` processes serve one staging queue beside a ``pyjms broker
--no-delay-processor``: the broker elects one (pyjms.api.leadership), the other stands by. Under
delayed load spread over a few seconds the active one is SIGKILLed; the standby must say it is
active within 5 s, and every message must arrive once, none before it was due.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest

import pyjms
from tests.conftest import ROOT, BrokerProcess
from tests.faults.processes import ProcessorProcess

pytestmark = pytest.mark.slow

#: delayed messages, due over SPREAD_MS from FIRST_DELAY_MS after they are sent
N = 1500
FIRST_DELAY_MS = 800
SPREAD_MS = 4000
#: the standby says it is active within this long of the active one's SIGKILL
TAKEOVER_S = 5.0


# amqp: a lost drain used to stall a run of 1,500 messages about one in four (AmqpPlugin's
# service_properties; docs/amqp.md, "Apache Artemis as the peer")
@pytest.fixture(params=["activemq", "artemis", "amqp"])
def broker_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A broker without a delay processor, and the URL the processors and clients reach it by
    (amqp: Qpid JMS to the Artemis broker's AMQP acceptor)."""
    b = BrokerProcess(
        "--no-delay-processor", provider="activemq" if request.param == "activemq" else "artemis"
    )
    yield b.amqp_url if request.param == "amqp" else b.tcp_url
    b.stop()


def test_a_standby_processor_takes_over_within_5_s_of_a_sigkill_losing_duplicating_and_hastening_nothing(
    broker_url: str,
) -> None:
    url = broker_url
    first, second = ProcessorProcess(url), ProcessorProcess(url)
    try:
        # one is elected, the other stands by (each JVM may take a while to start)
        deadline = time.monotonic() + 60
        leader = None
        while leader is None and time.monotonic() < deadline:
            leader = next((p for p in (first, second) if p.wait_for("active", 0.1) is not None), None)
        assert leader is not None, (first.states, second.states)
        standby = second if leader is first else first
        assert ("standing by" in standby.states) or standby.wait_for("standing by", 30) is not None
        assert standby.wait_for("active", 1) is None  # one active at a time

        target = f"TAKEOVER.{uuid.uuid4().hex[:8]}"
        run = uuid.uuid4().hex[:8]
        due: dict[int, int] = {}
        factory = pyjms.ConnectionFactory(url, delivery_delay="staging")
        with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
            q = ctx.create_queue(target)
            p = ctx.create_producer().set_delivery_mode(pyjms.PERSISTENT).set_property("run", run)
            for i in range(N):
                delay = FIRST_DELAY_MS + i * SPREAD_MS // N
                due[i] = int(time.time() * 1000) + delay
                p.set_delivery_delay(delay).set_property("seq", i).send(q, str(i))
                if i % 100 == 99:
                    ctx.commit()
            ctx.commit()

        with pyjms.ConnectionFactory(url).create_context() as ctx:
            consumer = ctx.create_consumer(ctx.create_queue(target), f"run = '{run}'")
            got: list[tuple[int, int]] = []  # (seq, received at)

            def take(wait_ms: int) -> None:
                batch = consumer.receive_batch(1000, wait_ms)
                now = int(time.time() * 1000)
                got.extend((m.get_int_property("seq"), now) for m in batch)

            # mid-run: some delivered, some filed in slots, some still due
            # (on a loaded machine the first deliveries may come later: then it is killed as
            # soon as they do, which is mid-run still)
            kill_at = time.monotonic() + (FIRST_DELAY_MS + SPREAD_MS / 3) / 1000
            first_by = time.monotonic() + 30
            while (time.monotonic() < kill_at or not got) and time.monotonic() < first_by:
                take(50)
            assert 0 < len(got) < N, len(got)
            killed = time.monotonic()
            leader.proc.send_signal(signal.SIGKILL)
            leader.proc.wait(10)
            became_active = standby.wait_for("active", TAKEOVER_S + 5)
            assert became_active is not None, standby.states
            takeover_s = became_active - killed
            assert takeover_s <= TAKEOVER_S, f"took over after {takeover_s:.2f} s"

            # lost, not late: the slots the killed one filed and had not drained are overdue, and
            # the new one reads them at about two round trips to the broker each. One that had
            # fallen behind under load (two CPU hogs beside, over amqp) left ~700, and their last
            # message came 19-33 s after the kill (docs/reliability.md)
            deadline = time.monotonic() + 60
            while len(got) < N and time.monotonic() < deadline:
                take(200)
            extra = time.monotonic() + 1.5  # anything duplicated shows up here
            while time.monotonic() < extra:
                take(100)
        # where an operator looks: the one left answers that it is active and healthy
        status = subprocess.run(
            [sys.executable, "-m", "pyjms", "delay-processor", "--url", url, "--status"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert status.returncode == 0 and ": active, healthy" in status.stdout, (status.stdout, status.stderr)
    finally:
        first.stop()
        second.stop()

    counts = Counter(seq for seq, _ in got)
    lost = sorted(set(range(N)) - set(counts))
    duplicated = sorted(seq for seq, c in counts.items() if c > 1)
    early = sorted(seq for seq, at in got if at < due[seq])
    assert (lost, duplicated, early) == ([], [], []), (len(lost), len(duplicated), len(early), takeover_s)
    print(f"takeover after {takeover_s:.2f} s, {N} delivered once each, none early")
