"""ConnectionFactory and JMSContext: the JMS 2.0 simplified API.

A JMSContext is one connection and one session (contexts made with create_context share the
connection). Everything a context does on the wire goes through its typed channel
(pyjms.bridge.channel); every rule is checked in Python before the call.

The client knows no provider and no feature above it. It asks the factory's provider plug-in
(pyjms.api.provider) for provider quirks, sends through the factory's send policies
(pyjms.api.policy), tells transaction synchronizations (pyjms.api.synchronization) of commits
and rollbacks, and hands the methods features provide to them (pyjms.api.extension).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pyjms.api import extension
from pyjms.api.checks import check_positive_int
from pyjms.api.constants import (
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DELIVERY_DELAY_CHOICES,
    SESSION_MODES,
    SESSION_TRANSACTED,
)
from pyjms.api.consumer import JMSConsumer, QueueBrowser
from pyjms.api.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from pyjms.api.dispatch import ListenerDispatch
from pyjms.api.message import BytesMessage, MapMessage, Message, TextMessage
from pyjms.api.policy import SendPolicy, installed_policies
from pyjms.api.producer import JMSProducer
from pyjms.api.provider import ProviderPlugin, default_provider, provider_for
from pyjms.api.sending import SendPath
from pyjms.api.synchronization import TransactionSynchronization
from pyjms.api.transactions import LocalTransaction
from pyjms.bridge import jvm, urls
from pyjms.bridge.channel import Channel, Receiver
from pyjms.bridge.classpath import DEFAULT_PROVIDER
from pyjms.bridge.contract import DEAD_LETTER_QUEUE, STAGING_QUEUE
from pyjms.bridge.errors import translate
from pyjms.bridge.java_types import JavaConnectionFactory, JavaProvider, JavaString
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
)
from pyjms.reasons import MQRC

_log = logging.getLogger("pyjms")
_T = TypeVar("_T")
#: the queues pyjms's own services (admin, marks, control) answer on: never checked in strict mode
_SERVICE_PREFIX = "PYJMS."


def _unprefixed(name: str, kind: str) -> str:
    """NAME from ``kind://NAME`` (as users write destinations); the other kind's prefix is an error."""
    if isinstance(name, str) and "://" in name:
        scheme, _, rest = name.partition("://")
        if scheme == kind:
            return rest
        if scheme in ("queue", "topic"):
            raise InvalidDestinationRuntimeException(f"{name!r} names a {scheme}, not a {kind}")
    return name


