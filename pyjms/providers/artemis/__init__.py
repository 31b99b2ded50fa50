"""Apache Artemis: an embedded broker with pyjms's services; its client is org.pyjms.shim.artemis.

Reach any Artemis broker with ``ConnectionFactory(url, provider="artemis")`` or a URL of the
form ``artemis+tcp://host:port`` (see pyjms.bridge.urls).
"""

from pyjms.providers.artemis.broker import DEAD_LETTER_QUEUE, EmbeddedArtemisBroker

__all__ = ["DEAD_LETTER_QUEUE", "EmbeddedArtemisBroker"]
