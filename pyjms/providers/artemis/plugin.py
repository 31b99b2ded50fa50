"""Apache Artemis through its own Jakarta client, as a provider plug-in (pyjms.api.provider).

Artemis and ActiveMQ Classic both write tcp://host:port, so which one a factory is for is
decided by pyjms.bridge.urls (``provider="artemis"``, ``artemis+tcp://``, ``vm://N``) and
handed to :func:`pyjms.api.provider.provider_for` by name. A pyjms Artemis broker runs the
same admin service as an ActiveMQ one (destination attributes), and addresses delayed
publications to subscribers the same way (a selector clause per subscriber, which Artemis keeps
as the subscription queue's filter), so those answers are taken from ActiveMQ's plug-in; what
belongs to ActiveMQ's client (its redelivery policy, the OpenWire dead-letter details) does
not apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pyjms.api.context import JMSContext
from pyjms.api.destination import Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.bridge import jvm
from pyjms.bridge.errors import translate
from pyjms.bridge.urls import ARTEMIS, add_internal_option, with_options
from pyjms.errors import JMSRuntimeException, SetupError
from pyjms.providers.activemq import subscriptions
from pyjms.providers.activemq.plugin import ActiveMQPlugin
from pyjms.providers.artemis import failures
from pyjms.providers.artemis.broker import DEAD_LETTER_QUEUE
from pyjms.providers.artemis.java_types import JavaArtemisProviderClass

#: what Artemis says when a transaction holds a message whose duplicate id it has taken (it then
#: rolls the whole transaction back), over core and AMQP alike
DUPLICATE_REJECTED = "Duplicate message detected"


#: how a service's core connections notice a dead peer: the broker drops a connection silent for
#: 2.5 s, and the client pings every half second (pyjms brokers look every half second)
SERVICE_TTL_OPTIONS = {"connectionTTL": "2500", "clientFailureCheckPeriod": "500"}
#: a service's connection ends with its broker: it neither reconnects to it nor fails over to
#: another broker of the URL's list (its first connect still tries each of them)
SERVICE_NO_RECONNECT = {"reconnectAttempts": "0", "failoverAttempts": "0"}
for _name, _value in SERVICE_NO_RECONNECT.items():
    add_internal_option(f"{_name}={_value}")


class ArtemisPlugin(ActiveMQPlugin):
    """Apache Artemis, through its own client (artemis-jakarta-client)."""

    name = "Apache Artemis"
    provider_name = ARTEMIS
    dead_letter_queue = DEAD_LETTER_QUEUE
    connection_failures = failures.CONNECTION_FAILURES
    # each slot is an auto-created address and queue: with 10 ms slots (twice as many) the
    # staging p99 was 84-221 ms against 60-76 ms with 20 ms ones (bench/bench_delay.py,
    # staging@artemis, alternate runs)
    delay_slot_ms = 20
    # the client is sent more as it consumes (its consumer window), whatever it acknowledged
    dispatches_on_acknowledgement = False

    def serves(self, url: str | None, factory_class: str | None) -> bool:
        if factory_class is not None:
            return factory_class.startswith("org.apache.activemq.artemis.")
        return bool(url) and url.lower().startswith(f"{ARTEMIS}+")  # type: ignore[union-attr]

    def default_url(self) -> str:
        raise SetupError(
            "an Artemis factory needs a URL (artemis+tcp://host:port, or vm://N of an "
            "EmbeddedArtemisBroker): pyjms starts no Artemis broker of its own"
        )

    def service_factory(self, factory: ConnectionFactory) -> ConnectionFactory:
        # no confirmation window (service_properties), so that the broker drops a killed
        # service's sessions at once; and a short TTL, so that one that hangs or is cut off is
        # dropped within seconds too (the broker applies the client's TTL, and the client pings
        # within it while it lives)
        url = factory.url
        if url.lower().startswith((f"{ARTEMIS}+tcp", f"{ARTEMIS}+(")) and "connectionttl=" not in url.lower():
            url = with_options(url, SERVICE_TTL_OPTIONS, replace=False)
        # and over a list of brokers (a failover pair) its connection must end with its broker,
        # whatever the clients' URL asks: its leadership and open transactions went with it, so
        # it stands again on the broker that serves now (ActiveMQPlugin.service_factory)
        if url.lower().startswith(f"{ARTEMIS}+("):
            url = with_options(url, SERVICE_NO_RECONNECT)
        if url != factory.url:
            factory = factory.derive(url=url)
        return super().service_factory(factory)

    def exclusive_queue(self, name: str) -> str:
        # Artemis's exclusive queue, asked for when the queue is made (pyjms brokers make
        # PYJMS.LEADER.* queues exclusive by an address setting, whoever makes them)
        return f"{name}?exclusive=true"

    def service_properties(self) -> dict[str, str]:
        # with a confirmation window (which pyjms sets for its CompletionListener) the broker
        # keeps a vanished client's sessions for it to reattach, until the connection TTL (60 s):
        # a SIGKILLed leader would keep its lock and its consumers that long
        return {"confirmationWindowSize": "-1"}

    def admin_service_known(self, ctx: JMSContext) -> bool | None:
        # a pyjms Artemis broker is known by its admin queue (ArtemisProvider.isPyjmsBroker); any
        # other broker is asked, and its silence means no admin service
        return True if self.on_pyjms_broker(ctx) else None

    def durable_consumer_selector(
        self, ctx: JMSContext, topic: Topic, name: str, client_id: str, selector: str | None
    ) -> str | None:
        if not self.on_pyjms_broker(ctx):
            return selector
        return subscriptions.durable_selector(ctx, topic, client_id, name, selector, _stored_filter)

    def shared_consumer_selector(
        self, ctx: JMSContext, topic: Topic, name: str, durable: bool, selector: str | None
    ) -> str | None:
        # Artemis shares a subscription natively (one queue per name), so its consumers carry an
        # address like any subscriber's, the same for all of them: the subscription's kind and name
        if not self.on_pyjms_broker(ctx):
            return selector
        return subscriptions.selector_for(selector, subscriptions.shared_address(name, durable))

    def delay_mechanisms(self, ctx: JMSContext) -> tuple[str, ...]:
        return ("native", "staging")  # the client delays natively; Artemis has no scheduler to mark for

    def delay_publishes_when_due(self, ctx: JMSContext, mechanism: str) -> bool:
        # Artemis routes a delayed message at send, to the subscription queues of that moment,
        # and holds it there (D16, D21 as IBM MQ)
        return False

    def commit_rejected_duplicate(self, error: JMSRuntimeException) -> bool:
        return DUPLICATE_REJECTED in str(error)

    def commit_in_doubt(self, error: JMSRuntimeException) -> bool:
        # pyjms checked its own session open before the commit: a closed one now is the client's
        # doing, after a failure (ClientSessionImpl.commit -> rollbackOnFailover -> rollback)
        return "AMQ219019" in str(error)

    def without_redelivery_limit(self, factory: ConnectionFactory) -> ConnectionFactory:
        return factory  # Artemis counts deliveries on the broker (max-delivery-attempts), not the client

    def dead_letter_details(self, ctx: JMSContext, queue: str) -> Mapping[str, Any]:
        return {}


def _stored_filter(selector: str) -> str:
    """A selector as Artemis keeps it as a durable subscription's filter."""
    s = jvm.start(providers=(ARTEMIS,))
    provider_class = cast(JavaArtemisProviderClass, s.jclass("org.pyjms.shim.artemis.ArtemisProvider"))
    try:
        return str(provider_class.storedFilter(selector))
    except s.JException as e:
        raise translate(e, f"selector {selector!r}") from None
