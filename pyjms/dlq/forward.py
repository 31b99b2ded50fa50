"""Putting a message somewhere else unchanged: what dead-lettering and the DLQ handler do.

IBM's DLQ handler puts with MQPMO_PASS_ALL_CONTEXT and never alters a message (Q08). In
JMS terms a put here keeps the body (with the JMS types of map entries), every property
(with its JMS type), JMSCorrelationID, JMSType, JMSReplyTo, JMSPriority and
JMSDeliveryMode, and sends with the time-to-live that is left, so the message expires when
it would have (E14). The provider assigns a new JMSMessageID and JMSTimestamp on every send;
pyjms keeps the original send time in ``JMS_PYJMS_Timestamp``, which
``Message.get_jms_timestamp()`` reads, as it does for scheduler-delayed messages.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from pyjms.api.message import (
    SEND_TIME_PROPERTY,
    BytesMessage,
    MapMessage,
    Message,
    TextMessage,
    check_property_name,
    tag_for,
)
from pyjms.bridge import codec as C
from pyjms.errors import NotSupportedRuntimeException
from pyjms.rules.expiry import now_ms

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext
    from pyjms.api.destination import Destination
    from pyjms.api.producer import JMSProducer

_COPYABLE = (Message, TextMessage, BytesMessage, MapMessage)


def put_unchanged(
    ctx: JMSContext,
    destination: Destination,
    message: Message,
    *,
    strip: Collection[str] = (),
    add: Mapping[str, bool | int | float | str] | None = None,
    producer: JMSProducer | None = None,
) -> Message:
    """Sends a copy of ``message`` to ``destination`` in ctx (its transaction, if any).

    ``strip`` names properties to leave out and ``add`` adds properties (JMS type from the
    Python type); nothing else changes. Returns the copy as sent (with its new message id).
    ``message`` itself is not modified, so a received message can be put more than once.
    """
    copy = copy_message(message)
    props = copy._properties()
    for name in strip:
        props.pop(name, None)
    for name, value in (add or {}).items():
        props[check_property_name(name)] = (tag_for(value, what=f"property {name!r}"), value)
    sent_at = message.get_jms_timestamp()
    if sent_at and SEND_TIME_PROPERTY not in props:
        props[SEND_TIME_PROPERTY] = (C.T_LONG, sent_at)  # the provider restamps JMSTimestamp
    (producer or ctx.create_producer()).set_delivery_mode(message.get_jms_delivery_mode()).set_priority(
        message.get_jms_priority()
    ).set_time_to_live(remaining_time_to_live(message)).send(destination, copy)
    return copy


def remaining_time_to_live(message: Message, at_ms: int | None = None) -> int:
    """The JMS time-to-live that keeps the message's expiration (0: it never expires).

    A message whose expiration has just passed gets 1 ms rather than 0, which would make it
    immortal; the provider then expires it as it would have.
    """
    expiration = message.get_jms_expiration()
    if expiration <= 0:
        return 0
    return max(1, expiration - (now_ms() if at_ms is None else at_ms))


def copy_message(message: Message) -> Message:
    """A sendable copy with the same body, properties and application headers.

    It works on the facade's typed storage: the public getters give Python values, which
    would lose JMS types (a short property would come back an int), and Q08 forbids that.
    """
    if type(message) not in _COPYABLE:
        raise NotSupportedRuntimeException(
            f"pyjms cannot put a {type(message).__name__} unchanged: it never decodes its body",
            values={"message_id": message.get_jms_message_id()},
        )
    copy = type(message)()
    body: Any = message._decoded_body()
    copy._body = dict(body) if isinstance(body, dict) else body
    headers = message._headers()
    copy_headers = copy._headers()
    for name in ("correlation_id", "type", "reply_to"):
        copy_headers[name] = headers.get(name)
    copy._props = dict(message._properties())
    return copy


__all__ = ["put_unchanged", "copy_message", "remaining_time_to_live"]
