"""Browsers for asyncio, on their context's worker: the JMS QueueBrowser (pyjms.api.consumer's),
and IBM MQ's browse with mark (pyjms.browse.MarkingBrowser).

``await browser.get(options, wait_ms)`` waits in slices, so other calls on the context go on
meanwhile. A get whose caller is cancelled after it marked a message removes the marks it made
(UNMARK_BROWSE_HANDLE and/or UNMARK_BROWSE_CO_OP): the message is browsable again, by this
handle and by the cooperating set, rather than marked for nobody's use.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pyjms.aio.worker import AGAIN
from pyjms.api.consumer import QueueBrowser as SyncBrowser
from pyjms.api.destination import Destination, Queue
from pyjms.api.message import Message
from pyjms.browse import (
    MARK_BROWSE_CO_OP,
    MARK_BROWSE_HANDLE,
    UNMARK_BROWSE_CO_OP,
    UNMARK_BROWSE_HANDLE,
    NoMessageAvailable,
)
from pyjms.browse import (
    MarkingBrowser as SyncMarkingBrowser,
)
from pyjms.browse.options import BROWSE_HANDLE, check_get_options
from pyjms.errors import InvalidArgumentRuntimeException
from pyjms.reasons import MQRC

if TYPE_CHECKING:
    from pyjms.aio.context import JMSContext

#: the longest one slice of a waiting get holds the context's worker
GET_SLICE_MS = 100


class QueueBrowser:
    """An asyncio jakarta.jms.QueueBrowser: ``async for message in browser``."""

    def __init__(self, ctx: JMSContext, browser: SyncBrowser) -> None:
        self._ctx = ctx
        #: the synchronous browser this one drives
        self.sync = browser

    def get_queue(self) -> Destination:
        return self.sync.get_queue()

    def get_message_selector(self) -> str | None:
        return self.sync.get_message_selector()

    async def next_batch(self, max_messages: int) -> list[Message]:
        """The next up to max_messages of the browse; an empty list at the end of the queue."""
        sync = self.sync
        return await self._ctx.worker.submit(lambda: sync.next_batch(max_messages))

    def get_enumeration(self) -> AsyncIterator[Message]:
        return self.__aiter__()

    async def __aiter__(self) -> AsyncIterator[Message]:
        while batch := await self.next_batch(500):
            for m in batch:
                yield m

    async def close(self) -> None:
        if not self._ctx.closing:
            await self._ctx.worker.submit(self.sync.close)

    async def __aenter__(self) -> QueueBrowser:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class MarkingBrowser:
    """An asyncio pyjms.browse.MarkingBrowser: ``await browser.get(BROWSE_CO_OP, wait_ms=1000)``."""

    def __init__(self, ctx: JMSContext, browser: SyncMarkingBrowser) -> None:
        self._ctx = ctx
        #: the synchronous marking browser this one drives
        self.sync = browser

    def __repr__(self) -> str:
        return f"<aio {self.sync!r}>"

    def get_queue(self) -> Queue:
        return self.sync.get_queue()

    def get_message_selector(self) -> str | None:
        return self.sync.get_message_selector()

    def is_cooperative(self) -> bool:
        return self.sync.is_cooperative()

    async def get_mark_browse_interval(self) -> int:
        return await self._ctx.worker.submit(self.sync.get_mark_browse_interval)

    async def get(self, options: int = BROWSE_HANDLE, wait_ms: int = 0) -> Message:
        """The next message the options select, marked as they say; raises NoMessageAvailable
        (MQRC_NO_MSG_AVAILABLE, 2033) if none comes within wait_ms."""
        m = await self.get_or_none(options, wait_ms)
        if m is None:
            queue = self.sync.get_queue()
            raise NoMessageAvailable(
                f"no message on {queue} for these browse options within {wait_ms} ms",
                reason=MQRC.NO_MSG_AVAILABLE,
                values={"queue": queue.name},
            )
        return m

    async def get_or_none(self, options: int = BROWSE_HANDLE, wait_ms: int = 0) -> Message | None:
        """As get, but None when no message is available."""
        check_get_options(options, self.sync.is_cooperative())
        if isinstance(wait_ms, bool) or not isinstance(wait_ms, int) or wait_ms < 0:
            raise InvalidArgumentRuntimeException(f"wait_ms {wait_ms!r} must be an int >= 0")
        self._ctx.check_open()
        deadline = time.monotonic() + wait_ms / 1000.0
        sync = self.sync

        def step() -> Any:
            left = int((deadline - time.monotonic()) * 1000)
            m = sync.get_or_none(options, max(0, min(left, GET_SLICE_MS)))
            if m is None and left > GET_SLICE_MS and not self._ctx.closing:
                return AGAIN
            return m

        unmark = (UNMARK_BROWSE_HANDLE if options & MARK_BROWSE_HANDLE else 0) | (
            UNMARK_BROWSE_CO_OP if options & MARK_BROWSE_CO_OP else 0
        )

        def release(m: Message | None) -> None:  # on the loop: the caller went away after the get
            if m is not None and unmark and not self._ctx.closing:
                self._ctx.worker.submit_detached(
                    lambda: sync.unmark(m, unmark), "unmarking what a cancelled get marked"
                )

        return await self._ctx.worker.call(step, release)

    async def unmark(self, message_or_token: Message | str, options: int = UNMARK_BROWSE_HANDLE) -> None:
        sync = self.sync
        await self._ctx.worker.submit(lambda: sync.unmark(message_or_token, options))

    async def close(self) -> None:
        """Closes the handle; its marks are released."""
        if not self._ctx.closing:
            await self._ctx.worker.submit(self.sync.close)

    async def __aenter__(self) -> MarkingBrowser:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
