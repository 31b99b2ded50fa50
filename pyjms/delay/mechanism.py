"""Which mechanism delays messages on this provider, chosen by probing it.

* ``native``: the client's JMS 2.0 ``setDeliveryDelay`` (ActiveMQ Classic's throws);
* ``scheduler``: the broker's own scheduler (ActiveMQ's ``AMQ_SCHEDULED_DELAY``, which a
  broker without schedulerSupport silently ignores, hence the probe);
* ``staging``: IBM MQ's design on any provider: a staging queue and a delay processor
  (pyjms.delay.staging, pyjms.delay.processor), chosen when a processor answers a ping;
* ``none``: no mechanism; a nonzero delay is refused with MQRC_FUNCTION_NOT_SUPPORTED (D04).

``ConnectionFactory(delivery_delay=...)`` overrides the choice; ``auto`` probes once per
factory. Whatever the mechanism, the shim records the delivery time in a property, because
OpenWire over tcp drops JMSDeliveryTime, and expiration counts from the send.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from pyjms.errors import InvalidArgumentRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext

# send flags understood by the shim (org.pyjms.shim.Channel)
DELAY_NATIVE_FLAG = 4
DELAY_SCHEDULER_FLAG = 8
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
        return {DelayMechanism.NATIVE: DELAY_NATIVE_FLAG, DelayMechanism.SCHEDULER: DELAY_SCHEDULER_FLAG}.get(self, 0)


CHOICES = ("auto", *(m.value for m in DelayMechanism))


def check_choice(choice: str) -> str:
    if choice not in CHOICES:
        raise InvalidArgumentRuntimeException(
            f"delivery_delay {choice!r} is not one of {', '.join(CHOICES)}", values={"delivery_delay": choice}
        )
    return choice


def resolve(ctx: JMSContext, choice: str) -> DelayMechanism:
    """The mechanism for a factory's ``delivery_delay`` choice; a forced ``native`` that the
    client lacks, or ``scheduler`` on a provider with no scheduler property, resolves to NONE,
    so the delay is refused at set_delivery_delay (D04)."""
    if choice == "auto":
        return probe(ctx)
    mechanism = DelayMechanism(choice)
    if mechanism is DelayMechanism.NATIVE and not ctx._ch.supportsNativeDelay():
        return DelayMechanism.NONE
    if mechanism is DelayMechanism.SCHEDULER and not ctx._ch.schedulerMarkable():
        return DelayMechanism.NONE  # e.g. Qpid JMS: no scheduler property to set
    return mechanism


def probe(ctx: JMSContext) -> DelayMechanism:
    """The best mechanism this context's provider offers."""
    ch = ctx._ch
    # a broker may claim a delay it then ignores (ActiveMQ Classic's AMQP connector offers
    # DELAYED_DELIVERY with its scheduler off): such a claim is tried before it is believed
    if ch.supportsNativeDelay() and (ch.nativeDelayKnown() or delay_works(ctx, DELAY_NATIVE_FLAG)):
        return DelayMechanism.NATIVE
    if ch.schedulerKnown() or scheduler_works(ctx):
        return DelayMechanism.SCHEDULER
    from pyjms.delay.processor import processor_answers

    if processor_answers(ctx):
        return DelayMechanism.STAGING
    return DelayMechanism.NONE


def scheduler_works(ctx: JMSContext) -> bool:
    """Sends a scheduled message to a temporary queue: it must not arrive early, and must arrive."""
    return delay_works(ctx, DELAY_SCHEDULER_FLAG)


def delay_works(ctx: JMSContext, flag: int) -> bool:
    """Sends a message delayed by the mechanism of send ``flag`` to a temporary queue: it must
    not arrive early, and must arrive."""
    from pyjms.bridge import codec as C

    with ctx.create_context() as probe_ctx:
        try:
            q = probe_ctx.create_temporary_queue()
            consumer = probe_ctx.create_consumer(q)
            record = C.pack_record(C.KIND_TEXT, "pyjms scheduler probe")
            probe_ctx._ch.send(probe_ctx._jkey(q), record, 1, 4, 0, PROBE_DELAY_MS, flag)
        except probe_ctx._s.JException:
            return False  # the provider has no such mechanism at all
        if consumer.receive(PROBE_DELAY_MS // 4) is not None:
            return False  # delivered at once: the broker ignored the delay
        return consumer.receive(PROBE_DELAY_MS * 5) is not None
