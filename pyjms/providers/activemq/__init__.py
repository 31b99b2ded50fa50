"""ActiveMQ Classic: pyjms's default provider, its embedded broker and services.

Importing this package registers :class:`ActiveMQPlugin` for ActiveMQ URLs (vm://, tcp://,
failover:(...), ...) and as the default provider, whose embedded broker serves factories
with no URL. ``pyjms.broker`` names the broker classes too.
"""

from pyjms.api.provider import register_provider
from pyjms.providers.activemq.admin import Admin, AdminService
from pyjms.providers.activemq.embedded import AccessRule, EmbeddedBroker, default_broker
from pyjms.providers.activemq.plugin import ActiveMQPlugin

PLUGIN = ActiveMQPlugin()
register_provider(PLUGIN, default=True)

__all__ = [
    "AccessRule",
    "EmbeddedBroker",
    "default_broker",
    "Admin",
    "AdminService",
    "ActiveMQPlugin",
    "PLUGIN",
]
