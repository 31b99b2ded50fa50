"""JMSProducer for asyncio: the synchronous one (pyjms.api.producer), sending on its context's
worker.

Setters and getters are plain methods: they check their value at once (no broker round trip)
and return the producer, as in JMS. ``send``, ``send_batch``, ``send_reply`` and ``send_async``
queue the send when called, with the options as they are then, and return a coroutine (a
future for ``send_async``; for a send completed at its call, a done future that is a coroutine
too: Completed) to await: the sends of a context are made in call order. A setter called while
a send is queued changes a copy (the settings so far, replayed on a new synchronous producer),
never what a queued send uses.

``send_async`` is JMS 2.0's send with a CompletionListener as an asyncio future: it resolves to
the sent message (its JMSMessageID and the other headers the send set) when the provider
confirms the send, or fails with the send's error. Completions arrive on the context's
completion thread (pyjms.api.completions) and reach the loop through call_soon_threadsafe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from pyjms.aio.worker import inbox
from pyjms.api.constants import PERSISTENT
from pyjms.api.destination import Destination
from pyjms.api.message import Message
from pyjms.api.producer import JMSProducer as SyncProducer
from pyjms.errors import JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.aio.context import JMSContext

T = TypeVar("T")


class Completed(asyncio.Future[T], Coroutine[Any, Any, T]):
    """A send completed at its call (pyjms.aio.outbox): a future with its result set, that is a
    coroutine too, so ``asyncio.create_task`` takes it as it takes any send's coroutine.
    ``asyncio.gather`` and ``ensure_future`` take it as the future it is, without the Task they
    make for a coroutine (half of what a gathered send cost the loop); awaited, it returns at
    once."""

    __slots__ = ()

    def __init__(self, loop: asyncio.AbstractEventLoop, result: T) -> None:
        super().__init__(loop=loop)
        self.set_result(result)

    # a coroutine that returns at its first step (a Task's, or a caller's send(None))
    def send(self, value: Any) -> Any:
        raise StopIteration(self.result())

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        raise typ if val is None else val

    def close(self) -> None:
        pass


async def _outcome(queued: asyncio.Future[T]) -> T:
    """A coroutine for a call queued already (so asyncio.create_task takes it too); cancelling
    it cancels the call if the worker has not started it."""
    return await queued


async def _awaited(result: T, queued: asyncio.Future[Any] | None, pause: bool) -> T:
    """A send queued already: ``result`` once it is made (``queued`` None: complete at the
    call; ``pause``: yield to the loop once all the same)."""
    if queued is not None:
        await queued
    elif pause:
        await asyncio.sleep(0)
    return result


def _sent(result: T, queued: asyncio.Future[Any] | None, pause: bool = False) -> Coroutine[Any, Any, T]:
    """What a queued send returns: Completed if it is complete at its call and need not yield,
    else a coroutine that waits for it."""
    if queued is None and not pause:
        return Completed(asyncio.get_running_loop(), result)
    return _awaited(result, queued, pause)


class JMSProducer:
    """An asyncio jakarta.jms.JMSProducer: ``await producer.send(destination, body)``."""

    def __init__(self, ctx: JMSContext) -> None:
        self._ctx = ctx
        self._current: SyncProducer = ctx.sync.create_producer()
        self._shared = False  # a queued send holds _current: the next setter works on a copy
        # the settings so far, in order, to make a copy: (setter, key) -> arguments
        self._settings: dict[tuple[str, str], tuple[Any, ...]] = {}

    def __repr__(self) -> str:
        return f"<aio JMSProducer of {self._ctx!r}>"

    @property
    def sync(self) -> SyncProducer:
        """The synchronous producer with this producer's current settings."""
        return self._current

    def _set(self, setter: str, key: str, *args: Any) -> JMSProducer:
        if self._shared:
            copy = self._ctx.sync.create_producer()
            for (name, _), values in self._settings.items():
                getattr(copy, name)(*values)
            self._current, self._shared = copy, False
        getattr(self._current, setter)(*args)  # checks the value; raises before it is recorded
        if setter == "clear_properties":
            self._settings = {k: v for k, v in self._settings.items() if not k[0].endswith("_property")}
        else:
            self._settings.pop((setter, key), None)
            self._settings[(setter, key)] = args
        return self

    # ------------------------------------------------------------------ options (JMS names)

    def set_delivery_mode(self, delivery_mode: int) -> JMSProducer:
        return self._set("set_delivery_mode", "", delivery_mode)

    def set_priority(self, priority: int) -> JMSProducer:
        return self._set("set_priority", "", priority)

    def set_time_to_live(self, time_to_live: int | timedelta) -> JMSProducer:
        return self._set("set_time_to_live", "", time_to_live)

    def set_delivery_delay(self, delivery_delay: int | timedelta) -> JMSProducer:
        return self._set("set_delivery_delay", "", delivery_delay)

    def set_disable_message_id(self, value: bool) -> JMSProducer:
        return self._set("set_disable_message_id", "", value)

    def set_disable_message_timestamp(self, value: bool) -> JMSProducer:
        return self._set("set_disable_message_timestamp", "", value)

    def set_jms_correlation_id(self, correlation_id: str | None) -> JMSProducer:
        return self._set("set_jms_correlation_id", "", correlation_id)

    def set_jms_type(self, jms_type: str | None) -> JMSProducer:
        return self._set("set_jms_type", "", jms_type)

    def set_jms_reply_to(self, reply_to: Destination | None) -> JMSProducer:
        return self._set("set_jms_reply_to", "", reply_to)

    def set_property(self, name: str, value: bool | int | float | str) -> JMSProducer:
        return self._set("set_property", name, name, value)

    def set_boolean_property(self, name: str, value: bool) -> JMSProducer:
        return self._set("set_boolean_property", name, name, value)

    def set_int_property(self, name: str, value: int) -> JMSProducer:
        return self._set("set_int_property", name, name, value)

    def set_long_property(self, name: str, value: int) -> JMSProducer:
        return self._set("set_long_property", name, name, value)

    def set_double_property(self, name: str, value: float) -> JMSProducer:
        return self._set("set_double_property", name, name, value)

    def set_string_property(self, name: str, value: str) -> JMSProducer:
        return self._set("set_string_property", name, name, value)

    def clear_properties(self) -> JMSProducer:
        return self._set("clear_properties", "")

    def get_delivery_mode(self) -> int:
        return self._current.get_delivery_mode()

    def get_priority(self) -> int:
        return self._current.get_priority()

    def get_time_to_live(self) -> int:
        return self._current.get_time_to_live()

    def get_delivery_delay(self) -> int:
        return self._current.get_delivery_delay()

    def get_disable_message_id(self) -> bool:
        return self._current.get_disable_message_id()

    def get_disable_message_timestamp(self) -> bool:
        return self._current.get_disable_message_timestamp()

    def get_jms_correlation_id(self) -> str | None:
        return self._current.get_jms_correlation_id()

    def get_jms_type(self) -> str | None:
        return self._current.get_jms_type()

    def get_jms_reply_to(self) -> Destination | None:
        return self._current.get_jms_reply_to()

    def property_exists(self, name: str) -> bool:
        return self._current.property_exists(name)

    def get_property_names(self) -> set[str]:
        return self._current.get_property_names()

    def get_object_property(self, name: str) -> Any:
        return self._current.get_object_property(name)

    # ------------------------------------------------------------------ sending

    def _held(self) -> SyncProducer:
        """The synchronous producer a send about to be queued uses, kept as it is now."""
        self._ctx.check_open()
        self._shared = True
        return self._current

    def _queue(self, destination: Any, call: Callable[[SyncProducer], Any]) -> asyncio.Future[Any]:
        """Queues a send made by ``call`` on the synchronous producer as it is now."""
        producer = self._held()
        future, _ = self._ctx.outbox.queue(destination, None, False, lambda: call(producer))
        assert future is not None
        return future

    def send(self, destination: Destination, body: Any) -> Coroutine[Any, Any, JMSProducer]:
        """Sends a str, bytes, dict, None or a Message: queued at the call, with the options as
        they are then; awaited, returns this producer when the send has been made (with
        the provider's confirmation where the client waits for one, as the synchronous send
        does). Cancelled before the worker starts it, nothing is sent. A NON_PERSISTENT str or
        bytes send to a destination the context sent to before completes at the call
        (pyjms.aio.outbox): the provider does not wait for the broker there either."""
        ctx = self._ctx
        ctx.check_open()
        ctx.outbox.raise_failure()
        current = self._current
        routed = current.routed_entry(destination, body)
        if routed is None:
            return _sent(self, self._queue(destination, lambda p: p.send(destination, body)))
        persistent = current.get_delivery_mode() == PERSISTENT
        return _sent(self, *ctx.outbox.queue(destination, routed, persistent))

    def send_async(self, destination: Destination, body: Any) -> asyncio.Future[Message]:
        """Sends with a CompletionListener, as a future: it resolves to the sent message when the
        provider confirms the send, or fails with the send's error. The sends of a context are
        made, and complete, in call order. Cancelling the future does not unsend the message."""
        self._ctx.outbox.raise_failure()
        loop = asyncio.get_running_loop()
        box = inbox(loop)
        completed: asyncio.Future[Message] = loop.create_future()

        def resolve(message: Message, error: JMSRuntimeException | None) -> None:
            if completed.done():
                return
            if error is None:
                completed.set_result(message)
            else:
                completed.set_exception(error)

        def listener(message: Message, error: JMSRuntimeException | None) -> None:  # completion thread
            box.post(resolve, message, error)

        def send(producer: SyncProducer) -> None:
            producer.set_async(listener)
            try:
                producer.send(destination, body)
            finally:
                producer.set_async(None)

        def refused(call: asyncio.Future[None]) -> None:
            if not call.cancelled() and call.exception() is not None and not completed.done():
                completed.set_exception(call.exception())  # type: ignore[arg-type]

        self._queue(destination, send).add_done_callback(refused)
        return completed

    def send_batch(self, destination: Destination, bodies: Iterable[str | bytes]) -> Coroutine[Any, Any, int]:
        """Sends many str/bytes bodies with one JVM crossing (queued at the call, as send is);
        returns how many were sent."""
        ctx = self._ctx
        ctx.check_open()
        ctx.outbox.raise_failure()
        batch = list(bodies)
        current = self._current
        if batch and current.get_delivery_mode() != PERSISTENT:
            # NON_PERSISTENT: a batch packed on the worker, which may complete at the call
            # (pyjms.aio.outbox)
            routed = current.routed_bodies(destination, batch)
            if routed is not None:  # packed on the worker (RoutedBodies)
                return _sent(len(batch), *ctx.outbox.queue(destination, (routed, routed.flags), False))
        return _outcome(self._queue(destination, lambda p: p.send_batch(destination, batch)))

    def send_reply(
        self, request: Message, body: Any, expiry: str | int | timedelta = "copy"
    ) -> Coroutine[Any, Any, JMSProducer]:
        """Replies to a request: to its JMSReplyTo, correlated by its message id (E13); queued
        at the call, as send is."""
        self._ctx.outbox.raise_failure()
        return _sent(self, self._queue(None, lambda p: p.send_reply(request, body, expiry)))
