"""The conformance kit over AMQP 1.0 (Qpid JMS): a full run of ``pyjms conformance`` against
ActiveMQ Classic's and Artemis's AMQP connectors, every rule in every delay mode each offers
(native, which is ActiveMQ's scheduler there, and staging), and the API on a few rules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import pyjms
from pyjms import conformance
from tests.amqp.conftest import AmqpPeer
from tests.conformance_kit import FullRun, full_run, left_on_the_broker

#: one full run per broker: the in-process ActiveMQ peer is the same broker as the process
CONFIGURATIONS = {"activemq_process": "AMQP to ActiveMQ", "artemis_process": "AMQP to Artemis"}


@pytest.fixture(scope="module")
def full_runs(activemq_process, artemis_process, tmp_path_factory) -> Iterator[dict[str, FullRun]]:
    """Both configurations' full runs, started together, each on its own broker."""
    runs = {
        label: FullRun(peer.url, tmp_path_factory.mktemp(name))
        for name, label, peer in (
            ("activemq_process", CONFIGURATIONS["activemq_process"], activemq_process),
            ("artemis_process", CONFIGURATIONS["artemis_process"], artemis_process),
        )
    }
    yield runs
    for run in runs.values():
        run.stop()


@pytest.fixture(params=list(CONFIGURATIONS))
def peer(request: pytest.FixtureRequest) -> tuple[str, AmqpPeer]:
    return CONFIGURATIONS[request.param], request.getfixturevalue(request.param)


def test_conformance_command_over_amqp_runs_every_rule_in_every_mode(peer, full_runs) -> None:
    label, amqp_peer = peer
    rows = full_run(label, full_runs[label], {"native", "staging"})
    assert all(r["provider"].startswith("QpidJMS") for r in rows)
    assert left_on_the_broker(pyjms.ConnectionFactory(amqp_peer.native_url)) == []


def test_the_api_over_amqp(activemq_process: AmqpPeer) -> None:
    rows = conformance.run(
        pyjms.ConnectionFactory(activemq_process.url), modes=["staging"], rules=["D01", "E13"]
    )
    assert [(r.id, r.mode, r.result) for r in rows] == [
        ("E13", "staging", "pass"),
        ("D01", "staging", "pass"),
    ], rows
