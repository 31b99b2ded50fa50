"""The JMS types of the message model, as the wire tags them: a property's type, a body's kind.

A typed property is a ``(tag, value)`` pair (Message.typed_properties, Message.encode's
``add_properties``): a short stays a short when a message is copied or forwarded. The tags and
kinds are the Python/Java contract's (pyjms.bridge.contract); features name them from here.
"""

from __future__ import annotations

from pyjms.bridge.contract import (
    KIND_BYTES,
    KIND_MAP,
    KIND_MESSAGE,
    KIND_OBJECT,
    KIND_STREAM,
    KIND_TEXT,
    T_BOOL,
    T_BYTE,
    T_BYTES,
    T_CHAR,
    T_DOUBLE,
    T_FLOAT,
    T_INT,
    T_LONG,
    T_NULL,
    T_SHORT,
    T_STRING,
)

__all__ = [
    "KIND_BYTES",
    "KIND_MAP",
    "KIND_MESSAGE",
    "KIND_OBJECT",
    "KIND_STREAM",
    "KIND_TEXT",
    "T_BOOL",
    "T_BYTE",
    "T_BYTES",
    "T_CHAR",
    "T_DOUBLE",
    "T_FLOAT",
    "T_INT",
    "T_LONG",
    "T_NULL",
    "T_SHORT",
    "T_STRING",
]
