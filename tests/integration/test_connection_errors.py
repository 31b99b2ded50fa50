"""Connection failures by kind, on a real broker process (issue 35): a broker that cannot be
reached is a BrokerUnavailableRuntimeException, a connection lost under use a
ConnectionBrokenRuntimeException, both Python's ConnectionError; and a context's exception
listener hears of the loss once, as in JMS."""

from __future__ import annotations

import signal
import threading
import time

import pytest

import pyjms
from pyjms import MQRC
from tests.conftest import BrokerProcess


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:1", "artemis+tcp://127.0.0.1:1", "amqp://127.0.0.1:1"])
def test_a_broker_nobody_listens_for_is_unavailable(address: str) -> None:
    with pytest.raises(ConnectionError) as e:
        pyjms.ConnectionFactory(address).create_context()
    assert isinstance(e.value, pyjms.BrokerUnavailableRuntimeException), repr(e.value)
    assert e.value.reason == MQRC.Q_MGR_NOT_AVAILABLE


@pytest.mark.parametrize(
    ("provider", "client"), [("activemq", "activemq"), ("artemis", "artemis"), ("activemq", "amqp")]
)
def test_a_killed_broker_tells_the_exception_listener_once_and_fails_sends_as_broken(
    provider: str, client: str
) -> None:
    """Each client (ActiveMQ's, Artemis's, Qpid JMS over AMQP) tells the shim's Java exception
    listener in its own way; the Python listener hears it once, as a ConnectionError."""
    broker = BrokerProcess(provider=provider)
    heard: list[pyjms.JMSRuntimeException] = []
    told = threading.Event()

    def listener(error: pyjms.JMSRuntimeException) -> None:
        heard.append(error)
        told.set()

    try:
        url = broker.amqp_url if client == "amqp" else broker.tcp_url
        assert url is not None
        ctx = pyjms.ConnectionFactory(url).create_context()
        sibling = ctx.create_context()
        assert ctx.get_exception_listener() is None
        sibling.set_exception_listener(listener)
        assert ctx.get_exception_listener() is listener  # the connection's, as in JMS
        q = ctx.create_queue("EXCEPTION.LISTENER.Q")
        ctx.create_producer().send(q, "before")
        broker.stop(signal.SIGKILL)
        assert told.wait(20), "the exception listener was not told of the lost connection"
        with pytest.raises(ConnectionError) as e:
            for _ in range(50):  # the client fails the next write
                ctx.create_producer().send(q, "after")
                time.sleep(0.1)
        assert isinstance(e.value, pyjms.ConnectionBrokenRuntimeException), repr(e.value)
        time.sleep(1)  # several polls later: still told once
        assert len(heard) == 1, heard
        assert isinstance(heard[0], pyjms.ConnectionBrokenRuntimeException), repr(heard[0])
        assert isinstance(heard[0], ConnectionError)
        for c in (sibling, ctx):
            c.close()
    finally:
        broker.stop()


def test_a_listener_must_be_callable() -> None:
    with pyjms.ConnectionFactory.embedded().create_context() as ctx:
        with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="must be callable"):
            ctx.set_exception_listener("not a function")  # type: ignore[arg-type]
        ctx.set_exception_listener(None)
        assert ctx.get_exception_listener() is None
