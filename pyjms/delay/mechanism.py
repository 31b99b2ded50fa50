"""Which mechanism delays messages on this provider, chosen by probing it.

* ``native``: the client's JMS 2.0 ``setDeliveryDelay`` (ActiveMQ Classic's throws);
* ``scheduler``: the broker's own scheduler (ActiveMQ's ``AMQ_SCHEDULED_DELAY``, which a
  broker without schedulerSupport silently ignores, hence the probe);
* ``staging``: IBM MQ's design on any provider: a staging queue and a delay processor
  (pyjms.delay.staging, pyjms.delay.processor), chosen when a processor answers a ping;
* ``none``: no mechanism; a nonzero delay is refused with MQRC_FUNCTION_NOT_SUPPORTED (D04).

``ConnectionFactory(delivery_delay=...)`` overrides the choice. ``auto`` probes the
mechanisms the provider plug-in lists (ProviderPlugin.delay_mechanisms), best first, once per
factory: at the factory's first delayed send (pyjms.delay.policy), or when
:func:`pyjms.delay.delay_mechanism` asks. Whatever the mechanism, the shim records the
delivery time in a property, because OpenWire over tcp drops JMSDeliveryTime, and expiration
counts from the send.
"""

from __future__ import annotations

from enum import Enum

from pyjms.api.constants import DELIVERY_DELAY_CHOICES
from pyjms.api.context import JMSContext
from pyjms.api.message import TextMessage
from pyjms.bridge.contract import SEND_DELAY_NATIVE, SEND_DELAY_SCHEDULER
from pyjms.delay.processor import processor_answers
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException

# the send flags of the contract, under the names earlier releases used
DELAY_NATIVE_FLAG = SEND_DELAY_NATIVE
DELAY_SCHEDULER_FLAG = SEND_DELAY_SCHEDULER
PROBE_DELAY_MS = 1000


class DelayMechanism(str, Enum):
    NATIVE = "native"
    SCHEDULER = "scheduler"
    STAGING = "staging"
    NONE = "none"

    @property
    def available(self) -> bool:
        return self is not DelayMechanism.NONE

    @property
    def send_flag(self) -> int:
        return {DelayMechanism.NATIVE: SEND_DELAY_NATIVE, DelayMechanism.SCHEDULER: SEND_DELAY_SCHEDULER}.get(
            self, 0
        )


CHOICES = DELIVERY_DELAY_CHOICES
assert set(CHOICES) == {"auto", *(m.value for m in DelayMechanism)}


def check_choice(choice: str) -> str:
    if choice not in CHOICES:
        raise InvalidArgumentRuntimeException(
            f"delivery_delay {choice!r} is not one of {', '.join(CHOICES)}", values={"delivery_delay": choice}
        )
    return choice


def known_without_io(ctx: JMSContext, choice: str) -> DelayMechanism | None:
    """The mechanism a choice means when no broker needs asking (a forced one), else None.
    A forced ``native`` that the client lacks, or ``scheduler`` on a provider with no
    scheduler property (Qpid JMS), means NONE, so the delay is refused at set_delivery_delay
    (D04). Local checks of the client's capabilities only."""
    if choice == "auto":
        return None
    mechanism = DelayMechanism(choice)
    if mechanism is DelayMechanism.NATIVE and not ctx.channel.supports_native_delay():
        return DelayMechanism.NONE
    if mechanism is DelayMechanism.SCHEDULER and not ctx.channel.scheduler_markable():
        return DelayMechanism.NONE
    return mechanism


def resolve(ctx: JMSContext, choice: str) -> DelayMechanism:
    """The mechanism for a factory's ``delivery_delay`` choice; ``auto`` probes."""
    known = known_without_io(ctx, choice)
    return known if known is not None else probe(ctx)


def probe(ctx: JMSContext) -> DelayMechanism:
    """The best mechanism this context's provider offers (may take a few seconds: a delayed
    message must be seen not to arrive early, and a processor must answer a ping)."""
    channel = ctx.channel
    for name in ctx.provider.delay_mechanisms(ctx):
        # a broker may claim a delay it then ignores (ActiveMQ Classic's AMQP connector offers
        # DELAYED_DELIVERY with its scheduler off): such a claim is tried before it is believed
        if (
            name == DelayMechanism.NATIVE
            and channel.supports_native_delay()
            and (channel.native_delay_known() or delay_works(ctx, SEND_DELAY_NATIVE))
        ):
            return DelayMechanism.NATIVE
        if name == DelayMechanism.SCHEDULER and (channel.scheduler_known() or scheduler_works(ctx)):
            return DelayMechanism.SCHEDULER
        if name == DelayMechanism.STAGING and processor_answers(ctx):
            return DelayMechanism.STAGING
    return DelayMechanism.NONE


def scheduler_works(ctx: JMSContext) -> bool:
    """Sends a scheduled message to a temporary queue: it must not arrive early, and must arrive."""
    return delay_works(ctx, SEND_DELAY_SCHEDULER)


def delay_works(ctx: JMSContext, flag: int) -> bool:
    """Sends a message delayed by the mechanism of send ``flag`` to a temporary queue: it must
    not arrive early, and must arrive."""
    with ctx.create_context() as probe_ctx:
        try:
            q = probe_ctx.create_temporary_queue()
            consumer = probe_ctx.create_consumer(q)
            record = TextMessage("pyjms delay probe").encode()
            sends = probe_ctx.sends
            sends.send(sends.key(q), record, (1, 4, 0, PROBE_DELAY_MS, flag), "delay probe")
        except JMSRuntimeException:
            return False  # the provider has no such mechanism at all
        if consumer.receive(PROBE_DELAY_MS // 4) is not None:
            return False  # delivered at once: the broker ignored the delay
        return consumer.receive(PROBE_DELAY_MS * 5) is not None
