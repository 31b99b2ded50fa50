"""JMS messages as pure Python objects (a facade over the shim's records).

Property and map values carry their JMS type, and the typed getters follow the Jakarta
Messaging conversion table. ObjectMessage bodies are never deserialized. The package keeps
apart what a message is from what checks it and what it becomes on the wire:

* properties: property names, typed values and the conversion table;
* base: Message, with its headers and properties, decoded lazily from a received record;
* bodies: TextMessage, BytesMessage, MapMessage, ObjectMessage, StreamMessage;
* record: the outgoing record a send, a forward or a copy puts on the wire.
"""

from pyjms.api.message.base import Message
from pyjms.api.message.bodies import (
    BytesMessage,
    MapMessage,
    ObjectMessage,
    StreamMessage,
    TextMessage,
    message_for_body,
)

__all__ = [
    "BytesMessage",
    "MapMessage",
    "Message",
    "ObjectMessage",
    "StreamMessage",
    "TextMessage",
    "message_for_body",
]
