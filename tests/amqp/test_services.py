"""pyjms's own services answer requests sent over AMQP 1.0 to a pyjms Artemis broker (issue 32).

The broker's admin service (PYJMS.ADMIN), mark service (PYJMS.MARKS) and its delay processor's
ping run in the broker's process on Artemis's own client; the request comes through Qpid JMS
with a temporary queue of that client as its reply-to. Each is asked here over AMQP, of a broker
in this process (the services then share a JVM with the Qpid JMS requester, whose temporary
queue Artemis's client refused as a "Foreign destination", so nothing answered) and of a
``pyjms broker --provider artemis`` process, through the public API and the CLI.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest

import pyjms
from pyjms.broker.admin import Admin
from pyjms.browse import BROWSE_CO_OP, NoMessageAvailable, mark_browse_interval
from pyjms.delay.processor import processor_answers
from pyjms.providers.artemis import EmbeddedArtemisBroker
from tests.conftest import ROOT, BrokerProcess


@pytest.fixture(scope="module")
def artemis_here() -> Iterator[EmbeddedArtemisBroker]:
    """A pyjms Artemis broker in this process, with its AMQP acceptor."""
    broker = EmbeddedArtemisBroker(port=0)
    yield broker
    broker.stop()


@pytest.fixture(params=["in_process", "process"])
def amqp_url(request: pytest.FixtureRequest) -> str:
    """The AMQP URL of a pyjms Artemis broker: in this process, or a ``pyjms broker`` process."""
    if request.param == "in_process":
        url = request.getfixturevalue("artemis_here").amqp_url
    else:
        url = request.getfixturevalue("artemis_tcp_broker").amqp_url
    assert url is not None and url.startswith("amqp://")
    return url


def _name() -> str:
    return f"AMQP.SERVICES.{uuid.uuid4().hex[:8]}"


def _pyjms(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pyjms *args``, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "pyjms", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_admin_service_answers_over_amqp(amqp_url: str) -> None:
    admin = Admin(pyjms.ConnectionFactory(amqp_url))
    queue = _name()
    defined = admin.define_queue(queue, max_depth=7)
    assert defined.max_depth == 7
    described = admin.describe(pyjms.Queue(queue))
    assert described is not None and described.max_depth == 7
    listed = {row["destination"] for row in admin.destinations()}
    assert "queue://PYJMS.ADMIN" in listed
    admin.delete(pyjms.Queue(queue))
    assert admin.describe(pyjms.Queue(queue)) is None


def test_pyjms_queues_over_amqp_lists_the_brokers_destinations(amqp_url: str) -> None:
    queue = _name()
    with pyjms.ConnectionFactory(amqp_url).create_context() as ctx:
        ctx.create_producer().send(ctx.create_queue(queue), "one")
    listed = _pyjms("queues", "--url", amqp_url)
    assert listed.returncode == 0, listed.stderr
    row = next(line.split() for line in listed.stdout.splitlines() if line.startswith(f"queue://{queue} "))
    assert row[1] == "1"  # its depth


def test_mark_service_answers_over_amqp(amqp_url: str) -> None:
    factory = pyjms.ConnectionFactory(amqp_url)
    assert mark_browse_interval(factory) > 0
    queue = _name()
    with factory.create_context() as ctx:
        q = ctx.create_queue(queue)
        ctx.create_producer().send(q, "marked")
        first = ctx.create_marking_browser(q, cooperative=True)
        second = ctx.create_marking_browser(q, cooperative=True)
        got = first.get(BROWSE_CO_OP, wait_ms=5000)
        assert got is not None and got.get_text() == "marked"
        # marked for the first handle: another cooperating handle does not get it too
        with pytest.raises(NoMessageAvailable):
            second.get(BROWSE_CO_OP, wait_ms=500)
        first.close()
        second.close()


def test_delay_processor_answers_a_ping_and_delivers_a_staged_send_over_amqp(amqp_url: str) -> None:
    factory = pyjms.ConnectionFactory(amqp_url, delivery_delay="staging")
    queue = _name()
    with factory.create_context() as ctx:
        assert processor_answers(ctx, timeout_ms=5000)
        q = ctx.create_queue(queue)
        with ctx.create_consumer(q) as consumer:
            sent_at = time.time()
            ctx.create_producer().set_delivery_delay(500).send(q, "staged")
            got = consumer.receive(10_000)
            arrived_at = time.time()
    assert got is not None and got.get_text() == "staged"
    assert arrived_at - sent_at >= 0.5


def test_delay_processor_status_over_amqp_from_the_cli(artemis_tcp_broker: BrokerProcess) -> None:
    status = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyjms",
            "delay-processor",
            "--url",
            str(artemis_tcp_broker.amqp_url),
            "--status",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert status.returncode == 0 and ": active, healthy" in status.stdout, (status.stdout, status.stderr)
