"""QueueBrowser: looks at a queue's messages without consuming them, a batch per JVM crossing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyjms.api.destination import Destination
from pyjms.api.message import Message
from pyjms.bridge import codec as C
from pyjms.bridge.channel import Browser
from pyjms.errors import IllegalStateRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext


class QueueBrowser:
    """jakarta.jms.QueueBrowser: iterate to look at a queue without consuming."""

    _BATCH = 500

    def __init__(self, ctx: JMSContext, browser: Browser, queue: Destination, selector: str | None) -> None:
        self._ctx = ctx
        self._b = browser
        self._queue = queue
        self._selector = selector
        self._closed = False

    def get_queue(self) -> Destination:
        return self._queue

    def get_message_selector(self) -> str | None:
        return self._selector

    @property
    def context(self) -> JMSContext:
        """The context this browser browses in."""
        return self._ctx

    def wire_browser(self) -> Browser:
        """This browser on the wire (pyjms.bridge.channel.Browser), for features whose shim
        code reads its batches (the Spark reader's Arrow columns)."""
        return self._b

    def get_enumeration(self) -> Iterator[Message]:
        return iter(self)

    def __iter__(self) -> Iterator[Message]:
        while True:
            batch = self.next_batch(self._BATCH)
            if not batch:
                return
            yield from batch

    def next_batch(self, max_messages: int) -> list[Message]:
        """The next up to max_messages messages of the browse (one JVM crossing); an empty
        list at the end of the queue."""
        if self._closed:
            raise IllegalStateRuntimeException("the browser is closed")
        raw = self._b.next(max_messages, f"browse {self._queue}")
        return [Message.from_record(rec, None) for rec in C.iter_batch(raw)]

    def skipped_poison(self) -> list[str]:
        """The JMSMessageIDs of the messages this browse skipped since the last call because
        a JMS_PYJMS_* property they carry is malformed (poison: a receiver quarantines it to
        the dead-letter queue; each skip is logged once on ``pyjms.poison``)."""
        return self._b.skipped_ids()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._b.close(f"close browser on {self._queue}")

    def __enter__(self) -> QueueBrowser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
