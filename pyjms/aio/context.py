"""ConnectionFactory and JMSContext for asyncio, on the synchronous pyjms.api ones.

Each context owns one worker thread (pyjms.aio.worker) that makes every call of its session,
in order; the event loop only queues calls and awaits their results.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

from pyjms.aio.browse import MarkingBrowser, QueueBrowser
from pyjms.aio.consumer import JMSConsumer
from pyjms.aio.handover import MODES as ACKNOWLEDGED_AT_HAND_OVER
from pyjms.aio.handover import HandOver, session_mode_for
from pyjms.aio.outbox import Outbox
from pyjms.aio.producer import JMSProducer
from pyjms.aio.worker import IN_LISTENER, Worker
from pyjms.api.constants import AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE
from pyjms.api.consumer import JMSConsumer as SyncConsumer
from pyjms.api.context import JMSContext as SyncContext
from pyjms.api.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from pyjms.api.factory import ConnectionFactory as SyncFactory
from pyjms.api.message import BytesMessage, MapMessage, Message, TextMessage
from pyjms.browse import create_marking_browser
from pyjms.errors import IllegalStateRuntimeException, NotSupportedRuntimeException

_log = logging.getLogger("pyjms")
T = TypeVar("T")


class ConnectionFactory:
    """pyjms.ConnectionFactory for asyncio: the same arguments, or ``ConnectionFactory.of(f)``
    for a synchronous factory made already. Making one talks to no broker."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        #: the synchronous factory the contexts are made by
        self.sync = SyncFactory(*args, **kwargs)

    @classmethod
    def of(cls, factory: SyncFactory) -> ConnectionFactory:
        """An asyncio factory for a synchronous one (its send policies and provider included)."""
        if not isinstance(factory, SyncFactory):
            raise TypeError(f"ConnectionFactory.of takes a pyjms.ConnectionFactory, got {factory!r}")
        self = object.__new__(cls)
        self.sync = factory
        return self

    def create_context(self, session_mode: int = AUTO_ACKNOWLEDGE) -> ContextOpening:
        """A new connection with one session: ``async with factory.create_context() as ctx``,
        or ``ctx = await factory.create_context()`` (then ``await ctx.close()``)."""
        return ContextOpening(self.sync.create_context, session_mode)

    def __repr__(self) -> str:
        return f"<aio {self.sync!r}>"


def _open_sync(open_sync: Callable[[int], SyncContext], session_mode: int) -> SyncContext:
    """The synchronous context a pyjms.aio context in ``session_mode`` runs on: in AUTO/DUPS_OK
    a CLIENT_ACKNOWLEDGE one (pyjms.aio.handover); in CLIENT_ACKNOWLEDGE, where the provider's
    client has an individual acknowledge mode, an INDIVIDUAL_ACKNOWLEDGE one, so that the
    context's acknowledge() acknowledges exactly the messages its callers got and receives may
    take what the provider holds in batches (JMSContext.acknowledge)."""
    if session_mode == CLIENT_ACKNOWLEDGE:
        try:
            return open_sync(INDIVIDUAL_ACKNOWLEDGE)
        except NotSupportedRuntimeException:
            pass  # no such mode: a receive takes its own message only
    return open_sync(session_mode_for(session_mode))


class ContextOpening:
    """The opening of a context: await it, or use it with ``async with``."""

    def __init__(self, open_sync: Callable[[int], SyncContext], session_mode: int) -> None:
        self._make = lambda: _open_sync(open_sync, session_mode)
        self._mode = session_mode
        self._ctx: JMSContext | None = None

    async def _open(self) -> JMSContext:
        worker = Worker()

        def opened_for_nobody(sync: SyncContext) -> None:  # the opener was cancelled meanwhile
            worker.submit_detached(sync.close, "closing a context opened for a cancelled caller")
            worker.stop()

        sync = await worker.call(self._make, opened_for_nobody)
        return JMSContext(sync, worker, self._mode)

    def __await__(self) -> Generator[Any, None, JMSContext]:
        return self._open().__await__()

    async def __aenter__(self) -> JMSContext:
        self._ctx = await self._open()
        return self._ctx

    async def __aexit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            await self._ctx.close()


