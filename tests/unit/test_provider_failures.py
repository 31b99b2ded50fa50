"""Providers classify their own failures (issue 33): each provider plug-in declares how its
client says that a connection failed, registering it hands that to the error translation,
and the bridge itself knows only the JDK's exceptions. No JVM: the causes are given as the
class names and messages the translation reads from a Java exception."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pyjms  # registers the three provider plug-ins
from pyjms import MQRC
from pyjms.api.provider import ProviderPlugin, provider_for
from pyjms.bridge import errors
from pyjms.bridge.errors import JDK_FAILURES, ConnectionFailures, connection_failures
from pyjms.providers.activemq import ActiveMQPlugin
from pyjms.providers.amqp import AmqpPlugin
from pyjms.providers.artemis import ArtemisPlugin

BRIDGE_ERRORS = Path(errors.__file__)


def chain(*classes: str, message: str = "") -> tuple[list[str], str]:
    """One cause as the translation reads it: its class and superclass names, and its message."""
    return [*classes, "Exception", "Throwable", "Object"], message


# (plug-in, a failure its client raises, the reason it means)
PROVIDER_FAILURES = [
    (ActiveMQPlugin, chain("ConnectionFailedException", "JMSException"), MQRC.CONNECTION_BROKEN),
    (ActiveMQPlugin, chain("ConnectionClosedException", "IllegalStateException"), MQRC.CONNECTION_BROKEN),
    (ActiveMQPlugin, chain("TransportDisposedIOException", "IOException"), MQRC.CONNECTION_BROKEN),
    (ActiveMQPlugin, chain("IOException", message="Transport disposed."), MQRC.CONNECTION_BROKEN),
    (
        ArtemisPlugin,
        chain("ActiveMQConnectionTimedOutException", "ActiveMQException"),
        MQRC.Q_MGR_NOT_AVAILABLE,
    ),
    (
        ArtemisPlugin,
        chain("JMSException", message="Failed to create session factory"),
        MQRC.Q_MGR_NOT_AVAILABLE,
    ),
    (
        ArtemisPlugin,
        chain(
            "ActiveMQNotConnectedException",
            "ActiveMQException",
            message="AMQ219007: Cannot connect to server(s)",
        ),
        MQRC.Q_MGR_NOT_AVAILABLE,  # named in the text: unreachable wins over broken
    ),
    (ArtemisPlugin, chain("ActiveMQNotConnectedException", "ActiveMQException"), MQRC.CONNECTION_BROKEN),
    (ArtemisPlugin, chain("ActiveMQDisconnectedException", "ActiveMQException"), MQRC.CONNECTION_BROKEN),
    (
        ArtemisPlugin,
        chain("JMSException", message="AMQ219016: Connection failure detected. Unblocking a blocking call"),
        MQRC.CONNECTION_BROKEN,
    ),
    (AmqpPlugin, chain("JmsConnectionFailedException", "IllegalStateException"), MQRC.CONNECTION_BROKEN),
    (
        AmqpPlugin,
        chain("ProviderFailedException", "ProviderIOException", "IOException"),
        MQRC.CONNECTION_BROKEN,
    ),
    (
        AmqpPlugin,
        chain("IOException", message="Transport connection remotely closed."),
        MQRC.CONNECTION_BROKEN,
    ),
]


@pytest.mark.parametrize(("plugin_class", "cause", "reason"), PROVIDER_FAILURES)
def test_each_plugin_classifies_its_clients_failures(
    plugin_class: type[ProviderPlugin], cause: tuple[list[str], str], reason: int
) -> None:
    assert plugin_class.connection_failures.reason([cause]) == reason
    assert connection_failures().reason([cause]) == reason  # registered: the translation knows it
    assert JDK_FAILURES.reason([cause]) is None  # the bridge alone does not


@pytest.mark.parametrize(
    ("cause", "reason"),
    [
        (chain("ConnectException", "SocketException", "IOException", message="Connection refused"), 2059),
        (chain("UnknownHostException", "IOException"), MQRC.Q_MGR_NOT_AVAILABLE),
        (chain("EOFException", "IOException"), MQRC.CONNECTION_BROKEN),
        (chain("SocketException", "IOException", message="Connection reset by peer"), MQRC.CONNECTION_BROKEN),
        (chain("JMSException", message="the connection was closed"), MQRC.CONNECTION_BROKEN),
        (chain("JMSException", message="no such queue"), None),
    ],
)
def test_the_jdks_own_failures_need_no_plugin(cause: tuple[list[str], str], reason: int | None) -> None:
    assert JDK_FAILURES.reason([cause]) == reason
    assert connection_failures().reason([cause]) == reason


def test_unreachable_anywhere_in_the_causes_wins_over_broken() -> None:
    # a failover reconnect that was refused: broken on top, refused underneath
    causes = [chain("ConnectionFailedException", "JMSException"), chain("ConnectException", "IOException")]
    assert connection_failures().reason(causes) == MQRC.Q_MGR_NOT_AVAILABLE


def test_each_plugin_declares_only_its_own_clients_classes() -> None:
    activemq, artemis, amqp = (p.connection_failures for p in (ActiveMQPlugin, ArtemisPlugin, AmqpPlugin))
    assert "ConnectionFailedException" in activemq.broken_classes
    assert "ActiveMQNotConnectedException" in artemis.broken_classes
    assert "JmsConnectionFailedException" in amqp.broken_classes
    assert not activemq.broken_classes & artemis.broken_classes
    assert not activemq.broken_classes & amqp.broken_classes
    assert ProviderPlugin.connection_failures == ConnectionFailures()  # the neutral default


def test_the_registered_plugins_are_what_the_translation_knows() -> None:
    known = connection_failures()
    for name in ("activemq", "artemis", "amqp"):
        declared = provider_for(None, None, name).connection_failures
        assert declared.unreachable_classes <= known.unreachable_classes
        assert declared.broken_classes <= known.broken_classes
        assert set(declared.unreachable_texts) <= set(known.unreachable_texts)
        assert set(declared.broken_texts) <= set(known.broken_texts)


def test_registering_merges_and_keeps_what_was_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(errors, "_connection_failures", JDK_FAILURES)
    mine = ConnectionFailures(
        broken_classes=frozenset({"MyClientGoneException"}), broken_texts=("peer went",)
    )
    errors.register_connection_failures(mine)
    errors.register_connection_failures(mine)  # twice: no change
    known = connection_failures()
    assert known.broken_classes == JDK_FAILURES.broken_classes | {"MyClientGoneException"}
    assert known.broken_texts == (*JDK_FAILURES.broken_texts, "peer went")
    assert known.reason([chain("IOException", message="the PEER WENT away")]) == MQRC.CONNECTION_BROKEN
    assert known.reason([chain("EOFException")]) == MQRC.CONNECTION_BROKEN


def test_the_bridge_names_no_providers_client() -> None:
    source = BRIDGE_ERRORS.read_text(encoding="utf-8")
    code = "\n".join(line.split("#")[0] for line in source.splitlines())
    assert not re.search(r"ActiveMQ|Artemis|Qpid|\bJms|AMQ2\d{4}|Transport disposed", code), BRIDGE_ERRORS
    assert pyjms.providers.activemq.PLUGIN.connection_failures is ActiveMQPlugin.connection_failures
