"""JMSContext: the JMS 2.0 simplified API's session (pyjms.api.factory makes them).

A JMSContext is one connection and one session (contexts made with create_context share the
connection). Everything a context does on the wire goes through its typed channel
(pyjms.bridge.channel); every rule is checked in Python before the call.

The client knows no provider and no feature above it. It asks the factory's provider plug-in
(pyjms.api.provider) for provider quirks, sends through the factory's send policies
(pyjms.api.policy), tells transaction synchronizations (pyjms.api.synchronization) of commits
and rollbacks, and hands the methods features provide to them (pyjms.api.extension).

Its transactions and acknowledgements (commit, rollback, recover, acknowledge, the
synchronizations) are pyjms.api.settlement's, which JMSContext extends.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pyjms.api import extension
from pyjms.api.checks import check_positive_int
from pyjms.api.constants import AUTO_ACKNOWLEDGE, SESSION_MODES, SESSION_TRANSACTED
from pyjms.api.consumer import JMSConsumer, QueueBrowser
from pyjms.api.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic, unprefixed
from pyjms.api.dispatch import ListenerDispatch
from pyjms.api.exception_listener import ConnectionWatch, ExceptionListener
from pyjms.api.message import BytesMessage, MapMessage, Message, TextMessage
from pyjms.api.producer import JMSProducer
from pyjms.api.provider import ProviderPlugin
from pyjms.api.sending import SendPath
from pyjms.api.settlement import Settlement
from pyjms.api.transactions import LocalTransaction
from pyjms.api.wire_keys import WireKeys
from pyjms.bridge import jvm
from pyjms.bridge.channel import Channel, Receiver
from pyjms.bridge.contract import DEAD_LETTER_QUEUE
from pyjms.bridge.java_types import JavaString
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
)

if TYPE_CHECKING:
    from pyjms.api.factory import ConnectionFactory

_log = logging.getLogger("pyjms")


class JMSContext(Settlement):
    """jakarta.jms.JMSContext: a connection and a session, used from one thread.

    Listeners run on one pyjms dispatch thread per context and async sends on one sender
    thread, as JMS requires (a session delivers serially). Use it as a context manager.
    Commit, rollback, recover and acknowledge: pyjms.api.settlement.Settlement.
    """

    # set by _open (a context is made there, not by __init__)
    _factory: ConnectionFactory
    _mode: int
    _closed: bool
    _lock: threading.RLock
    _listeners: ListenerDispatch
    _jms2: bool | None  # whether the client has JMS 2.0's async send and receive_body
    _auto_start: bool
    _transaction: LocalTransaction
    _client_id: str | None
    _wire_keys: WireKeys
    _jkey: Callable[[Any], JavaString]  # the channel's key of a destination (WireKeys.key)
    _channel: Channel
    _sends: SendPath
    _provider_name: str
    _watch: ConnectionWatch  # the connection's exception listener, shared with sibling contexts

    def __init__(self) -> None:  # use ConnectionFactory.create_context
        raise TypeError("use ConnectionFactory.create_context() or JMSContext.create_context()")

    @classmethod
    def open_for(
        cls, factory: ConnectionFactory, session_mode: int, parent: JMSContext | None = None
    ) -> JMSContext:
        """A new session for ``factory`` (a new connection, or ``parent``'s): what
        ConnectionFactory.create_context and JMSContext.create_context call."""
        if session_mode not in SESSION_MODES or isinstance(session_mode, bool):
            raise InvalidArgumentRuntimeException(
                f"session mode {session_mode!r} is not one of {', '.join(f'{v} ({k})' for k, v in SESSION_MODES.items())}"
            )
        self = object.__new__(cls)
        self._factory = factory
        self._mode = session_mode
        self._closed = False
        self._lock = threading.RLock()
        self._jms2 = None  # whether the client has JMS 2.0's async send and receive_body
        self._auto_start = True
        self._client_id = factory.client_id if parent is None else parent._client_id
        what = f"cannot connect to {factory.url or factory.factory_class!r}"
        if parent is None:
            channel = factory.provider.open_channel(factory, session_mode, what)
        else:
            channel = parent._channel.sibling(session_mode, what)
        self._channel = channel
        self._watch = ConnectionWatch(channel) if parent is None else parent._watch
        self._watch.add(self)
        # poison a receiver of this session meets goes to the provider's dead-letter queue
        channel.set_dead_letter_queue(f"queue://{factory.provider.dead_letter_queue or DEAD_LETTER_QUEUE}")
        provider = factory.provider
        self._wire_keys = WireKeys(
            channel,
            None if factory.create_destinations else lambda d: provider.destination_exists(self, d),
        )
        self._jkey = self._wire_keys.key
        self._sends = SendPath(channel, self._jkey, lambda: self._closed)
        #: INDIVIDUAL_ACKNOWLEDGE: what a received message's acknowledge() does (set_message_acknowledge)
        self._message_acknowledge = self._acknowledge_one
        self._listeners = ListenerDispatch(channel, lambda: self._closed, self._acker())
        self._transaction = LocalTransaction(self, channel, self._sends, factory.provider)
        self._provider_name = channel.provider_name()
        jvm.on_shutdown(self, self.close)
        return self

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> JMSContext:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateRuntimeException("the JMSContext is closed")

    def check_open(self) -> None:
        """Raises IllegalStateRuntimeException if the context is closed (for its consumers and
        features: a closed context does nothing)."""
        self._check_open()

    def close(self) -> None:
        """Closes the session (and the connection when no sibling context uses it).

        A transacted context's uncommitted work is rolled back, as JMS requires.
        """
        if self._closed:
            return
        self._sends.close()
        self._closed = True
        self._listeners.join()
        try:
            self._channel.close()
        except JMSRuntimeException as e:
            # the connection already failed: the broker has let go of the session and rolled
            # back what was uncommitted, so there is nothing left to close
            _log.debug("closing %r after its connection failed: %s", self, e)
        finally:
            jvm.forget(self)
            self._transaction.closed()

    def create_context(self, session_mode: int = AUTO_ACKNOWLEDGE) -> JMSContext:
        """Another session on this context's connection."""
        self._check_open()
        return JMSContext.open_for(self._factory, session_mode, parent=self)

    def get_session_mode(self) -> int:
        return self._mode

    def get_transacted(self) -> bool:
        return self._mode == SESSION_TRANSACTED

    def get_client_id(self) -> str | None:
        self._check_open()
        return self._channel.client_id()

    def set_client_id(self, client_id: str) -> None:
        self._check_open()
        self._channel.set_client_id(client_id)
        self._client_id = client_id

    def set_exception_listener(self, listener: ExceptionListener | None) -> None:
        """jakarta.jms.JMSContext.setExceptionListener: ``listener(error)`` is called once, on
        a pyjms thread, when this context's connection fails, with the failure as a pyjms
        error (a ConnectionBrokenRuntimeException, or a BrokerUnavailableRuntimeException
        when a reconnect was refused); None removes it. The connection's listener: contexts
        made by create_context share it (pyjms.api.exception_listener)."""
        self._check_open()
        self._watch.set_listener(listener)

    def get_exception_listener(self) -> ExceptionListener | None:
        """The connection's exception listener, or None."""
        self._check_open()
        return self._watch.listener

    def get_auto_start(self) -> bool:
        return self._auto_start

    def set_auto_start(self, auto_start: bool) -> None:
        self._auto_start = bool(auto_start)

    def start(self) -> None:
        self._check_open()
        self._channel.start()

    def stop(self) -> None:
        self._check_open()
        self._channel.stop()

    @property
    def provider_name(self) -> str:
        """The name of the provider (its JMS client), as the shim reports it."""
        return self._provider_name

    @property
    def factory(self) -> ConnectionFactory:
        """The factory this context was made by."""
        return self._factory

    @property
    def provider(self) -> ProviderPlugin:
        """The factory's provider plug-in (pyjms.api.provider)."""
        return self._factory.provider

    @property
    def channel(self) -> Channel:
        """The typed wire channel of this context's session (pyjms.bridge.channel), for
        features and provider plug-ins. What goes through it bypasses producers and their
        send policies; its failures are pyjms errors."""
        return self._channel

    @property
    def listeners(self) -> ListenerDispatch:
        """This session's message listeners and their dispatch thread (pyjms.api.dispatch)."""
        return self._listeners

    @property
    def acknowledger(self) -> Callable[[Message], None] | None:
        """What a received message's acknowledge() calls, with the message: the context's
        acknowledge in CLIENT_ACKNOWLEDGE mode, acknowledge_messages of that message in
        INDIVIDUAL_ACKNOWLEDGE mode, else None (acknowledge does nothing)."""
        return self._acker()

    def wire_key(self, destination: Destination) -> JavaString:
        """The destination's key on the channel, once the context and the destination passed
        (strict mode: the broker has it)."""
        self._check_open()
        return self._jkey(destination)

    def client_does_jms2(self) -> bool:
        """Whether the provider's client does JMS 2.0's async send and receive_body itself
        (Qpid JMS does; ActiveMQ Classic's does not, and pyjms emulates them). Asked once."""
        if self._jms2 is None:
            self._jms2 = self._channel.jms2_client()
        return self._jms2

    @property
    def sends(self) -> SendPath:
        """The one send path of this context's session (pyjms.api.sending): producers, bulk
        senders and features send through it."""
        return self._sends

    @property
    def closed(self) -> bool:
        return self._closed

    # ------------------------------------------------------------------ destinations

    def create_queue(self, name: str) -> Queue:
        """The queue NAME; ``queue://NAME`` names it too."""
        self._check_open()
        return Queue(unprefixed(name, "queue"))

    def create_topic(self, name: str) -> Topic:
        """The topic NAME; ``topic://NAME`` names it too."""
        self._check_open()
        return Topic(unprefixed(name, "topic"))

    def create_temporary_queue(self) -> TemporaryQueue:
        self._check_open()
        key = self._channel.create_temporary_queue()
        return TemporaryQueue(key.partition("://")[2], delete=self._delete_temporary)

    def create_temporary_topic(self) -> TemporaryTopic:
        self._check_open()
        key = self._channel.create_temporary_topic()
        return TemporaryTopic(key.partition("://")[2], delete=self._delete_temporary)

    def _delete_temporary(self, d: Destination) -> None:
        self._check_open()
        self._channel.delete_temporary(self._jkey(d), f"delete {d}")

    # ------------------------------------------------------------------ messages

    def create_message(self) -> Message:
        return Message()

    def create_text_message(self, text: str | None = None) -> TextMessage:
        return TextMessage(text)

    def create_bytes_message(self) -> BytesMessage:
        return BytesMessage()

    def create_map_message(self) -> MapMessage:
        return MapMessage()

    # ------------------------------------------------------------------ producers and consumers

    def create_producer(self) -> JMSProducer:
        self._check_open()
        return JMSProducer(self)

    def create_consumer(
        self, destination: Destination, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        self._check_open()
        key = self._jkey(destination)
        what = f"create_consumer({destination}, selector={message_selector!r})"

        def make() -> Receiver:
            return self._channel.consumer(key, message_selector, bool(no_local), what)

        if isinstance(destination, Topic):
            # the provider may need its own selector on the wire (pyjms brokers: D16)
            wire_selector = self._factory.provider.topic_consumer_selector(
                self, destination, message_selector
            )
            receiver = self._channel.consumer(key, wire_selector, bool(no_local), what)
            return JMSConsumer(self, receiver, destination, message_selector)
        if not isinstance(destination, Queue):
            return JMSConsumer(self, make(), destination, message_selector)
        # A queue consumer takes messages from the provider only from its first receive, so one
        # kept for receive_by_token never hoards the queue. It is made here (a bad selector or
        # a refused read fails at creation, as JMS says) and parked at once: what the provider
        # prefetched to it goes back, unmarked as redelivered.
        consumer = JMSConsumer(self, make(), destination, message_selector)
        consumer._reopen = make
        consumer._park()
        return consumer

    def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        """A durable subscription's consumer. The provider plug-in may ask the broker about the
        subscription first (pyjms brokers keep its address, D16)."""
        self._check_open()
        self._check_topic(topic, "create_durable_consumer")
        if self._client_id is None:
            # ActiveMQ would invent one, making the subscription impossible to find again
            raise IllegalStateRuntimeException(
                "a durable subscription needs a client id: ConnectionFactory(client_id=...) or set_client_id()"
            )
        key = self._jkey(topic)
        wire_selector = self._factory.provider.durable_consumer_selector(
            self, topic, name, self._client_id, message_selector
        )
        r = self._channel.durable_consumer(
            key, name, wire_selector, bool(no_local), f"create_durable_consumer({topic}, {name!r})"
        )
        return JMSConsumer(self, r, topic, message_selector)

    def create_shared_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        return self._shared(topic, name, message_selector, durable=False)

    def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        return self._shared(topic, name, message_selector, durable=True)

    def _shared(self, topic: Topic, name: str, selector: str | None, durable: bool) -> JMSConsumer:
        self._check_open()
        what = "create_shared_durable_consumer" if durable else "create_shared_consumer"
        self._check_topic(topic, what)
        key = self._jkey(topic)
        wire_selector = self._factory.provider.shared_consumer_selector(self, topic, name, durable, selector)
        r = self._channel.shared_consumer(key, name, wire_selector, durable, f"{what}({topic}, {name!r})")
        return JMSConsumer(self, r, topic, selector)

    @staticmethod
    def _check_topic(topic: Any, what: str) -> None:
        if not isinstance(topic, Topic):
            raise InvalidDestinationRuntimeException(f"{what} needs a Topic, got {topic!r}")

    def unsubscribe(self, name: str) -> None:
        self._check_open()
        self._channel.unsubscribe(name, f"unsubscribe({name!r})")

    def create_browser(
        self, queue: Queue, message_selector: str | None = None, *, read_ahead: int | None = None
    ) -> QueueBrowser:
        """A browser of queue. ``read_ahead`` (pyjms's): a reader that takes messages in
        batches of that many may have the provider send it that many ahead, where the provider
        would send fewer (ActiveMQ: its queueBrowserPrefetch, 500 by default), so that the
        broker keeps sending while a batch is taken; other providers ignore it."""
        self._check_open()
        if not isinstance(queue, Queue):
            raise InvalidDestinationRuntimeException(f"create_browser needs a Queue, got {queue!r}")
        if read_ahead is not None:
            check_positive_int(read_ahead, "read_ahead")
        key = self._jkey(queue)
        b = self._channel.browser(key, message_selector, f"create_browser({queue})", read_ahead or 0)
        return QueueBrowser(self, b, queue, message_selector)

    def create_marking_browser(
        self,
        queue: Queue,
        message_selector: str | None = None,
        cooperative: bool = False,
        claim_batch: int | None = None,
    ) -> Any:
        """IBM MQ's browse with mark on queue: a handle of its own, or (cooperative=True, IBM's
        MQOO_CO_OP) one of a cooperating set whose marks every handle on the broker sees.
        Provided by pyjms.browse (the same as pyjms.browse.create_marking_browser(ctx, ...)):
        returns a pyjms.browse.MarkingBrowser."""
        return extension.implementation("create_marking_browser")(
            self, queue, message_selector, cooperative, claim_batch
        )

    def send_routed(self, entries: Sequence[bytes]) -> int:
        """Sends a batch of routed entries in one JVM crossing, in this context's transaction;
        returns how many were sent.

        Each entry is pyjms.bridge.codec.pack_routed(destination key, delivery mode, priority,
        time-to-live, delay, record): its own destination and options, and a record
        (Message.encode). For bulk senders that checked their messages themselves (the Spark
        sink, the delay processor): the factory's send policies do not see these sends.
        """
        return self._sends.send_routed(entries)
