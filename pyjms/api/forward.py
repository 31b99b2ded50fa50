"""Putting a message somewhere else unchanged: one implementation for every forwarder.

The DLQ handler and dead-lettering (pyjms.dlq), and the delay processor, move messages on as
IBM MQ does with MQPMO_PASS_ALL_CONTEXT: never altered (Q08). A forward keeps the body (with
the JMS types of map entries), every property (with its JMS type), JMSCorrelationID, JMSType,
JMSReplyTo, JMSPriority and JMSDeliveryMode, and sends with the time-to-live that is left, so
the message expires when it would have (E14). The provider assigns a new JMSMessageID and
JMSTimestamp on every send; the original send time travels in ``JMS_PYJMS_Timestamp``, which
``Message.get_jms_timestamp()`` reads. A forwarder may drop and add properties and replace the
correlation id or reply-to; nothing else changes.

* :func:`forward` sends one message through a JMSProducer (in the context's transaction);
* :func:`forward_entry` makes a routed entry for ``JMSContext.send_routed``, for forwarders
  that move many messages with one JVM crossing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from pyjms.api.destination import Destination
from pyjms.api.expiry import now_ms
from pyjms.api.message import Message
from pyjms.api.message.record import KEEP
from pyjms.bridge import codec as C
from pyjms.bridge.contract import SEND_TIME

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext
    from pyjms.api.producer import JMSProducer


def remaining_time_to_live(message: Message, at_ms: int | None = None) -> int:
    """The JMS time-to-live that keeps the message's expiration (0: it never expires).

    A message whose expiration has just passed gets 1 ms rather than 0, which would make it
    immortal; the provider then expires it as it would have.
    """
    expiration = message.get_jms_expiration()
    if expiration <= 0:
        return 0
    return max(1, expiration - (now_ms() if at_ms is None else at_ms))


def _added(
    message: Message, drop: Collection[str], add: Mapping[str, tuple[int, Any]] | None
) -> dict[str, tuple[int, Any]]:
    """The properties a forward adds: the given ones, and the original send time, which the
    provider's new JMSTimestamp would lose (unless the forwarder drops it)."""
    added = dict(add or {})
    sent_at = message.get_jms_timestamp()
    if (
        sent_at
        and SEND_TIME not in drop
        and SEND_TIME not in added
        and SEND_TIME not in message.typed_properties()
    ):
        added[SEND_TIME] = (C.T_LONG, sent_at)
    return added


def forwarded(
    message: Message,
    *,
    drop_properties: Collection[str] = (),
    add_properties: Mapping[str, tuple[int, Any]] | None = None,
    correlation_id: Any = KEEP,
    reply_to: Any = KEEP,
) -> Message:
    """The unsent copy a forward sends (Message.copy, with the original send time kept)."""
    return message.copy(
        correlation_id=correlation_id,
        reply_to=reply_to,
        drop_properties=drop_properties,
        add_properties=_added(message, drop_properties, add_properties),
    )


def forward(
    ctx: JMSContext,
    destination: Destination,
    message: Message,
    *,
    drop_properties: Collection[str] = (),
    add_properties: Mapping[str, tuple[int, Any]] | None = None,
    correlation_id: Any = KEEP,
    reply_to: Any = KEEP,
    producer: JMSProducer | None = None,
    sent_headers: bool = True,
) -> Message | None:
    """Sends ``message`` on to ``destination`` unchanged, in ctx (its transaction, if any), with
    its priority, delivery mode and remaining lifetime. ``add_properties`` are typed, as
    Message.typed_properties gives them. Returns the copy as sent, with its new message id.
    With ``sent_headers`` False it returns None: the forwarder reads nothing of the copy, so
    the provider's headers are not brought back, and a message ctx consumed last is copied in
    the JVM, where its properties need not cross again (the DLQ handler's moves). ``message``
    itself is not modified, so a received message can be forwarded more than once."""
    out = (producer or ctx.create_producer()).set_delivery_mode(message.get_jms_delivery_mode())
    out.set_priority(message.get_jms_priority()).set_time_to_live(remaining_time_to_live(message))
    if not sent_headers:
        block = message._forward_block(
            correlation_id=correlation_id,
            reply_to=reply_to,
            add_properties=_added(message, drop_properties, add_properties),
        )
        if block is not None and out._forward_consumed(destination, drop_properties, *block):
            return None
    copy = forwarded(
        message,
        drop_properties=drop_properties,
        add_properties=add_properties,
        correlation_id=correlation_id,
        reply_to=reply_to,
    )
    out._send_message(destination, copy, describe=sent_headers)
    return copy if sent_headers else None


def forward_entry(
    destination: Destination,
    message: Message,
    *,
    time_to_live: int | None = None,
    drop_properties: Collection[str] = (),
    add_properties: Mapping[str, tuple[int, Any]] | None = None,
    correlation_id: Any = KEEP,
    reply_to: Any = KEEP,
) -> bytes:
    """The routed entry (for JMSContext.send_routed) that forwards ``message`` to
    ``destination`` as :func:`forward` does; ``time_to_live`` None keeps the remaining one."""
    record = message.encode(
        correlation_id=correlation_id,
        reply_to=reply_to,
        drop_properties=drop_properties,
        add_properties=_added(message, drop_properties, add_properties),
    )
    ttl = remaining_time_to_live(message) if time_to_live is None else time_to_live
    return C.pack_routed(
        destination.key, message.get_jms_delivery_mode(), message.get_jms_priority(), ttl, 0, record
    )
