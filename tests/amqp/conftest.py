"""AMQP 1.0 peers for the tests in tests/amqp: pyjms reaches each through Qpid JMS.

Every test that takes ``amqp_peer`` runs once per peer in ``AMQP_PEERS``. A peer is a real
broker with an AMQP 1.0 listener: the embedded ActiveMQ Classic broker's AMQP connector, both
inside this process and in a ``pyjms broker`` process, and the AMQP acceptor of a ``pyjms
broker --provider artemis`` process. Another broker joins by a fixture that returns an
:class:`AmqpPeer` and its name in ``AMQP_PEERS``; tests read what the peer offers from the
``AmqpPeer``, never from its name.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import pyjms
from tests.conftest import ROOT, BrokerProcess


@dataclass(frozen=True)
class AmqpPeer:
    """One AMQP 1.0 peer and what the tests may expect of it."""

    #: the URL pyjms connects to (amqp://127.0.0.1:PORT, as the broker printed it)
    url: str
    #: the same broker through its own protocol (OpenWire for ActiveMQ), for interop tests
    native_url: str
    #: what the peer calls itself in its AMQP open frame, "product version"
    product: str
    #: whether it offers SHARED-SUBS (else shared consumers are refused, naming the peer)
    shared_subscriptions: bool
    #: whether it offers DELAYED_DELIVERY, and honours it
    delayed_delivery: bool = True
    #: the delay mechanism ``auto`` chooses on it (ActiveMQ Classic: staging, its processor
    #: answering, before the scheduler its DELAYED_DELIVERY hands to; else the client's own)
    auto_delay: str = "native"
    #: whether it resends a delayed message with a new JMSTimestamp and the TTL counted again
    #: (ActiveMQ Classic's scheduler); pyjms compensates for its own sends, plain clients do not
    restamps_delayed: bool = False
    #: whether it converts AMQP messages for its own protocol's receivers (Artemis does: a core
    #: receiver sees a new JMSMessageID, and the AMQP sender's in the NATIVE_MESSAGE_ID property)
    converts_for_native: bool = False
    #: whether a pyjms delay processor serves it (the staging mechanism can be chosen)
    staging: bool = True

    def sent_id_as_native_sees_it(self, got: Any) -> str | None:
        """The AMQP sender's JMSMessageID, as a receiver through the native protocol reads it."""
        return (
            got.get_string_property("NATIVE_MESSAGE_ID")
            if self.converts_for_native
            else got.get_jms_message_id()
        )


@contextlib.contextmanager
def stock_broker(script: str, *args: str) -> Iterator[str]:
    """A broker not started by pyjms, configured as a user would: ``script`` runs it in a process
    of its own, prints ``ready URL`` and stops it when its stdin closes. Yields the URL."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("ready "), f"the stock broker did not start: {line!r}"
        yield line.split()[1]
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _activemq_version() -> str:
    """ "ActiveMQ 6.3.1": what ActiveMQ Classic says in its AMQP open frame, from its jars' version."""
    from pyjms.bridge.classpath import provider_jars

    jar = next(Path(j) for j in provider_jars("activemq") if Path(j).name.startswith("activemq-broker-"))
    return "ActiveMQ " + jar.name[len("activemq-broker-") : -len(".jar")]


@pytest.fixture(scope="session")
def activemq_in_process() -> Iterator[AmqpPeer]:
    """An embedded ActiveMQ Classic broker in this process, with its AMQP connector."""
    from pyjms.broker import EmbeddedBroker

    broker = EmbeddedBroker(amqp_port=0)
    assert broker.amqp_url is not None
    yield AmqpPeer(
        broker.amqp_url,
        broker.vm_url,
        _activemq_version(),
        shared_subscriptions=False,
        restamps_delayed=True,
        auto_delay="staging",
    )
    broker.stop()


@pytest.fixture(scope="session")
def activemq_process(tcp_broker: BrokerProcess) -> AmqpPeer:
    """The ``pyjms broker`` process of tests/conftest.py, through the AMQP URL on its ready line."""
    amqp = next(u for u in tcp_broker.uris if u.startswith("amqp://"))
    return AmqpPeer(
        amqp,
        tcp_broker.tcp_url,
        _activemq_version(),
        shared_subscriptions=False,
        restamps_delayed=True,
        auto_delay="staging",
    )


def _artemis_version() -> str:
    """ "apache-activemq-artemis 2.55.0": what Artemis says in its AMQP open frame."""
    from pyjms.bridge.classpath import provider_jars

    jar = next(Path(j) for j in provider_jars("artemis") if Path(j).name.startswith("artemis-server-"))
    return "apache-activemq-artemis " + jar.name[len("artemis-server-") : -len(".jar")]


@pytest.fixture(scope="session")
def artemis_process(artemis_tcp_broker: BrokerProcess) -> AmqpPeer:
    """The ``pyjms broker --provider artemis`` process (tests/conftest.py): AMQP on the port of its
    core protocol, through the amqp:// URL on its ready line. Artemis offers DELAYED_DELIVERY and
    SHARED-SUBS, and keeps a delayed message's timestamp."""
    assert artemis_tcp_broker.amqp_url is not None
    return AmqpPeer(
        artemis_tcp_broker.amqp_url,
        artemis_tcp_broker.tcp_url,
        _artemis_version(),
        shared_subscriptions=True,
        converts_for_native=True,
    )


#: the fixtures that give AMQP peers; each test taking ``amqp_peer`` runs against every one
AMQP_PEERS = ["activemq_in_process", "activemq_process", "artemis_process"]


@pytest.fixture(params=AMQP_PEERS)
def amqp_peer(request: pytest.FixtureRequest) -> AmqpPeer:
    return request.getfixturevalue(request.param)


@pytest.fixture
def amqp(amqp_peer: AmqpPeer) -> Iterator[pyjms.JMSContext]:
    """An auto-acknowledge context on the peer, through Qpid JMS, whose delays are the client's
    own (``auto`` may choose staging: test_conformance)."""
    with pyjms.ConnectionFactory(amqp_peer.url, delivery_delay="native").create_context() as ctx:
        yield ctx


@pytest.fixture
def native(amqp_peer: AmqpPeer) -> Iterator[pyjms.JMSContext]:
    """A context on the same broker through its own protocol and client."""
    with pyjms.ConnectionFactory(amqp_peer.native_url).create_context() as ctx:
        yield ctx
