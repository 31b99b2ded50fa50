"""How ActiveMQ Classic's client (activemq-client) says that a connection failed.

The error translation (pyjms.bridge.errors) knows only the JDK's own exceptions; registering
:class:`~pyjms.providers.activemq.plugin.ActiveMQPlugin` hands it these, which give a failure
IBM MQ's reason (MQRC_CONNECTION_BROKEN): the failover transport's "Transport disposed" and
the exceptions a call on a failed or closed connection raises.
"""

from __future__ import annotations

from pyjms.bridge.errors import ConnectionFailures

CONNECTION_FAILURES = ConnectionFailures(
    broken_classes=frozenset(
        {
            "ConnectionFailedException",  # org.apache.activemq: the transport failed
            "ConnectionClosedException",  # org.apache.activemq: a call on a closed connection
            "TransportDisposedIOException",  # org.apache.activemq.transport
        }
    ),
    broken_texts=("Transport disposed",),
)
