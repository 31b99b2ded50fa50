"""The options pyjms makes its Qpid JMS client with, and that a URL's own options win."""

from __future__ import annotations

import pytest

import pyjms
from pyjms.bridge import jvm
from tests.amqp.conftest import AmqpPeer


def _round_trip(url: str, **options: str) -> str:
    with pyjms.ConnectionFactory(url, **options).create_context() as ctx:
        q = ctx.create_queue("CLIENT.OPTIONS")
        ctx.create_producer().send(q, "there and back")
        got = ctx.create_consumer(q).receive(10_000)
        return got.get_text() if got is not None else "nothing"


def test_a_url_that_names_how_the_client_waits_keeps_its_choice(amqp_peer: AmqpPeer) -> None:
    """pyjms chooses provider.futureType only for a URL that names none: a user's value reaches
    Qpid JMS as given (a wrong one is refused naming it, a right one works)."""
    with pytest.raises(pyjms.JMSRuntimeException, match="nonsense"):
        _round_trip(f"{amqp_peer.url}?provider.futureType=nonsense")
    assert _round_trip(f"{amqp_peer.url}?provider.futureType=conservative") == "there and back"


def test_a_failover_url_whose_nested_urls_have_queries_still_connects(amqp_peer: AmqpPeer) -> None:
    """The option goes on the failover URL's own query, not inside a nested URL's."""
    url = f"failover:({amqp_peer.url}?amqp.idleTimeout=60000)?failover.maxReconnectAttempts=2"
    assert _round_trip(url, provider="amqp") == "there and back"


@pytest.mark.parametrize(
    ("given", "cpus", "made"),
    [
        ("amqp://h:5672", 2, "amqp://h:5672?provider.futureType=balanced"),
        (
            "amqp://h:5672?jms.prefetchPolicy.all=10",
            3,
            "amqp://h:5672?jms.prefetchPolicy.all=10&provider.futureType=balanced",
        ),
        ("amqps://h:5671#x", 1, "amqps://h:5671?provider.futureType=balanced#x"),
        (
            "failover:(amqp://a?amqp.idleTimeout=1,amqp://b)",
            2,
            "failover:(amqp://a?amqp.idleTimeout=1,amqp://b)?provider.futureType=balanced",
        ),
        (
            "failover:(amqp://a?x=1)?failover.maxReconnectAttempts=2",
            2,
            "failover:(amqp://a?x=1)?failover.maxReconnectAttempts=2&provider.futureType=balanced",
        ),
        ("amqp://h:5672?provider.futureType=progressive", 2, "amqp://h:5672?provider.futureType=progressive"),
        ("amqp://h:5672", 4, "amqp://h:5672"),  # from 4 CPUs up Qpid JMS's own choice spins already
    ],
)
def test_on_fewer_than_4_cpus_the_client_spins_briefly_before_it_parks(
    artemis_process: AmqpPeer, given: str, cpus: int, made: str
) -> None:
    """Qpid JMS parks at once on fewer than 4 CPUs, and every send and acknowledgement waits on
    its I/O thread; pyjms asks it to spin and yield first ("balanced": docs/performance.md)."""
    _round_trip(artemis_process.url)  # the JVM, with Qpid JMS's classes
    provider = jvm.shim().jclass("org.pyjms.shim.amqp.AmqpProvider")
    assert str(provider.waitingOnFewCpus(given, cpus)) == made