class ConnectionFactory:
    """Connects to a provider by URL (ActiveMQ: vm://, tcp://, failover:(...)) or factory class.

    With no URL it uses ``PYJMS_URL``, or else the default provider's broker (an embedded
    ActiveMQ broker in this process, started when the URL is first needed). Any other Jakarta
    Messaging provider works through ``factory_class`` (its jars on ``classpath`` or
    ``PYJMS_CLASSPATH``) with bean ``properties``. ``delivery_delay`` picks how delayed
    messages are held (pyjms.delay); ``auto`` probes the provider once, at the factory's first
    delayed send. Making a factory talks to no broker.

    ``provider`` names the client for the URL ("activemq", "artemis", "amqp"): Apache Artemis
    and ActiveMQ both write tcp://host:port, so an Artemis URL needs provider="artemis" or the
    form artemis+tcp://host:port (pyjms.bridge.urls; plain tcp:// is ActiveMQ's).
    """

    def __init__(
        self,
        url: str | None = None,
        user: str | None = None,
        password: str | None = None,
        *,
        client_id: str | None = None,
        factory_class: str | None = None,
        properties: Mapping[str, Any] | None = None,
        classpath: Sequence[str] = (),
        delivery_delay: str = "auto",
        staging_queue: str = STAGING_QUEUE,
        provider: str | None = None,
        create_destinations: bool = True,
    ) -> None:
        if url is not None and not isinstance(url, str):
            raise InvalidArgumentRuntimeException(f"url must be a str, got {url!r}")
        if provider is not None and factory_class is not None:
            raise InvalidArgumentRuntimeException(
                f"provider={provider!r} and factory_class={factory_class!r}: give one, not both"
            )
        if factory_class is None and (url is not None or provider is not None):
            urls.choose(url or "", provider)  # a URL no provider understands fails here, not at first use
        #: the provider named for the URL ("activemq", "artemis", "amqp"), or None: the URL says
        self.provider_name_hint = provider
        self._url = url
        self.user = user
        self.password = password
        self.client_id = client_id
        self.factory_class = factory_class
        self.properties = {k: str(v) for k, v in (properties or {}).items()}
        self.classpath = tuple(classpath)
        if delivery_delay not in DELIVERY_DELAY_CHOICES:
            raise InvalidArgumentRuntimeException(
                f"delivery_delay {delivery_delay!r} is not one of {', '.join(DELIVERY_DELAY_CHOICES)}",
                values={"delivery_delay": delivery_delay},
            )
        #: "auto" (probe the provider once, at the first delayed send), "native", "scheduler",
        #: "staging" or "none" (pyjms.delay)
        self.delivery_delay = delivery_delay
        #: where the staging mechanism puts delayed messages for the delay processor
        self.staging_queue = staging_queue
        #: False: a queue or topic the broker does not have is refused (MQRC_UNKNOWN_OBJECT_NAME
        #: 2085, as IBM MQ does) instead of being created by its first use, on brokers that can
        #: tell (ProviderPlugin.destination_exists); True (JMS's usual): made on demand
        self.create_destinations = bool(create_destinations)
        self._plugin: ProviderPlugin | None = None
        self._policies: list[SendPolicy] | None = None
        self._provider: JavaProvider | None = None
        self._jfactory: JavaConnectionFactory | None = None
        self._lock = threading.Lock()

    def derive(
        self, *, url: str | None = None, properties: Mapping[str, Any] | None = None
    ) -> ConnectionFactory:
        """A new factory like this one (credentials, client id, provider, delay settings) for
        the same broker, with another URL (e.g. client options added) or other properties."""
        return ConnectionFactory(
            self.url if url is None else url,
            self.user,
            self.password,
            client_id=self.client_id,
            factory_class=self.factory_class,
            properties=self.properties if properties is None else properties,
            classpath=self.classpath,
            delivery_delay=self.delivery_delay,
            staging_queue=self.staging_queue,
            provider=self.provider_name_hint,
            create_destinations=self.create_destinations,
        )

    @property
    def url(self) -> str:
        """The provider URL: as given, else PYJMS_URL, else the default provider's broker's
        (which may start it)."""
        if self._url is None and self.factory_class is None:
            # a named provider's plug-in gives the broker (only ActiveMQ's starts one)
            plugin = self.provider if self.provider_name_hint is not None else default_provider()
            self._url = os.environ.get("PYJMS_URL") or plugin.default_url()
        return self._url or ""

    @property
    def provider(self) -> ProviderPlugin:
        """The plug-in for this factory's provider, chosen by URL or factory class (no I/O)."""
        if self._plugin is None:
            url = self._url if self._url is not None else os.environ.get("PYJMS_URL") or None
            name = self.provider_name_hint
            if self.factory_class is None and url is not None:
                name = urls.choose(url, name)[0]  # as the client is chosen (_java)
            self._plugin = provider_for(url, self.factory_class, name)
        return self._plugin

    def send_policies(self) -> tuple[SendPolicy, ...]:
        """This factory's send policy chain (pyjms.api.policy), made at first need."""
        with self._lock:
            if self._policies is None:
                self._policies = installed_policies(self)
            return tuple(self._policies)

    def add_send_policy(self, policy: SendPolicy) -> ConnectionFactory:
        """Adds a policy at the end of the chain, for producers made from now on."""
        if not isinstance(policy, SendPolicy):
            raise InvalidArgumentRuntimeException(
                f"a send policy must be a pyjms.api.policy.SendPolicy, got {policy!r}"
            )
        self.send_policies()
        with self._lock:
            assert self._policies is not None
            self._policies.append(policy)
        return self

    def _java(self) -> tuple[JavaProvider, JavaConnectionFactory]:
        with self._lock:
            if self._jfactory is None:
                if self.factory_class:
                    name, client_url = None, self.url
                else:
                    name, client_url = urls.choose(self.url, self.provider_name_hint)
                s = jvm.start(self.classpath, providers=(name or DEFAULT_PROVIDER,))
                props = s.HashMap()
                for k, v in self.properties.items():
                    props.put(k, v)
                try:
                    if name is None:
                        provider = s.Providers.forFactoryClass(self.factory_class)
                    else:
                        provider = s.Providers.forName(name)
                    self._jfactory = provider.factory(client_url, props)
                    self._provider = provider
                except s.JException as e:
                    raise translate(
                        e, f"cannot make a connection factory for {self.url or self.factory_class!r}"
                    ) from None
            assert self._provider is not None and self._jfactory is not None
            return self._provider, self._jfactory

    def create_context(self, session_mode: int = AUTO_ACKNOWLEDGE) -> JMSContext:
        """A new connection with one session (JMSContext)."""
        return JMSContext._open(self, session_mode)

    def open_wire_channel(self, session_mode: int, what: str) -> Channel:
        """A new connection with one session, through the provider's own JMS client in the
        JVM: what ProviderPlugin.open_channel does unless a plug-in says otherwise."""
        provider, jfactory = self._java()
        return Channel.open(provider, jfactory, self.user, self.password, self.client_id, session_mode, what)

    def __repr__(self) -> str:
        return f"ConnectionFactory({self._url or self.factory_class!r})"


