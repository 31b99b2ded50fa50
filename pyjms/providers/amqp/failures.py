"""How Qpid JMS (qpid-jms-client) says that a connection to an AMQP 1.0 peer failed.

The error translation (pyjms.bridge.errors) knows only the JDK's own exceptions; registering
:class:`~pyjms.providers.amqp.plugin.AmqpPlugin` hands it these. Qpid JMS fails a call on (or
waiting on) a connection whose transport failed with JmsConnectionFailedException, caused by
one of its provider exceptions (org.apache.qpid.jms.provider.exceptions), often before its
exception listener has told pyjms: the error itself must say MQRC_CONNECTION_BROKEN.
"""

from __future__ import annotations

from pyjms.bridge.errors import ConnectionFailures

CONNECTION_FAILURES = ConnectionFailures(
    broken_classes=frozenset(
        {
            "JmsConnectionFailedException",  # org.apache.qpid.jms.exceptions
            "ProviderFailedException",  # org.apache.qpid.jms.provider.exceptions
        }
    ),
    broken_texts=("remotely closed",),  # "Transport connection remotely closed."
)