class JMSContext:
    """An asyncio jakarta.jms.JMSContext: a connection and a session, whose calls run in order
    on the context's own worker thread. Make one with ConnectionFactory.create_context."""

    def __init__(self, sync: SyncContext, worker: Worker, session_mode: int) -> None:
        #: the synchronous context this one drives (calling it from the loop blocks the loop;
        #: in AUTO/DUPS_OK it is a CLIENT_ACKNOWLEDGE one: pyjms.aio.handover; in
        #: CLIENT_ACKNOWLEDGE an INDIVIDUAL_ACKNOWLEDGE one where the provider has that mode)
        self.sync = sync
        #: the thread that makes this context's calls (pyjms.aio.worker)
        self.worker = worker
        #: the context's queued sends, coalesced (pyjms.aio.outbox)
        self.outbox = Outbox(sync, worker)
        self._mode = session_mode
        #: how many times the session handed back what it had delivered (rollback, recover):
        #: messages a cancelled receive kept from before then are the provider's again
        self.epoch = 0
        self.closing = False
        self._consumers: list[JMSConsumer] = []
        self._deliveries = 0  # listener deliveries started on the loop and not yet acknowledged
        self._deliveries_done = asyncio.Event()
        self._deliveries_done.set()
        #: CLIENT_ACKNOWLEDGE on an INDIVIDUAL_ACKNOWLEDGE session: acknowledge() acknowledges
        #: the messages handed to callers (with the recovery epoch of their take) since the last
        #: one, and what receives took ahead stays unacknowledged until a receive hands it over
        self.individual = sync.get_session_mode() == INDIVIDUAL_ACKNOWLEDGE
        self._handed: list[tuple[int, Message]] = []
        #: consumers closed while they kept messages, closed by the next recovery
        self._closing_at_recovery: list[SyncConsumer] = []
        if self.individual:  # Message.acknowledge() keeps JMS's meaning too
            sync.set_message_acknowledge(self._acknowledge_on_calling_thread)
        #: AUTO/DUPS_OK: the acknowledgements owed for messages received (else None)
        self.hand_over = (
            HandOver(sync, worker, self._keeps, self._recovered)
            if session_mode in ACKNOWLEDGED_AT_HAND_OVER
            else None
        )

    def __repr__(self) -> str:
        return f"<aio JMSContext {self.worker.name}>"

    def check_open(self) -> None:
        if self.closing:
            raise IllegalStateRuntimeException("the JMSContext is closed")

    def _call(self, fn: Callable[[], T]) -> Awaitable[T]:
        self.check_open()
        return self.worker.submit(fn)

    # ------------------------------------------------------------------ lifecycle

    def delivery_started(self) -> None:
        """On the loop: a listener starts on a message."""
        self._deliveries += 1
        self._deliveries_done.clear()

    def delivery_ended(self) -> None:
        """On the loop: a listener's delivery is over (acknowledged or to be redelivered)."""
        self._deliveries -= 1
        if self._deliveries <= 0:
            self._deliveries = 0
            self._deliveries_done.set()

    async def listeners_finished(self) -> None:
        """Waits, as JMS's close does, until no listener of the context is running (unless
        called from a listener itself, which JMS allows and which must not wait for itself)."""
        if not IN_LISTENER.get():
            await self._deliveries_done.wait()

    async def close(self) -> None:
        """Closes the session (and the connection when no sibling context uses it), after the
        calls queued before and after a listener running on a message has finished; receives
        waiting on its consumers return None. A transacted context's uncommitted work is rolled
        back."""
        if self.closing:
            return
        await self.listeners_finished()
        if self.closing:
            return
        self.closing = True
        for consumer in list(self._consumers):
            await consumer.close()  # only marks it: the session's close closes it
        try:
            await self.worker.submit(self.sync.close)
        finally:
            self.worker.stop()
            if self.outbox.failure is not None:
                _log.warning(
                    "%r closed before a send could report that a send completed at its call failed: %r",
                    self,
                    self.outbox.failure,
                )

    async def __aenter__(self) -> JMSContext:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def create_context(self, session_mode: int = AUTO_ACKNOWLEDGE) -> ContextOpening:
        """Another session on this context's connection, with a worker of its own."""
        self.check_open()
        return ContextOpening(self.sync.create_context, session_mode)

    def get_session_mode(self) -> int:
        return self._mode

    def get_transacted(self) -> bool:
        return self.sync.get_transacted()

    @property
    def provider_name(self) -> str:
        return self.sync.provider_name

    async def start(self) -> None:
        await self._call(self.sync.start)

    async def stop(self) -> None:
        await self._call(self.sync.stop)

    # ------------------------------------------------------------------ destinations and messages

    def create_queue(self, name: str) -> Queue:
        self.check_open()
        return self.sync.create_queue(name)

    def create_topic(self, name: str) -> Topic:
        self.check_open()
        return self.sync.create_topic(name)

    async def create_temporary_queue(self) -> TemporaryQueue:
        return await self._call(self.sync.create_temporary_queue)

    async def create_temporary_topic(self) -> TemporaryTopic:
        return await self._call(self.sync.create_temporary_topic)

    def create_message(self) -> Message:
        return self.sync.create_message()

    def create_text_message(self, text: str | None = None) -> TextMessage:
        return self.sync.create_text_message(text)

    def create_bytes_message(self) -> BytesMessage:
        return self.sync.create_bytes_message()

    def create_map_message(self) -> MapMessage:
        return self.sync.create_map_message()

    # ------------------------------------------------------------------ producers and consumers

    def create_producer(self) -> JMSProducer:
        """A producer (no broker round trip: its sends go through the worker)."""
        self.check_open()
        return JMSProducer(self)

    def consumer_closed(self, consumer: JMSConsumer) -> None:
        """A consumer of this context closed: its kept messages no longer count."""
        if consumer in self._consumers:
            self._consumers.remove(consumer)

    async def _consumer(self, make: Callable[[], Any]) -> JMSConsumer:
        consumer = JMSConsumer(self, await self._call(make))
        self._consumers.append(consumer)
        return consumer

    async def create_consumer(
        self, destination: Destination, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        sync = self.sync
        return await self._consumer(lambda: sync.create_consumer(destination, message_selector, no_local))

    async def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        sync = self.sync
        return await self._consumer(
            lambda: sync.create_durable_consumer(topic, name, message_selector, no_local)
        )

    async def create_shared_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        sync = self.sync
        return await self._consumer(lambda: sync.create_shared_consumer(topic, name, message_selector))

    async def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        sync = self.sync
        return await self._consumer(
            lambda: sync.create_shared_durable_consumer(topic, name, message_selector)
        )

    async def unsubscribe(self, name: str) -> None:
        sync = self.sync
        await self._call(lambda: sync.unsubscribe(name))

    async def create_browser(
        self, queue: Queue, message_selector: str | None = None, *, read_ahead: int | None = None
    ) -> QueueBrowser:
        sync = self.sync
        return QueueBrowser(
            self,
            await self._call(lambda: sync.create_browser(queue, message_selector, read_ahead=read_ahead)),
        )

    async def create_marking_browser(
        self,
        queue: Queue,
        message_selector: str | None = None,
        cooperative: bool = False,
        claim_batch: int | None = None,
    ) -> MarkingBrowser:
        """IBM MQ's browse with mark (pyjms.browse), for asyncio: pyjms.aio.MarkingBrowser."""
        sync = self.sync
        browser = await self._call(
            lambda: create_marking_browser(sync, queue, message_selector, cooperative, claim_batch)
        )
        return MarkingBrowser(self, browser)

    # ------------------------------------------------------------------ transactions and acks

    def _keeps(self, besides: object | None) -> bool:
        """Whether a consumer keeps a message a cancelled receive took (since the last
        recovery) anywhere but in ``besides`` (on the worker: copies of the stores are taken
        under the GIL, as the loop may append meanwhile)."""
        return any(consumer.keeps_any(besides) for consumer in tuple(self._consumers))

    def sole_consumer(self, consumer: JMSConsumer) -> bool:
        """Whether ``consumer`` is the only open consumer of this context."""
        consumers = self._consumers
        return len(consumers) == 1 and consumers[0] is consumer

    def _recovered(self) -> None:
        """On the worker, after a rollback or recover: messages kept from before are redelivered."""
        self.epoch += 1

    async def commit(self) -> None:
        """Commits; a send completed at its call whose crossing failed fails the commit instead
        (pyjms.aio.outbox): roll back and send again."""
        sync = self.sync
        outbox = self.outbox

        def commit() -> None:
            outbox.raise_failure()
            sync.commit()

        await self._call(commit)

    async def rollback(self) -> None:
        sync = self.sync

        def rollback() -> None:
            sync.rollback()
            self._recovered()

        await self._call(rollback)

    def close_at_recovery(self, consumer: SyncConsumer) -> None:
        """An individual context's consumer closed while it kept messages: its synchronous
        consumer is closed after the session's next recover() (or with the session)."""
        self._closing_at_recovery.append(consumer)

    async def recover(self) -> None:
        sync = self.sync

        def recover() -> None:
            sync.recover()
            self._recovered()
            closing, self._closing_at_recovery = self._closing_at_recovery, []
            for consumer in closing:
                consumer.close()

        await self._call(recover)

    def handed(self, epoch: int, messages: list[Message]) -> None:
        """On the loop, in an individual context: ``messages`` (taken in recovery epoch
        ``epoch``) reached their caller, so the next acknowledge() covers them."""
        self._handed.extend((epoch, m) for m in messages)

    async def acknowledge(self) -> None:
        """CLIENT_ACKNOWLEDGE: acknowledges every message the context has handed to a caller
        (use this, not Message.acknowledge(), which makes the call on the calling thread).
        Ignored in the other modes, as in the synchronous API.

        Where the context runs on an INDIVIDUAL_ACKNOWLEDGE session (self.individual), these
        are exactly the messages receives, receive_body, receive_batch, async for and the
        message listener handed over since the last acknowledge() (those taken before a
        recover() since are the provider's again, and left out); what receives took ahead and
        hold for the next receives stays unacknowledged."""
        self.check_open()
        if self.hand_over is not None:
            return
        if not self.individual:
            await self._call(self.sync.acknowledge)
            return
        handed, self._handed = self._handed, []
        try:
            # on the worker: a recovery queued before this acknowledge() has run by then
            await self._call(lambda: self._acknowledge(handed))
        except BaseException:
            # not known to be acknowledged: the next acknowledge() covers them (one acknowledged
            # already is passed over then)
            self._handed[:0] = handed
            raise

    def _acknowledge(self, handed: list[tuple[int, Message]]) -> None:
        """Acknowledges the messages of ``handed`` taken since the last recovery (one taken
        before it is the provider's again, and its redelivered copy may be held unseen)."""
        epoch = self.epoch
        self.sync.acknowledge_messages([m for taken_in, m in handed if taken_in == epoch])

    def _acknowledge_on_calling_thread(self, _message: Message) -> None:
        """Message.acknowledge() in an individual context: what acknowledge() does, as the
        synchronous call it is, on the thread that calls it."""
        handed, self._handed = self._handed, []
        try:
            self._acknowledge(handed)
        except BaseException:
            self._handed[:0] = handed
            raise
