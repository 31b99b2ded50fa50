"""JMSConsumer and QueueBrowser for asyncio: the synchronous ones (pyjms.api.consumer), driven on
their context's worker (pyjms.aio.worker).

Cancellation. A receive whose caller is cancelled before the worker starts it never runs, so
it takes nothing. A receive already waiting stops at the end of its current slice. If that
slice took a message, the message is not lost: the consumer keeps it and hands it to the next
``receive``, ``receive_batch`` or ``async for`` step, or to one already waiting, before that
one's next slice (tests/aio/test_cancellation.py forces both cases). A kept message is
dropped when the context's ``rollback`` or ``recover`` hands it back to the provider, which
redelivers it. In AUTO/DUPS_OK a kept message is not acknowledged until it is handed over
(pyjms.aio.handover); closing a consumer that keeps one logs a warning and hands it back to the
provider: by the session's recovery in AUTO/DUPS_OK, else by the rollback, recovery or close
the application makes."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from pyjms.aio.worker import AGAIN, IN_LISTENER
from pyjms.api.checks import check_positive_int, check_wait_ms
from pyjms.api.consumer import JMSConsumer as SyncConsumer
from pyjms.api.consumer import QueueBrowser as SyncBrowser
from pyjms.api.destination import Destination
from pyjms.api.message import Message
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    MessageFormatRuntimeException,
)

if TYPE_CHECKING:
    from pyjms.aio.context import JMSContext

_log = logging.getLogger("pyjms")

#: how long one slice of a waiting receive blocks the context's worker when nothing else waits
SLICE_MS = 50
#: ... and when other jobs of the context wait behind it
SHORT_SLICE_MS = 5


class Taken:
    """What a receive step took, with the context's recovery epoch at the time (a message
    taken before a rollback or recover is handed back by it, so it must not be kept)."""

    __slots__ = ("epoch", "value")

    def __init__(self, epoch: int, value: Any) -> None:
        self.epoch = epoch
        self.value = value


def wait_ms(timeout_ms: int | timedelta | None, what: str = "timeout_ms") -> int | None:
    """None or 0 wait forever (as JMS receive(0) does); else milliseconds > 0."""
    if timeout_ms is None:
        return None
    return check_wait_ms(timeout_ms, what) or None


class JMSConsumer:
    """An asyncio jakarta.jms.JMSConsumer: ``await receive(timeout_ms)``, ``async for``."""

    def __init__(self, ctx: JMSContext, consumer: SyncConsumer) -> None:
        self._ctx = ctx
        #: the synchronous consumer this one drives (calling it from the loop blocks the loop)
        self.sync = consumer
        self._kept: deque[tuple[int, Any]] = deque()  # (epoch, Message) from cancelled receives
        self._kept_bodies: deque[tuple[int, Any]] = deque()  # from cancelled receive_body calls
        self._closing = False

    def __repr__(self) -> str:
        return f"<aio {self.sync!r}>"

    @property
    def context(self) -> JMSContext:
        return self._ctx

    @property
    def destination(self) -> Destination:
        return self.sync.destination

    def get_message_selector(self) -> str | None:
        return self.sync.get_message_selector()

    # ------------------------------------------------------------------ cancellation

    def _stopped(self) -> bool:
        return self._closing or self._ctx.closing

    def _keep(self, taken: Taken) -> None:
        """On the loop: what a receive took after its caller went away."""
        if taken.value is None or taken.value == []:
            return
        values = taken.value if isinstance(taken.value, list) else [taken.value]
        self._kept.extend((taken.epoch, m) for m in values)
        if self._ctx.hand_over is not None:  # AUTO/DUPS_OK: kept unacknowledged
            self._ctx.hand_over.kept()

    def _keep_body(self, taken: Taken) -> None:
        if taken.value is None:
            return
        self._kept_bodies.append((taken.epoch, taken.value))
        if self._ctx.hand_over is not None:
            self._ctx.hand_over.kept()

    def _from_kept(self, kept: deque[tuple[int, Any]], n: int = 1) -> list[Any]:
        """Up to n kept values (on the loop, or on the worker before a receive's slice: deque's
        append and popleft are atomic)."""
        out: list[Any] = []
        while len(out) < n:
            try:
                epoch, value = kept.popleft()
            except IndexError:
                break
            if epoch == self._ctx.epoch:  # else a rollback or recover gave it back to the provider
                out.append(value)
        return out

    def kept_count(self, besides: object | None = None) -> int:
        """How many messages this consumer keeps from cancelled receives since the context's
        last recovery, in its stores other than ``besides`` (copies of the stores are taken
        under the GIL: the worker asks while the loop may append)."""
        epoch = self._ctx.epoch
        return sum(
            1
            for store in (self._kept, self._kept_bodies)
            if store is not besides
            for k in tuple(store)
            if k[0] == epoch
        )

    def _check(self) -> None:
        if self._closing:
            raise IllegalStateRuntimeException("the consumer is closed")
        self._ctx.check_open()

    async def _receive(
        self,
        timeout_ms: int | None,
        take: Callable[[int], Any],
        empty: Any,
        orphan: Callable[[Taken], None],
        kept: deque[tuple[int, Any]],
        n: int = 1,
    ) -> Any:
        """Runs ``take(slice_ms)`` on the worker until it returns something other than
        ``empty``, the time is up, or the consumer or its context closes. Before each slice it
        looks at what cancelled receives kept (one may have taken a message after this receive
        began waiting)."""
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        ctx = self._ctx
        worker = ctx.worker
        hand_over = ctx.hand_over

        def step() -> Any:
            if self._stopped():
                return Taken(ctx.epoch, empty)  # a receive in progress returns nothing on close (JMS)
            if kept:
                values = self._from_kept(kept, n)
                if values:
                    return Taken(ctx.epoch, values if isinstance(empty, list) else values[0])
            if hand_over is not None and not hand_over.may_take(kept):
                return AGAIN  # another take is not settled yet, or another consumer keeps one
            slice_ms = SHORT_SLICE_MS if worker.backlog() else SLICE_MS
            if deadline is not None:
                slice_ms = max(1, min(slice_ms, int((deadline - time.monotonic()) * 1000)))
            got = take(slice_ms)
            if got is not None and not (isinstance(got, list) and not got):
                if hand_over is not None:
                    hand_over.taken()
                return Taken(ctx.epoch, got)
            if deadline is not None and time.monotonic() >= deadline:
                return Taken(ctx.epoch, empty)
            return AGAIN

        taken = await worker.call(step, orphan)
        return self._handed(taken.value)

    def _handed(self, value: Any) -> Any:
        """On the loop: ``value`` reaches its caller (AUTO/DUPS_OK: acknowledge it)."""
        if self._ctx.hand_over is not None and value is not None and value != []:
            self._ctx.hand_over.handed_over()
        return value

    # ------------------------------------------------------------------ receiving

    async def receive(self, timeout_ms: int | timedelta | None = None) -> Message | None:
        """The next message; waits up to timeout_ms (None or 0: until one arrives, or the
        consumer or its context closes, which returns None)."""
        self._check()
        kept = self._from_kept(self._kept)
        if kept:
            return cast("Message | None", self._handed(kept[0]))
        sync = self.sync
        return cast(
            "Message | None",
            await self._receive(wait_ms(timeout_ms), sync.receive, None, self._keep, self._kept),
        )

    async def receive_no_wait(self) -> Message | None:
        self._check()
        kept = self._from_kept(self._kept)
        if kept:
            return cast("Message | None", self._handed(kept[0]))
        sync = self.sync
        # a receive whose time is up at once: one look, through the same gate as any take
        return cast(
            "Message | None",
            await self._receive(0, lambda _ms: sync.receive_no_wait(), None, self._keep, self._kept),
        )

    async def receive_body(self, body_type: type, timeout_ms: int | timedelta | None = None) -> Any:
        """The next message's body as body_type (str, bytes, dict), or None if none came."""
        self._check()
        kept = self._from_kept(self._kept_bodies)
        if kept:
            return self._handed(kept[0])
        sync = self.sync
        hand_over = self._ctx.hand_over

        def take(ms: int) -> Any:
            try:
                return sync.receive_body(body_type, ms)
            except MessageFormatRuntimeException:
                if hand_over is not None:  # AUTO/DUPS_OK: the message is redelivered
                    hand_over.recover_now()
                raise

        return await self._receive(
            wait_ms(timeout_ms),
            take,
            None,
            self._keep_body,
            self._kept_bodies,
        )

    async def receive_batch(self, max_messages: int, timeout_ms: int | timedelta = 1000) -> list[Message]:
        """Up to max_messages with one JVM crossing: waits up to timeout_ms for the first, then
        takes what is already there."""
        self._check()
        check_positive_int(max_messages, "max_messages")
        kept = self._from_kept(self._kept, max_messages)
        if kept:
            return self._handed(kept)  # type: ignore[no-any-return]
        sync = self.sync
        timeout = wait_ms(timeout_ms) or 1  # receive_batch(n, 0): one look at what is there
        got = await self._receive(
            timeout, lambda ms: sync.receive_batch(max_messages, ms), [], self._keep, self._kept, max_messages
        )
        return list(got)

    def __aiter__(self) -> AsyncIterator[Message]:
        return self

    async def __anext__(self) -> Message:
        """Messages as they arrive, until the consumer or its context is closed."""
        if self._stopped():
            raise StopAsyncIteration
        m = await self.receive()
        if m is None:
            raise StopAsyncIteration
        return m

    async def messages(self, idle_timeout_ms: int | timedelta = 1000) -> AsyncIterator[Message]:
        """Messages until none arrives for idle_timeout_ms."""
        while (m := await self.receive(idle_timeout_ms)) is not None:
            yield m

    # ------------------------------------------------------------------ listener

    async def set_message_listener(
        self, listener: Callable[[Message], Awaitable[None] | None] | None
    ) -> None:
        """Delivers messages to ``listener(message)`` on the event loop (a coroutine function
        or a plain function). The context's dispatch thread hands each message over with
        ``call_soon_threadsafe`` and waits for the listener to finish before the next one, so
        in AUTO/DUPS_OK modes a message is acknowledged when the listener returns and is
        redelivered if it raises, as with the synchronous API. None stops delivery."""
        self._check()
        if listener is not None and not callable(listener):
            raise InvalidArgumentRuntimeException(f"a message listener must be callable, got {listener!r}")
        loop = asyncio.get_running_loop()
        deliver: Callable[[Message], None] | None = None
        if listener is not None:
            call = listener

            ctx = self._ctx
            hand_over = ctx.hand_over

            async def on_loop(message: Message) -> None:
                ctx.delivery_started()
                IN_LISTENER.set(True)
                result = call(message)
                if inspect.isawaitable(result):
                    await result

            def deliver(message: Message) -> None:  # on the context's dispatch thread
                try:
                    asyncio.run_coroutine_threadsafe(on_loop(message), loop).result()
                    # AUTO/DUPS_OK: acknowledged when the listener returns (not if the listener
                    # closed the context: the session's close hands the message back)
                    if hand_over is not None and not ctx.closing:
                        ctx.sync.acknowledge()
                finally:
                    loop.call_soon_threadsafe(ctx.delivery_ended)

        sync = self.sync
        await self._ctx.worker.submit(lambda: sync.set_message_listener(deliver))

    # ------------------------------------------------------------------ closing

    async def close(self) -> None:
        """Closes the consumer; a receive waiting on it returns None. Messages it keeps from
        cancelled receives go back to the provider, which redelivers them."""
        if self._closing:
            return
        await self._ctx.listeners_finished()
        self._closing = True
        ctx = self._ctx
        hand_over = ctx.hand_over
        kept = self.kept_count()
        if kept:
            _log.warning(
                "closing %r with %d message(s) a cancelled receive took and no receive had since; "
                "each goes back to the provider with the session's %s",
                self,
                kept,
                "recovery now" if hand_over is not None else "rollback, recovery or close",
            )
            if hand_over is not None and not ctx.closing:
                hand_over.recover_soon()  # before the consumer closes (AUTO/DUPS_OK)
        if not ctx.closing:
            sync = self.sync

            def close() -> Any:
                if hand_over is not None and not hand_over.recovered_what_is_kept():
                    return AGAIN
                sync.close()
                return None

            await ctx.worker.submit(close)
        # only now: until the recovery, other takes see that this consumer keeps messages
        ctx.consumer_closed(self)

    async def __aenter__(self) -> JMSConsumer:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


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
