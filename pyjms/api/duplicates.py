"""Dropping resent messages on the receiving side, for brokers that detect no duplicates.

A message with a duplicate-detection id (Message.set_duplicate_id, Artemis's ``_AMQ_DUPL_ID``)
that is resent, after a commit whose outcome was unknown or by a retried Spark task, is a new
message on the queue with a new JMSMessageID and the same duplicate id. Apache Artemis drops it
at the broker. ActiveMQ Classic cannot: its producer audit only recognises a message resent by
the same producer with the same message id (its failover transport's replays), and a resend
comes from a new connection. So pyjms's receivers drop it: a receiver that gets a message
whose duplicate id it has seen on the same queue (or, for a topic, the same consumer) with
another JMSMessageID hands it over no more; it is consumed like any message it takes (acked,
or committed with the transaction) and logged. A redelivery keeps its JMSMessageID, so a
message rolled back and redelivered is handed over again, as JMS requires.

The window is bounded and per process: the last ``PYJMS_DUPLICATE_WINDOW`` (default 100,000)
duplicate ids this process received. A resend that arrives after that many other ids, or at
another process (competing consumers), is not recognised.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import TYPE_CHECKING

from pyjms.bridge.contract import DUPLICATE_ID

if TYPE_CHECKING:
    from pyjms.api.message import Message

_log = logging.getLogger("pyjms")

#: how many duplicate ids a process remembers (the oldest are forgotten first)
DEFAULT_WINDOW = 100_000
#: what a record holds when a property of this name is in it: most records do not, and are
#: passed over without decoding their properties
DUPLICATE_ID_BYTES = DUPLICATE_ID.encode("ascii")


def _window_size() -> int:
    raw = os.environ.get("PYJMS_DUPLICATE_WINDOW", "")
    try:
        size = int(raw) if raw else DEFAULT_WINDOW
    except ValueError:
        size = DEFAULT_WINDOW
    return max(size, 1)


class DuplicateWindow:
    """The duplicate ids received lately, each with the JMSMessageID it first came in."""

    def __init__(self, size: int | None = None) -> None:
        self.size = _window_size() if size is None else size
        self._seen: OrderedDict[tuple[Hashable, str], str | None] = OrderedDict()
        self._lock = threading.Lock()
        #: how many resent messages this window dropped
        self.dropped = 0

    def is_resend(self, scope: Hashable, duplicate_id: str, message_id: str | None) -> bool:
        """Whether a message received in ``scope`` (a queue, or a topic consumer) is a resend
        of one received before: the same duplicate id with another message id. A first
        sighting is remembered."""
        key = (scope, duplicate_id)
        with self._lock:
            seen = self._seen.get(key, _ABSENT)
            if seen is _ABSENT:
                self._seen[key] = message_id
                if len(self._seen) > self.size:
                    self._seen.popitem(last=False)
                return False
            if seen == message_id:
                return False  # the same message redelivered (rollback, recover, reconnect)
            self.dropped += 1
        _log.info(
            "dropped a resent message on %s: duplicate id %r came before as %s, now as %s",
            scope,
            duplicate_id,
            seen,
            message_id,
        )
        return True


_ABSENT = object()


def duplicate_id_of(message: Message) -> str | None:
    """A received message's duplicate id, decoding its properties only if its record holds one."""
    rec = message.record
    if rec is not None and rec.buf.find(DUPLICATE_ID_BYTES, rec.start, rec.end) < 0:
        return None
    return message.get_duplicate_id()


#: the window of this process's receivers
RECEIVED = DuplicateWindow()
