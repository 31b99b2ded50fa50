"""Each provider plug-in classifies its client's failures (issue 33), on real failures: the
error translation gives IBM MQ's connection reason from what the plug-in declared
(ProviderPlugin.connection_failures), where the JDK's exceptions alone would not tell."""

from __future__ import annotations

import signal
import time

import pytest

import pyjms
from pyjms import MQRC
from pyjms.bridge import errors, jvm
from pyjms.bridge.errors import JDK_FAILURES, translate
from tests.conftest import BrokerProcess


@pytest.fixture
def jdk_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The translation as it would be with no provider plug-in registered."""
    monkeypatch.setattr(errors, "_connection_failures", JDK_FAILURES)


def connect_error(url: str) -> pyjms.JMSRuntimeException:
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        pyjms.ConnectionFactory(url).create_context()
    return e.value


def test_artemis_plugin_says_its_client_cannot_reach_the_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Artemis's client reports a refused connection as "Failed to create session factory:
    AMQ219007: Cannot connect to server(s)", with no JDK exception among its causes."""
    assert connect_error("artemis+tcp://127.0.0.1:1").reason == MQRC.Q_MGR_NOT_AVAILABLE
    monkeypatch.setattr(errors, "_connection_failures", JDK_FAILURES)
    assert connect_error("artemis+tcp://127.0.0.1:1").reason is None


def send_after_kill(provider: str, client: str) -> pyjms.JMSRuntimeException:
    broker = BrokerProcess(provider=provider)
    try:
        url = broker.amqp_url if client == "amqp" else broker.tcp_url
        assert url is not None
        ctx = pyjms.ConnectionFactory(url).create_context()
        q = ctx.create_queue("BROKEN.PLUGIN.Q")
        ctx.create_producer().send(q, "before")
        broker.stop(signal.SIGKILL)
        with pytest.raises(pyjms.JMSRuntimeException) as e:
            for _ in range(50):  # the client may learn of the loss only at the next write
                ctx.create_producer().send(q, "after")
                time.sleep(0.1)
        return e.value
    finally:
        broker.stop()


@pytest.mark.parametrize(
    ("provider", "client"), [("activemq", "activemq"), ("artemis", "artemis"), ("activemq", "amqp")]
)
def test_a_send_on_a_killed_brokers_connection_is_a_broken_connection(provider: str, client: str) -> None:
    """The broker's process is killed under a connection: each client (ActiveMQ's, Artemis's,
    Qpid JMS through AMQP) fails the next send in its own words, which the translation reads
    with what the plug-ins declared."""
    error = send_after_kill(provider, client)
    assert error.reason == MQRC.CONNECTION_BROKEN, str(error)


@pytest.mark.parametrize(
    ("jdk_classes", "message"),
    [
        # Qpid JMS: a call that waited on a transport that broke
        (
            (
                "org.apache.qpid.jms.exceptions.JmsConnectionFailedException",
                "org.apache.qpid.jms.provider.exceptions.ProviderFailedException",
            ),
            "Transport connection remotely closed.",
        ),
        # ActiveMQ Classic: the transport failed under a call
        (("org.apache.activemq.ConnectionFailedException", "java.io.IOException"), "Transport disposed."),
        # Artemis: a blocking call unblocked by a connection failure
        (
            (
                "org.apache.activemq.artemis.api.core.ActiveMQNotConnectedException",
                "org.apache.activemq.artemis.api.core.ActiveMQDisconnectedException",
            ),
            "AMQ219016: Connection failure detected",
        ),
    ],
)
def test_the_clients_own_exceptions_are_a_broken_connection_only_through_their_plugin(
    monkeypatch: pytest.MonkeyPatch, jdk_classes: tuple[str, str], message: str
) -> None:
    """The provider clients' own exception classes (from their jars), as they fail a call."""
    for address in ("amqp://127.0.0.1:1", "artemis+tcp://127.0.0.1:1"):
        with pytest.raises(pyjms.JMSRuntimeException):  # the JVM, with every client's classes
            pyjms.ConnectionFactory(address).create_context()
    shim = jvm.shim()
    outer, inner = (shim.jclass(name) for name in jdk_classes)
    cause = inner(message)
    try:
        failure = outer(cause)
    except TypeError:  # no constructor that takes a cause
        failure = outer(message)
        failure.initCause(cause)
    assert translate(failure, "commit").reason == MQRC.CONNECTION_BROKEN
    monkeypatch.setattr(errors, "_connection_failures", JDK_FAILURES)
    assert translate(failure, "commit").reason is None
