"""AMQP 1.0 through Qpid JMS, as a provider plug-in (pyjms.api.provider).

Importing this package registers :class:`AmqpPlugin` for amqp://, amqps://, amqpws:// and
amqpwss:// URLs. The Java side is org.pyjms.shim.amqp (AmqpProvider, AmqpPeer): the peer's
offered capabilities decide native delivery delay and shared subscriptions.
"""

from pyjms.api.provider import register_provider
from pyjms.providers.amqp.plugin import AmqpPlugin

PLUGIN = AmqpPlugin()
register_provider(PLUGIN)

__all__ = ["AmqpPlugin", "PLUGIN"]
