"""How Apache Artemis's client (artemis-core-client, artemis-jakarta-client) says that a
connection failed.

The error translation (pyjms.bridge.errors) knows only the JDK's own exceptions; registering
:class:`~pyjms.providers.artemis.plugin.ArtemisPlugin` hands it these. The core client's
exceptions (org.apache.activemq.artemis.api.core) and its numbered messages give IBM MQ's
reasons: a broker it cannot reach or whose topology never came (MQRC_Q_MGR_NOT_AVAILABLE), and
a connection lost under a call (MQRC_CONNECTION_BROKEN).
"""

from __future__ import annotations

from pyjms.bridge.errors import ConnectionFailures

CONNECTION_FAILURES = ConnectionFailures(
    unreachable_classes=frozenset({"ActiveMQConnectionTimedOutException"}),
    unreachable_texts=(
        "Failed to create session factory",  # the Jakarta factory, connecting
        "AMQ219007",  # Cannot connect to server(s)
        "AMQ219013",  # Timed out waiting to receive cluster topology
        "Cannot connect to server",
    ),
    broken_classes=frozenset({"ActiveMQNotConnectedException", "ActiveMQDisconnectedException"}),
    broken_texts=(
        "Channel disconnected",  # AMQ219006
        "AMQ219016",  # Connection failure detected. Unblocking a blocking call ...
    ),
)
