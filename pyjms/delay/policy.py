"""The delivery-delay mechanism as a send policy: one per ConnectionFactory.

It applies to sends with a delivery delay. The factory's mechanism (pyjms.delay.mechanism) is
resolved once, at the first delayed send of any of the factory's producers (or when
:func:`delay_mechanism` asks), never in a setter or a constructor:

* at ``set_delivery_delay``, a delay the factory is known to be unable to apply without
  asking the broker (``delivery_delay="none"``, a forced ``native`` the client lacks, or an
  ``auto`` already resolved to none) is refused (D04);
* at a delayed send, the mechanism is resolved if it is not yet; none refuses the send (D04);
* ``native`` and ``scheduler`` tell the shim how to delay (send flags); ``staging`` puts
  staged copies on the factory's staging queue instead (pyjms.delay.staging), with no TTL (the
  processor expires them, with a report, D18), and gives the sender the original message's
  headers (its original id, send time, delivery time).
"""

from __future__ import annotations

import threading

from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue, TemporaryTopic, Topic
from pyjms.api.expiry import now_ms
from pyjms.api.factory import ConnectionFactory
from pyjms.api.message import Message
from pyjms.api.policy import (
    OutgoingSend,
    Proceed,
    ProducerOptions,
    SendPolicy,
    SendResult,
    install_send_policy,
)
from pyjms.api.property_types import T_STRING
from pyjms.bridge.contract import SEND_DELAY_FLAGS
from pyjms.delay import staging
from pyjms.delay.mechanism import DelayMechanism, known_without_io, resolve
from pyjms.errors import JMSRuntimeException, NotSupportedRuntimeException
from pyjms.rules import delivery as rules

#: where the delay policy sits in every factory's send chain: first, so that a delay nothing
#: can apply is refused before any other delay rule (D04)
ORDER = 100


class DelayPolicy(SendPolicy):
    """Applies the factory's delay mechanism to its delayed sends."""

    def __init__(self, factory: ConnectionFactory) -> None:
        self.factory = factory
        self._mechanism: DelayMechanism | None = None
        self._lock = threading.Lock()

    def mechanism(self, ctx: JMSContext) -> DelayMechanism:
        """The factory's mechanism, resolved on the first call (may ask the broker)."""
        with self._lock:
            if self._mechanism is None:
                self._mechanism = resolve(ctx, self.factory.delivery_delay)
            return self._mechanism

    def known_mechanism(self, ctx: JMSContext) -> DelayMechanism | None:
        """The mechanism if it is known without asking the broker, else None."""
        if self._mechanism is not None:
            return self._mechanism
        return known_without_io(ctx, self.factory.delivery_delay)

    def applies(self, options: ProducerOptions) -> bool:
        return options.delivery_delay > 0

    def check_options(self, options: ProducerOptions, context: JMSContext) -> None:
        # a setter refuses a delay beyond the TTL (D06) before a delay nothing can apply (D04),
        # as it always has; at a send, D04 comes first (check_send)
        rules.check_delay_within_ttl(options.delivery_delay, options.time_to_live)
        if options.delivery_delay > 0:
            known = self.known_mechanism(context)
            if known is not None and not known.available:
                raise rules.delay_not_supported(options.delivery_delay, context.provider_name)

    def check_send(self, send: OutgoingSend) -> None:
        if not self.mechanism(send.context).available:
            raise rules.delay_not_supported(send.delivery_delay, send.context.provider_name)

    def send(self, send: OutgoingSend, proceed: Proceed) -> SendResult:
        mechanism = self.mechanism(send.context)
        if mechanism is DelayMechanism.STAGING:
            return self._stage(send, proceed)
        send = send.replace(flags=(send.flags & ~SEND_DELAY_FLAGS) | mechanism.send_flag)
        if _publication(send) and send.context.provider.delay_publishes_when_due(
            send.context, mechanism.value
        ):
            return _addressed(send, proceed)
        return proceed(send)

    def _stage(self, send: OutgoingSend, proceed: Proceed) -> SendResult:
        """D02: the messages go to the staging queue with their target and delivery time."""
        ctx = send.context
        subscribers = None
        if _publication(send):
            subscribers = _subscribers(ctx, send.destination)  # type: ignore[arg-type]
        now = now_ms()
        copies: list[Message] = []
        original_id = ""
        for message in send.messages:
            original_id, staged = staging.staged_copies(send, message, now, subscribers)
            copies.extend(staged)
        completion = send.completion
        # no TTL on the staged copies: the processor expires them, with a report (D18)
        proceed(
            send.replace(
                destination=Queue(self.factory.staging_queue),
                messages=copies,
                time_to_live=0,
                delivery_delay=0,
                flags=send.flags & ~SEND_DELAY_FLAGS,
                properties={},
                headers={},
                describe=False,
                completion=None if completion is None else (lambda headers, error: completion(None, error)),
            )
        )
        return _original_headers(send, original_id, now)


