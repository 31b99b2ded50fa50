"""A message's outgoing record: what a send, a forward or a copy puts on the wire.

The record layout itself is pyjms.bridge.codec's; this module chooses what goes in it from a
message's parts: the application headers a send or copy carries (each the message's own, or
a replacement), the typed properties with some dropped or added, and the small block a copy
made in the JVM gets (Channel.forwardConsumed). Message.encode, Message.copy and
Message._forward_block are built on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyjms.api.destination import Destination
from pyjms.bridge import codec as C

#: "keep the message's own value" for Message.encode and Message.copy
KEEP: Any = object()

#: the application headers a send or a copy carries: correlation id, JMS type, reply-to
ApplicationHeaders = tuple[Any, Any, Any]


def kept_headers(
    headers: Mapping[str, Any], correlation_id: Any, jms_type: Any, reply_to: Any
) -> ApplicationHeaders:
    """The application headers of a copy of a message with these ``headers``: each the
    message's own where the argument is KEEP, the argument otherwise."""
    return (
        headers.get("correlation_id") if correlation_id is KEEP else correlation_id,
        headers.get("type") if jms_type is KEEP else jms_type,
        headers.get("reply_to") if reply_to is KEEP else reply_to,
    )


def outgoing_headers(
    headers: Mapping[str, Any], correlation_id: Any, jms_type: Any, reply_to: Any
) -> ApplicationHeaders:
    """As kept_headers, with the reply-to as the wire carries it (a destination key)."""
    corr, jtype, reply = kept_headers(headers, correlation_id, jms_type, reply_to)
    if isinstance(reply, Destination):
        reply = reply.key
    return corr, jtype, reply


def changed_properties(
    properties: Mapping[str, tuple[int, Any]],
    add_properties: Mapping[str, tuple[int, Any]] | None,
    drop_properties: Iterable[str],
) -> dict[str, tuple[int, Any]]:
    """A new dict of the typed properties: ``drop_properties`` left out, ``add_properties``
    over same-named ones (as a JMSProducer's properties override the message's)."""
    props = {k: v for k, v in properties.items() if k not in drop_properties}
    props.update(add_properties or {})
    return props


def pack_outgoing(
    kind: int, body: Any, headers: ApplicationHeaders, properties: dict[str, tuple[int, Any]]
) -> bytes:
    """The outgoing record (codec.pack_record) of a message of ``kind`` with this body, these
    application headers (outgoing_headers) and typed properties."""
    corr, jtype, reply = headers
    has_headers = corr is not None or jtype is not None or reply is not None
    packed_headers = C.pack_headers(corr, jtype, reply) if has_headers else b""
    return C.pack_record(kind, body, packed_headers, C.pack_properties(properties) if properties else b"")


def pack_forward_changes(
    headers: ApplicationHeaders, add_properties: Mapping[str, tuple[int, Any]] | None
) -> bytes:
    """What a copy made in the JVM from a delivered message gets in Python's stead: its
    application headers and added properties, packed (codec.pack_headers, pack_properties)."""
    return C.pack_headers(*headers) + C.pack_properties(dict(add_properties or {}))
