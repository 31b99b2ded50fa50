"""Delivery delay through a staging queue, as IBM MQ does it (spec 002, D02, D12).

A delayed message is not sent to its target. It is put to the staging queue
(SYSTEM.DDELAY.LOCAL.QUEUE by default) with a header, carried as properties, naming its
target and delivery time; the delay processor (pyjms.delay.processor) puts it to the target
when it is due. The staged message is a new message with a new id, and its correlation id
holds the original message id, so a mistaken delay can be found on the staging queue
(``JMSCorrelationID = '<id>'``) and pulled back.

The original id is what the sender sees and what pyjms receivers see after delivery
(``JMS_PYJMS_MessageID``); the sender's own correlation id travels in a property and is
restored at delivery. A delayed publication is staged one copy per subscriber where the
provider can say who subscribes (D16, ProviderPlugin.subscriber_addresses).
"""

from __future__ import annotations

import uuid
from typing import Any, cast

from pyjms.api.destination import Destination, from_key
from pyjms.api.message import Message
from pyjms.api.message.record import KEEP
from pyjms.api.policy import OutgoingSend
from pyjms.api.property_types import T_LONG, T_STRING
from pyjms.bridge import contract

STAGING_QUEUE = contract.STAGING_QUEUE

# the staging header, as message properties (pyjms.bridge.contract)
TARGET = contract.STAGED_TARGET
ORIGINAL_CORRELATION_ID = contract.STAGED_CORRELATION_ID
DELIVERY_TIME = contract.DELIVERY_TIME
SEND_TIME = contract.SEND_TIME
# the staged copy's expiration is the processor's business (it reports it, D18), so it has a
# name of its own; at delivery it becomes the JMS_PYJMS_Expiration that receivers enforce
STAGED_EXPIRATION = contract.STAGED_EXPIRATION
EXPIRATION = contract.EXPIRATION
MESSAGE_ID = contract.MESSAGE_ID
SUBSCRIBER = contract.SUBSCRIBER
STAGED_USER = contract.STAGED_USER
STAGING_HEADER = (TARGET, ORIGINAL_CORRELATION_ID, STAGED_EXPIRATION, STAGED_USER)
#: what pyjms carries for the original message; a report about it is a new message without them
ORIGINAL_MESSAGE = (DELIVERY_TIME, SEND_TIME, EXPIRATION, MESSAGE_ID)


def staged_target(m: Message) -> Destination:
    """The target a staged message names (the shim quarantines one that names none:
    org.pyjms.shim.Poison.stagedProblem)."""
    return cast(Destination, from_key(m.get_string_property(TARGET)))


def new_message_id() -> str:
    """An original message id for a staged message (JMS ids start with 'ID:')."""
    return f"ID:pyjms-{uuid.uuid4().hex}"


def staging_properties(
    target_key: str, now_ms: int, delay_ms: int, ttl_ms: int, message_id: str, correlation_id: str | None
) -> dict[str, tuple[int, Any]]:
    """The properties that make a message a staged one (typed: pyjms.api.property_types)."""
    props: dict[str, tuple[int, Any]] = {
        TARGET: (T_STRING, target_key),
        DELIVERY_TIME: (T_LONG, now_ms + delay_ms),
        SEND_TIME: (T_LONG, now_ms),
        MESSAGE_ID: (T_STRING, message_id),
    }
    if ttl_ms > 0:
        props[STAGED_EXPIRATION] = (T_LONG, now_ms + ttl_ms)
    if correlation_id is not None:
        props[ORIGINAL_CORRELATION_ID] = (T_STRING, correlation_id)
    return props


def staged_copies(
    send: OutgoingSend, message: Message, now_ms: int, subscribers: list[str] | None
) -> tuple[str, list[Message]]:
    """The original id of one delayed message and its staged copies: one, or for a topic one
    per subscriber address (D16; ``subscribers`` None means one copy, matched at delivery).
    Each copy has the producer's headers and properties folded in, the staging header, and the
    original id as its correlation id (D12)."""
    h = send.headers
    original_id = new_message_id()
    own_correlation = h["correlation_id"] if "correlation_id" in h else message.get_jms_correlation_id()
    props = {
        **send.properties,
        **staging_properties(
            send.destination.key, now_ms, send.delivery_delay, send.time_to_live, original_id, own_correlation
        ),
    }

    def copy(extra: dict[str, tuple[int, Any]]) -> Message:
        return message.copy(
            correlation_id=original_id,
            jms_type=h.get("jms_type", KEEP),
            reply_to=h.get("reply_to", KEEP),
            add_properties={**props, **extra},
        )

    if subscribers is None:
        return original_id, [copy({})]
    return original_id, [copy({SUBSCRIBER: (T_STRING, address)}) for address in subscribers]
