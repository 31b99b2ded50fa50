"""Apache Artemis: an embedded broker with pyjms's services, and a provider plug-in
(pyjms.api.provider); its client is org.pyjms.shim.artemis.

Importing this package registers :class:`ArtemisPlugin` for the factories pyjms.bridge.urls
gives to Artemis: ``ConnectionFactory(url, provider="artemis")``, ``artemis+tcp://host:port``,
``vm://N``, or an ``org.apache.activemq.artemis.*`` factory class.
"""

from pyjms.api.provider import register_provider
from pyjms.providers.artemis.broker import DEAD_LETTER_QUEUE, EmbeddedArtemisBroker
from pyjms.providers.artemis.plugin import ArtemisPlugin

PLUGIN = ArtemisPlugin()
register_provider(PLUGIN)

__all__ = ["ArtemisPlugin", "DEAD_LETTER_QUEUE", "EmbeddedArtemisBroker", "PLUGIN"]