class JMSContext:
    """jakarta.jms.JMSContext: a connection and a session, used from one thread.

    Listeners run on one pyjms dispatch thread per context and async sends on one sender
    thread, as JMS requires (a session delivers serially). Use it as a context manager.
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
    _existing: set[str]  # strict mode: destinations the broker said it has
    _channel: Channel
    _sends: SendPath
    _provider_name: str

    def __init__(self) -> None:  # use ConnectionFactory.create_context
        raise TypeError("use ConnectionFactory.create_context() or JMSContext.create_context()")

    @classmethod
    def _open(
        cls, factory: ConnectionFactory, session_mode: int, parent: JMSContext | None = None
    ) -> JMSContext:
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
        self._existing = set()  # strict mode: destinations the broker said it has
        what = f"cannot connect to {factory.url or factory.factory_class!r}"
        if parent is None:
            channel = factory.provider.open_channel(factory, session_mode, what)
        else:
            channel = parent._channel.sibling(session_mode, what)
        self._channel = channel
        # poison a receiver of this session meets goes to the provider's dead-letter queue
        channel.set_dead_letter_queue(f"queue://{factory.provider.dead_letter_queue or DEAD_LETTER_QUEUE}")
        self._sends = SendPath(channel, self._jkey, lambda: self._closed)
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
        return JMSContext._open(self._factory, session_mode, parent=self)

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
    def acknowledger(self) -> Callable[[], None] | None:
        """What a received message's acknowledge() calls: the context's acknowledge in
        CLIENT_ACKNOWLEDGE mode, else None (acknowledge does nothing)."""
        return self._acker()

    def wire_key(self, destination: Destination) -> JavaString:
        """The destination's key on the channel, once the context and the destination passed
        (strict mode: the broker has it)."""
        self._check_open()
        return self._jkey(destination)

    def client_does_jms2(self) -> bool:
        """Whether the provider's client does JMS 2.0's async send and receive_body itself
        (Qpid JMS does; ActiveMQ Classic's does not, and pyjms emulates them). Asked once."""
        return self._jms2_client()

    @property
    def sends(self) -> SendPath:
        """The one send path of this context's session (pyjms.api.sending): producers, bulk
        senders and features send through it."""
        return self._sends

    @property
    def closed(self) -> bool:
        return self._closed

    # ------------------------------------------------------------------ plumbing

    def _call(self, fn: Callable[[], _T], what: str) -> _T:
        """Kept for pyjms.delay.processor until it uses the public API (issue 13)."""
        return self._channel.call(fn, what)

    def _jkey(self, destination: Any) -> JavaString:
        if not isinstance(destination, Destination):
            raise InvalidDestinationRuntimeException(
                f"destination must be a Queue or Topic from this API, got {destination!r}"
            )
        if not self._factory.create_destinations and destination.key not in self._existing:
            self._require_existing(destination)
        k = destination._jkey
        if k is None:
            k = destination._jkey = self._channel.java_string(destination.key)
        return k

    def _require_existing(self, destination: Destination) -> None:
        """Strict mode: 2085 for a destination the broker says it does not have."""
        if isinstance(destination, (TemporaryQueue, TemporaryTopic)) or destination.name.startswith(
            _SERVICE_PREFIX
        ):
            return  # made by this connection, or one of pyjms's own services' queues
        known = self._factory.provider.destination_exists(self, destination)
        if known is False:
            raise InvalidDestinationRuntimeException(
                f"{destination} does not exist on the broker, and this factory does not create destinations "
                f"(create_destinations=False)",
                reason=MQRC.UNKNOWN_OBJECT_NAME,
                values={"destination": destination.key},
            )
        self._existing.add(destination.key)  # known, or the broker cannot tell

    def _target_attributes(self, destination: Destination) -> Any:
        """Kept for pyjms.delay.processor until it uses the public API (issue 13):
        ``ctx.provider.target_attributes(ctx, destination)``."""
        return self._factory.provider.target_attributes(self, destination)

    def _jms2_client(self) -> bool:
        """Whether the provider's client does JMS 2.0's async send and receive_body itself
        (Qpid JMS does; ActiveMQ Classic's does not, and pyjms emulates them). Asked once."""
        if self._jms2 is None:
            self._jms2 = self._channel.jms2_client()
        return self._jms2

    # ------------------------------------------------------------------ destinations

    def create_queue(self, name: str) -> Queue:
        """The queue NAME; ``queue://NAME`` names it too."""
        self._check_open()
        return Queue(_unprefixed(name, "queue"))

    def create_topic(self, name: str) -> Topic:
        """The topic NAME; ``topic://NAME`` names it too."""
        self._check_open()
        return Topic(_unprefixed(name, "topic"))

    def create_temporary_queue(self) -> TemporaryQueue:
        self._check_open()
        key = self._channel.create_temporary_queue()
        q = TemporaryQueue(key.partition("://")[2])
        q._delete = self._delete_temporary
        return q

    def create_temporary_topic(self) -> TemporaryTopic:
        self._check_open()
        key = self._channel.create_temporary_topic()
        t = TemporaryTopic(key.partition("://")[2])
        t._delete = self._delete_temporary
        return t

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

    # ------------------------------------------------------------------ transactions and acks

    def commit(self) -> None:
        """Commits the session's transaction (pyjms.api.transactions: committed, rolled back,
        or in doubt)."""
        self._check_open()
        if self._mode != SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("commit() needs a SESSION_TRANSACTED context")
        self._transaction.commit()

    def rollback(self) -> None:
        self._check_open()
        if self._mode != SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("rollback() needs a SESSION_TRANSACTED context")
        self._transaction.rollback()

    def recover(self) -> None:
        """Redelivers every unacknowledged message (not for transacted contexts)."""
        self._check_open()
        if self._mode == SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("recover() is not allowed on a SESSION_TRANSACTED context")
        self._channel.recover()

    def acknowledge(self) -> None:
        """CLIENT_ACKNOWLEDGE: acknowledges all messages consumed; ignored in other modes."""
        self._check_open()
        if self._mode == CLIENT_ACKNOWLEDGE:
            self._channel.acknowledge()

    # ------------------------------------------------------------------ synchronizations

    def add_synchronization(self, synchronization: TransactionSynchronization) -> None:
        """Tells ``synchronization`` of every commit and rollback from now on, and of the close
        (pyjms.api.synchronization). Adding one twice adds it once."""
        self._check_open()
        self._transaction.add(synchronization)

    def remove_synchronization(self, synchronization: TransactionSynchronization) -> None:
        self._transaction.remove(synchronization)

    def _acker(self) -> Callable[[], None] | None:
        return self.acknowledge if self._mode == CLIENT_ACKNOWLEDGE else None
