"""ActiveMQ Classic as pyjms's provider plug-in (pyjms.api.provider).

Its quirks, and what brokers pyjms starts (pyjms.providers.activemq.embedded) add:

* with no URL, pyjms starts an embedded broker in this process (the default provider);
* on a pyjms broker, topic subscribers carry an address in their selector and durable
  subscriptions keep theirs, so that delayed publications are staged one copy per
  subscriber (D16, pyjms.providers.activemq.subscriptions); the admin service answers who
  subscribes, and the destination attributes of IBM MQ (pyjms.rules.attributes);
* a rolled-back get counts as a redelivery, so components that keep their own retry counts
  connect with no redelivery limit; entries ActiveMQ dead-letters itself keep their original
  destination outside the properties (pyjms.providers.activemq.dead_letters).

Whether a broker is one pyjms started is asked of the shim (activemq.ActiveMQProvider) once
per context, at the first need.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import Any

from pyjms.api.constants import CLIENT_ACKNOWLEDGE
from pyjms.api.context import JMSContext
from pyjms.api.destination import Destination, TemporaryQueue, TemporaryTopic, Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.api.message import Message
from pyjms.api.provider import ContextAnswer, ProviderPlugin
from pyjms.dlq.header import ACTIVEMQ_CAUSE
from pyjms.errors import JMSRuntimeException
from pyjms.providers.activemq import admin, dead_letters, failures, subscriptions
from pyjms.providers.activemq.admin import AttributeCache
from pyjms.providers.activemq.embedded import default_broker


class ActiveMQPlugin(ProviderPlugin):
    """ActiveMQ Classic, through its own JMS client (activemq-client)."""

    name = "ActiveMQ Classic"
    provider_name = "activemq"
    attributes_max_age_s = AttributeCache.TTL_S
    dead_letter_queue: str | None = "ActiveMQ.DLQ"
    browse_limit: int | None = dead_letters.BROWSE_LIMIT
    connection_failures = failures.CONNECTION_FAILURES
    in_process_default = "an in-process, non-persistent ActiveMQ broker"
    # its prefetch counts what the consumer has not acknowledged
    dispatches_on_acknowledgement = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pyjms_broker = ContextAnswer(
            lambda provider, connection: provider.isPyjmsBroker(connection),
            "ask whether the broker is a pyjms broker",
        )
        self._attributes: weakref.WeakKeyDictionary[JMSContext, AttributeCache] = weakref.WeakKeyDictionary()

    def serves(self, url: str | None, factory_class: str | None) -> bool:
        if factory_class is not None:
            return "activemq" in factory_class.lower() and "artemis" not in factory_class.lower()
        return dead_letters.is_activemq_url(url)

    def default_url(self) -> str:
        return default_broker().vm_url

    def service_factory(self, factory: ConnectionFactory) -> ConnectionFactory:
        # over failover:(...) a service's connection must end with its broker: reconnected to
        # the other broker of a failover pair, it would hide that its leadership, its open
        # transactions and what it knew went with the old one (the failover transport replays a
        # transaction's sends, and a leader's non-persistent tokens are gone, so no standby would
        # ever be elected). Ended, the service stands again on whichever broker serves now
        return super().service_factory(dead_letters.ending_with_its_broker(factory))

    def synchronous_acks(self, factory: ConnectionFactory) -> ConnectionFactory:
        return dead_letters.with_synchronous_acks(factory)  # an ActiveMQ URL only

    def exclusive_queue(self, name: str) -> str:
        # ActiveMQ's exclusive consumer, asked for by a destination option
        return f"{name}?consumer.exclusive=true"

    def on_pyjms_broker(self, ctx: JMSContext) -> bool:
        """Whether ctx's broker is one pyjms started (it addresses delayed publications, D16)."""
        return self._pyjms_broker(ctx)

    def delay_mechanisms(self, ctx: JMSContext) -> tuple[str, ...]:
        # staging before the broker's scheduler: on a pyjms broker, whose delay processor
        # answers, staging is the later-by-less of the two (bench_delay: p50 about 15 ms and p99
        # under 100 ms, against the scheduler's 280 and 500 ms, none early or lost in either);
        # a broker without a processor falls through to its scheduler (docs/delivery-delay.md)
        return ("native", "staging", "scheduler")

    def topic_consumer_selector(self, ctx: JMSContext, topic: Topic, selector: str | None) -> str | None:
        if not self.on_pyjms_broker(ctx):
            return selector
        return subscriptions.selector_for(selector, subscriptions.plain_address())

    def durable_consumer_selector(
        self, ctx: JMSContext, topic: Topic, name: str, client_id: str, selector: str | None
    ) -> str | None:
        if not self.on_pyjms_broker(ctx):
            return selector
        return subscriptions.durable_selector(ctx, topic, client_id, name, selector)

    def admin_service_known(self, ctx: JMSContext) -> bool | None:
        """Whether the broker runs pyjms's admin service: known for brokers the shim can tell
        are pyjms's (None where it cannot tell; then a silent service means none)."""
        return self.on_pyjms_broker(ctx)

    def target_attributes(self, ctx: JMSContext, destination: Destination) -> Any:
        if isinstance(destination, (TemporaryQueue, TemporaryTopic)):
            return None  # nobody defines a temporary destination's attributes (the admin service refuses to)
        known = self.admin_service_known(ctx)
        if known is False:
            return None  # not a pyjms broker: no admin service to ask
        with self._lock:
            cache = self._attributes.get(ctx)
            if cache is None:
                cache = self._attributes[ctx] = AttributeCache()
        return cache.get(ctx, destination, service_known=bool(known))

    def destination_exists(self, ctx: JMSContext, destination: Destination) -> bool | None:
        if not self.on_pyjms_broker(ctx):
            return None  # a stock broker has no admin service to ask
        return admin.exists(ctx, destination, AttributeCache.TIMEOUT_MS)

    def delay_publishes_when_due(self, ctx: JMSContext, mechanism: str) -> bool:
        # the scheduler publishes a delayed message to the topic when it is due
        return mechanism == "scheduler"

    def subscriber_addresses(self, ctx: JMSContext, topic: Topic) -> list[str] | None:
        if not self.on_pyjms_broker(ctx):
            return None
        return subscriptions.subscribers_at_send(ctx, topic)

    def duplicate_dead_letter(self, message: Message) -> str | None:
        # after a failover reconnect ActiveMQ's consumer redelivers what it had delivered already;
        # its audit "poison acks" such a duplicate, and the broker dead-letters that copy with this
        # cause (ActiveMQMessageConsumer.dispatch; ActiveMQ's own tests excuse these copies)
        if not message.property_exists(ACTIVEMQ_CAUSE):
            return None
        cause = message.get_string_property(ACTIVEMQ_CAUSE) or ""
        if "Suppressing duplicate delivery on connection" not in cause:
            return None
        return "ActiveMQ's failover consumer suppressed it as a duplicate of a message it had delivered"

    def commit_in_doubt(self, error: JMSRuntimeException) -> bool:
        # after a reconnect the failover transport cannot tell whether the broker committed, and
        # reports a rollback anyway: "Transaction ... in doubt due to failover. Forcing rollback"
        return "in doubt" in str(error)

    def bulk_read_context(self, factory: ConnectionFactory) -> JMSContext:
        # one CLIENT_ACKNOWLEDGE session acknowledged at its end drained 250,000 non-persistent
        # messages at 120,000 msg/s, one transaction at 51,000 (auto-acknowledge: 97,000);
        # Artemis's core client 286,000 against 231,000 (100,000 messages; raw Java, a pyjms
        # broker over tcp, 3 interleaved rounds, medians; docs/performance.md)
        return factory.create_context(CLIENT_ACKNOWLEDGE)

    def without_redelivery_limit(self, factory: ConnectionFactory) -> ConnectionFactory:
        return dead_letters.without_redelivery_limit(factory)

    def transaction_begun(self, ctx: JMSContext) -> bool:
        # ActiveMQSession begins its transaction at the first send or receive after a commit or
        # rollback; its TransactionContext says whether that happened
        session: Any = ctx.channel.java.session()
        if not hasattr(session, "getTransactionContext"):
            return True  # not ActiveMQ's own session: cannot tell
        return bool(
            ctx.channel.call(
                lambda: session.getTransactionContext().isInTransaction(),
                "ask whether a transaction has begun",
            )
        )

    def dead_letter_details(self, ctx: JMSContext, queue: str) -> Mapping[str, Any]:
        return dead_letters.dead_letter_details(ctx, queue)

    def dead_lettered_by_broker(self, message: Message) -> bool:
        return dead_letters.dead_lettered_by_broker(message)

    def dead_letter_header(
        self,
        message: Message,
        *,
        queue_manager: str,
        original_destination: str | None,
        dead_lettered_ms: int | None,
    ) -> Any:
        return dead_letters.dead_letter_header(message, queue_manager, original_destination, dead_lettered_ms)
