"""IBM MQ's rules for delayed messages, applied to every delayed send as a send policy.

Installed (pyjms.rules does it when imported) after the delay mechanism's policy, so a delay
the provider cannot apply is refused first (D04) and these rules apply only to delays that
can happen: D06 when a producer's options are set and at each send; D07, D08 per message;
D05, D22, D23 on the target's attributes, which the provider plug-in reads from the broker
(ProviderPlugin.target_attributes).
"""

from __future__ import annotations

from pyjms.api.constants import PERSISTENT
from pyjms.api.context import JMSContext
from pyjms.api.factory import ConnectionFactory
from pyjms.api.policy import OutgoingSend, ProducerOptions, SendPolicy, install_send_policy
from pyjms.rules import delivery as rules

#: where the rules sit in every factory's send chain (pyjms.delay's policy is at 100)
ORDER = 200


class DelayedMessageRules(SendPolicy):
    """D05-D08, D22, D23 for sends with a delivery delay."""

    def applies(self, options: ProducerOptions) -> bool:
        return options.delivery_delay > 0

    def check_options(self, options: ProducerOptions, context: JMSContext) -> None:
        rules.check_delay_within_ttl(options.delivery_delay, options.time_to_live)

    def check_send(self, send: OutgoingSend) -> None:
        delay = send.delivery_delay
        rules.check_delay_within_ttl(delay, send.time_to_live)
        for message in send.messages:
            rules.check_delayed_message(delay, send.property_values(message))
        ctx = send.context
        attributes = ctx.provider.target_attributes(ctx, send.destination)
        if attributes is None:
            return
        size = max((rules.message_length(m, send.properties) for m in send.messages), default=0)
        rules.check_delayed_target(
            send.destination.key,
            attributes,
            persistent=send.delivery_mode == PERSISTENT,
            size=size,
            delay_ms=delay,
        )


def _rules_for(factory: ConnectionFactory) -> SendPolicy:
    return DelayedMessageRules()


install_send_policy(_rules_for, order=ORDER)
