"""JMSConsumer for asyncio: the synchronous one (pyjms.api.consumer), driven on its context's
worker (pyjms.aio.worker). (QueueBrowser, in pyjms.aio.browse, is importable from here too.)

Cancellation. A receive whose caller is cancelled before the worker starts it never runs, so
it takes nothing. A receive already waiting stops at the end of its current slice. If that
slice took a message, the message is not lost: the consumer keeps it and hands it to the next
``receive``, ``receive_batch`` or ``async for`` step, or to one already waiting, before that
one's next slice (tests/aio/test_cancellation.py forces both cases). A kept message is
dropped when the context's ``rollback`` or ``recover`` hands it back to the provider, which
redelivers it. In AUTO/DUPS_OK a kept message is not acknowledged until it is handed over
(pyjms.aio.handover); closing a consumer that keeps one logs a warning and hands it back to the
provider: by the session's recovery in AUTO/DUPS_OK, else by the rollback, recovery or close
the application makes. What a consumer holds (taken ahead, or kept from cancelled receives) is
pyjms.aio.held's."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from pyjms.aio.browse import QueueBrowser
from pyjms.aio.held import Held, Taken
from pyjms.aio.worker import AGAIN, IN_LISTENER
from pyjms.api.checks import check_positive_int, check_wait_ms
from pyjms.api.consumer import JMSConsumer as SyncConsumer
from pyjms.api.destination import Destination
from pyjms.api.message import Message
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    JMSRuntimeException,
    MessageFormatRuntimeException,
)

if TYPE_CHECKING:
    from pyjms.aio.context import JMSContext

__all__ = ["JMSConsumer", "QueueBrowser"]

_log = logging.getLogger("pyjms")

#: how long one slice of a waiting receive blocks the context's worker when nothing else waits
SLICE_MS = 50
#: ... and when other jobs of the context wait behind it
SHORT_SLICE_MS = 5
#: how many messages a receive takes at once where it may read ahead (see JMSConsumer.receive)
READ_AHEAD = 500
#: how long a receive_batch that took part of a batch still arriving waits for the rest (see
#: JMSConsumer.receive_batch)
BATCH_LINGER_S = 0.0005


def wait_ms(timeout_ms: int | timedelta | None, what: str = "timeout_ms") -> int | None:
    """None or 0 wait forever (as JMS receive(0) does); else milliseconds > 0."""
    if timeout_ms is None:
        return None
    return check_wait_ms(timeout_ms, what) or None


def _unassignable(message: Message, body_type: type) -> MessageFormatRuntimeException:
    return MessageFormatRuntimeException(
        f"the body of {type(message).__name__} {message.get_jms_message_id()} "
        f"cannot be returned as {body_type.__name__}"
    )


class JMSConsumer:
    """An asyncio jakarta.jms.JMSConsumer: ``await receive(timeout_ms)``, ``async for``."""

    def __init__(self, ctx: JMSContext, consumer: SyncConsumer) -> None:
        self._ctx = ctx
        #: the synchronous consumer this one drives (calling it from the loop blocks the loop)
        self.sync = consumer
        #: what receives took ahead, or after their caller went away, for the next receives
        self._held = Held(ctx)
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

    def kept_count(self, besides: object | None = None) -> int:
        """How many messages this consumer keeps from cancelled receives (or took ahead) since
        the context's last recovery, in its stores other than ``besides`` (Held.count)."""
        return self._held.count(besides)

    def keeps_any(self, besides: object | None = None) -> bool:
        """kept_count(besides) > 0, without counting (Held.any)."""
        return self._held.any(besides)

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
        ahead: bool = False,
    ) -> Any:
        """Runs ``take(slice_ms)`` on the worker until it returns something other than
        ``empty``, the time is up, or the consumer or its context closes. Before each slice it
        looks at what cancelled receives kept (one may have taken a message after this receive
        began waiting). ``ahead``: ``take`` returns a list, whose first message is the
        caller's and the rest kept for the next receives."""
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        ctx = self._ctx
        worker = ctx.worker
        hand_over = ctx.hand_over

        def step() -> Any:
            if self._stopped():
                return Taken(ctx.epoch, empty)  # a receive in progress returns nothing on close (JMS)
            if kept:
                values = self._held.take(kept, n)
                if values:
                    return Taken(ctx.epoch, values if isinstance(empty, list) else values[0])
            if hand_over is not None:
                if not hand_over.may_take(kept):
                    return AGAIN  # another take is not settled yet, or another consumer keeps one
                if kept:  # the take that settled meanwhile left its messages here: older, first
                    return AGAIN
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
        value = taken.value
        if ahead and isinstance(value, list):
            # the caller gets the first; the consumer keeps the rest for the next receives
            self._held.keep_ahead(taken.epoch, value[1:])
            value = value[0] if value else None
        return self._handed(value, taken.epoch)

    def _handed(self, value: Any, epoch: int) -> Any:
        """On the loop: ``value``, taken in recovery epoch ``epoch``, reaches its caller
        (AUTO/DUPS_OK: acknowledge it; CLIENT_ACKNOWLEDGE on an individual session: the next
        acknowledge() covers it)."""
        ctx = self._ctx
        if value is not None and value != []:
            messages = value if isinstance(value, list) else [value] if isinstance(value, Message) else []
            if ctx.hand_over is not None:
                ctx.hand_over.handed_over(self.sync, messages, batch=isinstance(value, list))
            elif ctx.individual:
                ctx.handed(epoch, messages)
        return value

    def _read_ahead(self) -> int:
        """How many messages a receive may take at once: READ_AHEAD in an AUTO or DUPS_OK
        context whose only consumer this is (each is acknowledged once it, and the ones taken
        with it, reached a caller: pyjms.aio.handover), and on every consumer of a
        CLIENT_ACKNOWLEDGE context on an individual session (its acknowledge() acknowledges
        only what reached a caller: JMSContext.acknowledge); else 1. A transacted context's
        commit covers everything the session took, so a receive takes only its own message
        there, as in CLIENT_ACKNOWLEDGE where the provider has no individual acknowledge mode."""
        ctx = self._ctx
        if ctx.individual:
            return READ_AHEAD
        return READ_AHEAD if ctx.hand_over is not None and ctx.sole_consumer(self) else 1

    # ------------------------------------------------------------------ receiving

    async def receive(self, timeout_ms: int | timedelta | None = None) -> Message | None:
        """The next message; waits up to timeout_ms (None or 0: until one arrives, or the
        consumer or its context closes, which returns None)."""
        self._check()
        kept = self._held.take(self._held.messages)
        if kept:
            return cast("Message | None", self._handed(kept[0], self._ctx.epoch))
        sync = self.sync
        ahead = self._read_ahead()
        if ahead > 1:
            return cast(
                "Message | None",
                await self._receive(
                    wait_ms(timeout_ms),
                    lambda ms: sync.receive_batch(ahead, ms),
                    [],
                    self._held.keep,
                    self._held.messages,
                    ahead=True,
                ),
            )
        return cast(
            "Message | None",
            await self._receive(
                wait_ms(timeout_ms), sync.receive, None, self._held.keep, self._held.messages
            ),
        )

    async def receive_no_wait(self) -> Message | None:
        self._check()
        kept = self._held.take(self._held.messages)
        if kept:
            return cast("Message | None", self._handed(kept[0], self._ctx.epoch))
        sync = self.sync
        # a receive whose time is up at once: one look, through the same gate as any take
        return cast(
            "Message | None",
            await self._receive(
                0, lambda _ms: sync.receive_no_wait(), None, self._held.keep, self._held.messages
            ),
        )

    async def receive_body(self, body_type: type, timeout_ms: int | timedelta | None = None) -> Any:
        """The next message's body as body_type (str, bytes, dict), or None if none came."""
        self._check()
        kept = self._held.take(self._held.bodies)
        if kept:
            return self._handed(kept[0], self._ctx.epoch)
        if self._ctx.individual:
            return await self._receive_body_of_message(body_type, timeout_ms)
        ahead = self._held.take(self._held.messages)  # messages taken ahead come first
        if ahead:
            message = ahead[0]
            if not message.is_body_assignable_to(body_type):
                self._held.put_back(message)  # still the next message
                raise _unassignable(message, body_type)
            self._handed(message, self._ctx.epoch)
            return message.get_body(body_type)
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
            self._held.keep_body,
            self._held.bodies,
        )

    async def _receive_body_of_message(self, body_type: type, timeout_ms: int | timedelta | None) -> Any:
        """receive_body in an individual context: the next message, as receive() gives it (from
        what was taken ahead first), and its body. A body it cannot return raises
        MessageFormatRuntimeException with the message delivered, as JMS has it in
        CLIENT_ACKNOWLEDGE: the next acknowledge() covers it."""
        message = await self.receive(timeout_ms)
        if message is None:
            return None
        if not message.is_body_assignable_to(body_type):
            raise _unassignable(message, body_type)
        return message.get_body(body_type)

    async def receive_batch(self, max_messages: int, timeout_ms: int | timedelta = 1000) -> list[Message]:
        """Up to max_messages: waits up to timeout_ms for the first, then takes what is already
        there. A take that found more than one message but fewer than max_messages (a batch
        still arriving) waits up to BATCH_LINGER_S more on the worker, unless another call of
        the context is queued, and adds what arrived meanwhile: each take costs asyncio a round
        trip to the worker, which the synchronous receive_batch does not pay, so fuller takes
        make fewer of them (docs/asyncio.md, "Throughput")."""
        self._check()
        check_positive_int(max_messages, "max_messages")
        kept = self._held.take(self._held.messages, max_messages)
        if kept:
            return self._handed(kept, self._ctx.epoch)  # type: ignore[no-any-return]
        sync = self.sync
        worker = self._ctx.worker
        timeout = wait_ms(timeout_ms) or 1  # receive_batch(n, 0): one look at what is there

        def take(ms: int) -> list[Message]:  # on the worker
            got = sync.receive_batch(max_messages, ms)
            if 1 < len(got) < max_messages and worker.linger(BATCH_LINGER_S):
                try:
                    got += sync.receive_batch(max_messages - len(got), 0)
                except JMSRuntimeException:
                    pass  # what was taken goes to its caller; the next call meets the error
            return got

        got = await self._receive(
            timeout,
            take,
            [],
            self._held.keep,
            self._held.messages,
            max_messages,
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
                if ctx.individual:  # the next acknowledge() covers it
                    ctx.handed(ctx.epoch, [message])
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
        hand_over = self._ctx.hand_over
        if deliver is not None and self._ctx.individual:
            await self._held.deliver(on_loop, sync)
        if listener is not None and hand_over is not None and self.kept_count():
            # what receives took ahead goes back to the provider first, which delivers it to
            # the listener (else the listener's acknowledgements would cover it unseen)
            hand_over.recover_soon()

        def set_listener() -> Any:
            if hand_over is not None and not hand_over.recovered_what_is_kept():
                return AGAIN
            sync.set_message_listener(deliver)
            return None

        await self._ctx.worker.submit(set_listener)

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
                "closing %r with %d message(s) taken ahead or by a cancelled receive and no receive had "
                "since; each goes back to the provider with the session's %s",
                self,
                kept,
                "recovery now" if hand_over is not None else "rollback, recovery or close",
            )
            if hand_over is not None and not ctx.closing:
                hand_over.recover_soon()  # before the consumer closes (AUTO/DUPS_OK)
        if ctx.individual and kept and not ctx.closing:
            # its unacknowledged messages go back marked redelivered with the session's recover()
            # or close, which closes it then (closed now, Artemis's client would hand them back
            # as never delivered)
            ctx.close_at_recovery(self.sync)
        elif not ctx.closing:
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