def _original_headers(send: OutgoingSend, original_id: str, now: int) -> SendResult:
    """What the sender of delayed messages sent as copies sees: for one message, its original
    id and the headers it was sent with (D12)."""
    if len(send.messages) != 1:
        return SendResult(len(send.messages))
    ttl = send.time_to_live
    return SendResult(
        1,
        {
            "message_id": original_id,
            "timestamp": now,
            "destination": send.destination,
            "delivery_mode": send.delivery_mode,
            "priority": send.priority,
            "expiration": now + ttl if ttl else 0,
            "delivery_time": now + send.delivery_delay,
        },
    )


def _publication(send: OutgoingSend) -> bool:
    """Whether the send is a publication whose subscribers pyjms may be able to address."""
    return isinstance(send.destination, Topic) and not isinstance(send.destination, TemporaryTopic)


def _addressed(send: OutgoingSend, proceed: Proceed) -> SendResult:
    """D16, D21 where the broker's scheduler publishes a delayed message when it is due, to
    the subscribers of that moment: one delayed copy per subscriber at send, each addressed to
    its subscriber, as staging does (pyjms.providers.activemq.subscriptions). A subscriber that
    has gone by then takes nothing, and one that came later is not addressed. Copies carry the
    original id, which the sender and every receiver see (D12). Where the subscribers cannot all
    be addressed (not a pyjms broker, a subscriber pyjms did not make) or a body cannot be
    copied, the publication is sent once and matched when due, as the broker does."""
    subscribers = _subscribers(send.context, send.destination)  # type: ignore[arg-type]
    if subscribers is None:
        return proceed(send)
    now = now_ms()
    copies: list[Message] = []
    original_id = ""
    try:
        for message in send.messages:
            original_id = staging.new_message_id()
            copies.extend(
                message.copy(
                    add_properties={
                        staging.MESSAGE_ID: (T_STRING, original_id),
                        staging.SUBSCRIBER: (T_STRING, address),
                    }
                )
                for address in subscribers
            )
    except NotSupportedRuntimeException:
        return proceed(send)  # an object or stream body, which pyjms never copies
    completion = send.completion
    proceed(
        send.replace(
            messages=copies,
            describe=False,
            completion=None if completion is None else (lambda headers, error: completion(None, error)),
        )
    )
    return _original_headers(send, original_id, now)


def _subscribers(ctx: JMSContext, topic: Topic) -> list[str] | None:
    """The subscribers a delayed publication is staged for now (D16), else None."""
    try:
        return ctx.provider.subscriber_addresses(ctx, topic)
    except JMSRuntimeException:
        return None


def delay_policy(factory: ConnectionFactory) -> DelayPolicy | None:
    """The factory's delay policy (None if its chain has none)."""
    for policy in factory.send_policies():
        if isinstance(policy, DelayPolicy):
            return policy
    return None


def delay_mechanism(ctx: JMSContext) -> DelayMechanism:
    """The delay mechanism of ctx's factory, resolved now if it is not yet (may probe the
    broker: up to a few seconds for ``auto``)."""
    policy = delay_policy(ctx.factory)
    if policy is None:
        return DelayMechanism.NATIVE if ctx.channel.supports_native_delay() else DelayMechanism.NONE
    return policy.mechanism(ctx)


install_send_policy(DelayPolicy, order=ORDER)
