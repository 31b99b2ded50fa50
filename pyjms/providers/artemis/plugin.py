"""Apache Artemis through its own Jakarta client, as a provider plug-in (pyjms.api.provider).

Artemis and ActiveMQ Classic both write tcp://host:port, so which one a factory is for is
decided by pyjms.bridge.urls (``provider="artemis"``, ``artemis+tcp://``, ``vm://N``) and
handed to :func:`pyjms.api.provider.provider_for` by name. A pyjms Artemis broker runs the
same admin service as an ActiveMQ one (destination attributes), so those answers are taken
from ActiveMQ's plug-in; it does not address delayed publications to subscribers (the shim's
ArtemisProvider says it is no pyjms broker in that sense), and what belongs to ActiveMQ's
client (its redelivery policy, the OpenWire dead-letter details) does not apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyjms.api.context import ConnectionFactory, JMSContext
from pyjms.bridge.urls import ARTEMIS
from pyjms.errors import JMSRuntimeException, SetupError
from pyjms.providers.activemq.plugin import ActiveMQPlugin
from pyjms.providers.artemis.broker import DEAD_LETTER_QUEUE

#: what Artemis says when a transaction holds a message whose duplicate id it has taken (it then
#: rolls the whole transaction back), over core and AMQP alike
DUPLICATE_REJECTED = "Duplicate message detected"


class ArtemisPlugin(ActiveMQPlugin):
    """Apache Artemis, through its own client (artemis-jakarta-client)."""

    name = "Apache Artemis"
    provider_name = ARTEMIS
    dead_letter_queue = DEAD_LETTER_QUEUE

    def serves(self, url: str | None, factory_class: str | None) -> bool:
        if factory_class is not None:
            return factory_class.startswith("org.apache.activemq.artemis.")
        return bool(url) and url.lower().startswith(f"{ARTEMIS}+")  # type: ignore[union-attr]

    def default_url(self) -> str:
        raise SetupError(
            "an Artemis factory needs a URL (artemis+tcp://host:port, or vm://N of an "
            "EmbeddedArtemisBroker): pyjms starts no Artemis broker of its own"
        )

    def admin_service_known(self, ctx: JMSContext) -> bool | None:
        return None  # the shim cannot tell a pyjms Artemis broker from another one

    def delay_mechanisms(self, ctx: JMSContext) -> tuple[str, ...]:
        return ("native", "staging")  # the client delays natively; Artemis has no scheduler to mark for

    def commit_rejected_duplicate(self, error: JMSRuntimeException) -> bool:
        return DUPLICATE_REJECTED in str(error)

    def without_redelivery_limit(self, factory: ConnectionFactory) -> ConnectionFactory:
        return factory  # Artemis counts deliveries on the broker (max-delivery-attempts), not the client

    def dead_letter_details(self, ctx: JMSContext, queue: str) -> Mapping[str, Any]:
        return {}
