"""What an asyncio consumer (pyjms.aio.consumer) holds for its next receives: the messages a
receive took ahead of its caller (consumer READ_AHEAD) and what receives took after their
caller went away (cancellation).

Each held value carries the context's recovery epoch at its take: a rollback or recover hands
everything unacknowledged back to the provider, which redelivers it, so a value taken before
one is dropped, never handed over. The stores are deques: the loop appends to them and the
worker takes from them before a receive's slice (deque's append and popleft are atomic); the
worker counts them on copies taken under the GIL.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from pyjms.api.consumer import JMSConsumer as SyncConsumer
from pyjms.api.message import Message

if TYPE_CHECKING:
    from pyjms.aio.context import JMSContext


class Taken:
    """What a receive step took, with the context's recovery epoch at the time (a message
    taken before a rollback or recover is handed back by it, so it must not be kept)."""

    __slots__ = ("epoch", "value")

    def __init__(self, epoch: int, value: Any) -> None:
        self.epoch = epoch
        self.value = value


class Held:
    """One consumer's held values, (epoch, value) pairs in the order of their takes:
    ``messages`` (taken ahead, or by cancelled receives) and ``bodies`` (by cancelled
    receive_body calls)."""

    def __init__(self, ctx: JMSContext) -> None:
        self._ctx = ctx
        self.messages: deque[tuple[int, Any]] = deque()
        self.bodies: deque[tuple[int, Any]] = deque()

    def keep(self, taken: Taken) -> None:
        """On the loop: what a receive took after its caller went away."""
        if taken.value is None or taken.value == []:
            return
        values = taken.value if isinstance(taken.value, list) else [taken.value]
        self.messages.extend((taken.epoch, m) for m in values)
        if self._ctx.hand_over is not None:  # AUTO/DUPS_OK: kept unacknowledged
            self._ctx.hand_over.kept()

    def keep_body(self, taken: Taken) -> None:
        """On the loop: what a receive_body took after its caller went away."""
        if taken.value is None:
            return
        self.bodies.append((taken.epoch, taken.value))
        if self._ctx.hand_over is not None:
            self._ctx.hand_over.kept()

    def keep_ahead(self, epoch: int, messages: list[Message]) -> None:
        """On the loop: the messages a receive took with its caller's, for the next receives."""
        self.messages.extend((epoch, m) for m in messages)

    def put_back(self, message: Message) -> None:
        """On the loop: ``message``, taken from ``messages`` just now, is the next one again."""
        self.messages.appendleft((self._ctx.epoch, message))

    def take(self, store: deque[tuple[int, Any]], n: int = 1) -> list[Any]:
        """Up to n held values of ``store`` (on the loop, or on the worker before a receive's
        slice)."""
        out: list[Any] = []
        while len(out) < n:
            try:
                epoch, value = store.popleft()
            except IndexError:
                break
            if epoch == self._ctx.epoch:  # else a rollback or recover gave it back to the provider
                out.append(value)
        return out

    def count(self, besides: object | None = None) -> int:
        """How many values are held since the context's last recovery, in the stores other
        than ``besides``."""
        epoch = self._ctx.epoch
        return sum(
            1
            for store in (self.messages, self.bodies)
            if store is not besides
            for k in tuple(store)
            if k[0] == epoch
        )

    def any(self, besides: object | None = None) -> bool:
        """count(besides) > 0, without counting: values are appended with the epoch of their
        take, which only grows, so those of the current epoch are at the end."""
        epoch = self._ctx.epoch
        for store in (self.messages, self.bodies):
            if store is besides:
                continue
            try:
                if store[-1][0] == epoch:
                    return True
            except IndexError:
                continue
        return False

    async def deliver(
        self, on_loop: Callable[[Message], Coroutine[Any, Any, None]], sync: SyncConsumer
    ) -> None:
        """A listener set in an individual context gets the held messages first, in order,
        each delivered as the provider's are (in a task of its own, so that the caller is not
        in the listener). If the listener raises, the session recovers, as for a failed
        delivery in CLIENT_ACKNOWLEDGE: the provider delivers every unacknowledged message
        again, the rest of these among them."""
        ctx = self._ctx
        for message in self.take(self.messages, len(self.messages)):
            try:
                await asyncio.create_task(on_loop(message))
            except Exception as e:
                sync.listener_failed(e)
                await ctx.recover()
                return
            finally:
                ctx.delivery_ended()
