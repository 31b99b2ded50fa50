"""AMQP 1.0 peers through Qpid JMS.

The client is Qpid JMS, but what a pyjms broker adds is on the broker's side, whatever the
protocol: its admin service (destination attributes), and topic subscribers that carry an
address so that delayed publications are staged one copy per subscriber (D16). A pyjms
broker reached over AMQP is known from the open frame it answers with (AmqpPeer.isPyjmsBroker):
an ActiveMQ one by its container id, its name; an Artemis one, whose container id is its node
id, by the name it adds as the frame's ``pyjms-broker`` property (artemis.AmqpOpenProperty).
Those answers are then the same as over OpenWire, so this plug-in takes them from ActiveMQ's,
with Artemis's addresses for shared subscriptions. What belongs to ActiveMQ's client (its
redelivery policy, the OpenWire dead-letter details) does not apply to Qpid JMS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.context import JMSContext
from pyjms.api.destination import Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.api.provider import ContextAnswer
from pyjms.errors import JMSRuntimeException, SetupError
from pyjms.providers.activemq import subscriptions
from pyjms.providers.activemq.plugin import ActiveMQPlugin
from pyjms.providers.amqp import failures
from pyjms.providers.artemis.plugin import DUPLICATE_REJECTED

SCHEMES = ("amqp", "amqps", "amqpws", "amqpwss")


class AmqpPlugin(ActiveMQPlugin):
    """Any AMQP 1.0 broker, through Qpid JMS (qpid-jms-client)."""

    name = "AMQP 1.0 (Qpid JMS)"
    provider_name = "amqp"
    dead_letter_queue = None
    connection_failures = failures.CONNECTION_FAILURES
    # Qpid JMS grants the link credit again as its consumer takes messages, not as it
    # acknowledges them
    dispatches_on_acknowledgement = False

    def serves(self, url: str | None, factory_class: str | None) -> bool:
        if factory_class is not None:
            return factory_class.startswith("org.apache.qpid.jms.")
        return bool(url) and url.partition(":")[0] in SCHEMES  # type: ignore[union-attr]

    def default_url(self) -> str:
        raise SetupError("an AMQP factory needs a URL (amqp://host:port): pyjms has no default AMQP peer")

    def exclusive_queue(self, name: str) -> str:
        # AMQP names no exclusive consumer: the broker must make the queue's consumers
        # exclusive (pyjms brokers do for PYJMS.LEADER.* queues)
        return name

    def service_properties(self) -> dict[str, str]:
        # a timed receive waits for what the peer sends under the consumer's credit, without
        # a drain when it times out empty: Artemis (2.55) drops a drain that comes while its
        # previous drain of the link is still completing, and Qpid JMS then waits for its answer
        # (amqp.drainTimeout, 60 s); the delay processor's receives, one after another on a
        # link, lost one in a few runs of 1,500 messages and stalled. What a receive with no
        # wait takes is the shim's choice (Provider.receiveBuffered); a browser's still drains,
        # and goes on through another browser when a drain goes unanswered (ResumingBrowse).
        return {"receiveLocalOnly": "true"}

    def admin_service_known(self, ctx: JMSContext) -> bool | None:
        # a pyjms broker is known by its open frame; any other peer is asked (and its silence
        # means no admin service)
        return True if self.on_pyjms_broker(ctx) else None

    def durable_consumer_selector(
        self, ctx: JMSContext, topic: Topic, name: str, client_id: str, selector: str | None
    ) -> str | None:
        if self._on_pyjms_artemis(ctx) and not _found_by_the_admin_service(client_id, name):
            return selector
        return super().durable_consumer_selector(ctx, topic, name, client_id, selector)

    def shared_consumer_selector(
        self, ctx: JMSContext, topic: Topic, name: str, durable: bool, selector: str | None
    ) -> str | None:
        # as through Artemis's own client (ArtemisPlugin): Artemis shares a subscription in one
        # queue, whose filter is the selector, so all its consumers carry one address
        if not self._on_pyjms_artemis(ctx):
            return selector
        address = subscriptions.shared_address(name, durable)
        if not durable:
            return subscriptions.selector_for(selector, address)
        # a durable one may hold messages: reopened as it is, as a durable subscription is (over
        # AMQP Artemis names its queue as a durable subscription's, "CLIENTID.NAME")
        client_id = ctx.get_client_id()
        if client_id is None or not _found_by_the_admin_service(client_id, name):
            return selector  # its queue is NAME:global, or not found: it carries no address
        return subscriptions.durable_selector(ctx, topic, client_id, name, selector, address=address)

    def _on_pyjms_artemis(self, ctx: JMSContext) -> bool:
        return self.on_pyjms_broker(ctx) and not self._peer_is_activemq_classic(ctx)

    def commit_rejected_duplicate(self, error: JMSRuntimeException) -> bool:
        return DUPLICATE_REJECTED in str(error)

    _peer_is_activemq_classic = ContextAnswer(
        lambda provider, connection: str(provider.peerProduct(connection) or "") == "ActiveMQ",
        "ask which broker the AMQP peer is",
    )

    def delay_mechanisms(self, ctx: JMSContext) -> tuple[str, ...]:
        # ActiveMQ Classic offers DELAYED_DELIVERY through its scheduler: on a broker whose
        # delay processor answers, staging is far later-by-less (bench_delay, 100,000 messages
        # over 30 s through Qpid JMS to a pyjms ActiveMQ broker: p99 61 ms against 501, none
        # early, lost or twice in either; docs/delivery-delay.md). Elsewhere the client's own
        if self._peer_is_activemq_classic(ctx):
            return ("staging", "native", "scheduler")
        return ("native", "staging", "scheduler")

    def delay_publishes_when_due(self, ctx: JMSContext, mechanism: str) -> bool:
        # ActiveMQ Classic's DELAYED_DELIVERY is its scheduler, which publishes when due;
        # Artemis routes a delayed message at send
        return mechanism != "staging" and self._peer_is_activemq_classic(ctx)

    def bulk_read_context(self, factory: ConnectionFactory) -> JMSContext:
        # through Qpid JMS it depends on the peer: ActiveMQ Classic drained 100,000 messages in
        # one CLIENT_ACKNOWLEDGE session at 32,000 msg/s, in one transaction at 5,500; Artemis
        # 27,000 against 33,000 (raw Java, 3 interleaved rounds, medians; docs/performance.md)
        ctx = super().bulk_read_context(factory)  # CLIENT_ACKNOWLEDGE
        if self._peer_is_activemq_classic(ctx):
            return ctx
        try:
            return ctx.create_context(SESSION_TRANSACTED)  # a session on the same connection
        finally:
            ctx.close()

    def without_redelivery_limit(self, factory: ConnectionFactory) -> ConnectionFactory:
        return factory  # Qpid JMS counts no redeliveries of its own

    def dead_letter_details(self, ctx: JMSContext, queue: str) -> Mapping[str, Any]:
        return {}


def _found_by_the_admin_service(client_id: str, name: str) -> bool:
    """Whether a pyjms Artemis broker's admin service finds a subscription of this client id
    and name made over AMQP. It looks for the queue name Artemis's core client gives it: client
    id and name joined by a dot, each with its dots and backslashes escaped; over AMQP Artemis
    escapes nothing. A subscription it cannot find would get a new address, so a new selector,
    at each reopening, and Artemis would then remake its queue without its messages: it carries
    no address (delayed publications to its topic are staged once)."""
    return not any(c in client_id + name for c in ".\\")
