"""ConnectionFactory and JMSContext: the JMS 2.0 simplified API.

A JMSContext is one connection and one session (contexts made with create_context share the
connection). Everything a context does on the wire goes through its shim Channel; every rule
is checked in Python before the call.
"""

from __future__ import annotations

import logging
import os
import queue as _queue
import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from pyjms.api.constants import AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE, SESSION_MODES, SESSION_TRANSACTED
from pyjms.api.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from pyjms.api.message import BytesMessage, MapMessage, Message, TextMessage
from pyjms.bridge import jvm, urls
from pyjms.bridge.classpath import DEFAULT_PROVIDER
from pyjms.bridge.errors import translate
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    TransactionRolledBackRuntimeException,
)

if TYPE_CHECKING:
    from pyjms.api.consumer import JMSConsumer, QueueBrowser
    from pyjms.api.producer import JMSProducer
    from pyjms.browse.browser import MarkingBrowser


_log = logging.getLogger("pyjms")


def _url_from_environment() -> str:
    url = os.environ.get("PYJMS_URL")
    if url:
        return url
    from pyjms.broker import embedded

    return embedded.default_broker().vm_url


class ConnectionFactory:
    """Connects to a provider by URL (ActiveMQ: vm://, tcp://, failover:(...)) or factory class.

    With no URL it uses ``PYJMS_URL``, or else starts an embedded broker in this process.
    ``provider`` names the client for the URL ("activemq", "artemis", "amqp"): Apache Artemis
    and ActiveMQ both write tcp://host:port, so an Artemis URL needs provider="artemis" or the
    form artemis+tcp://host:port (see pyjms.bridge.urls; plain tcp:// is ActiveMQ's).
    Any other Jakarta Messaging provider works through ``factory_class`` (its jars on
    ``classpath`` or ``PYJMS_CLASSPATH``) with bean ``properties``. ``delivery_delay`` picks
    how delayed messages are held (see pyjms.delay.mechanism); ``auto`` probes the provider.
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
        staging_queue: str = "SYSTEM.DDELAY.LOCAL.QUEUE",
        provider: str | None = None,
    ) -> None:
        if url is not None and not isinstance(url, str):
            raise InvalidArgumentRuntimeException(f"url must be a str, got {url!r}")
        if provider is not None and factory_class is not None:
            raise InvalidArgumentRuntimeException(
                f"provider={provider!r} and factory_class={factory_class!r}: give one, not both")
        if url is not None:
            urls.choose(url, provider)  # a URL no provider understands fails here, not at first use
        elif provider is not None:
            urls.choose("", provider)
        #: the provider named for the URL ("activemq", "artemis", "amqp"), or None: by the URL
        self.provider = provider
        self._url = url
        self.user = user
        self.password = password
        self.client_id = client_id
        self.factory_class = factory_class
        self.properties = {k: str(v) for k, v in (properties or {}).items()}
        self.classpath = tuple(classpath)
        from pyjms.delay.mechanism import check_choice

        #: "auto" (probe the provider once), "native", "scheduler" or "none"
        self.delivery_delay = check_choice(delivery_delay)
        self._delay_mechanism: Any = None
        #: where the staging mechanism puts delayed messages for the delay processor
        self.staging_queue = staging_queue
        self._provider: Any = None
        self._jfactory: Any = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        if self._url is None and self.factory_class is None:
            if self.provider not in (None, urls.ACTIVEMQ) and not os.environ.get("PYJMS_URL"):
                raise InvalidArgumentRuntimeException(
                    f"provider={self.provider!r} needs a url (or PYJMS_URL): the broker pyjms starts "
                    "when none is given is ActiveMQ's")
            self._url = _url_from_environment()
        return self._url or ""

    def _java(self) -> tuple[Any, Any]:
        with self._lock:
            if self._jfactory is None:
                if self.factory_class:
                    name, client_url = None, self.url
                else:
                    name, client_url = urls.choose(self.url, self.provider)
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
                    raise translate(e, f"cannot make a connection factory for {self.url or self.factory_class!r}") from None
            return self._provider, self._jfactory

    def create_context(self, session_mode: int = AUTO_ACKNOWLEDGE) -> JMSContext:
        """A new connection with one session (JMSContext)."""
        return JMSContext._open(self, session_mode)

    def __repr__(self) -> str:
        return f"ConnectionFactory({self._url or self.factory_class!r})"


class JMSContext:
    """jakarta.jms.JMSContext: a connection and a session, used from one thread.

    Listeners run on one pyjms dispatch thread per context and async sends on one sender
    thread, as JMS requires (a session delivers serially). Use it as a context manager.
    """

    def __init__(self) -> None:  # use ConnectionFactory.create_context
        raise TypeError("use ConnectionFactory.create_context() or JMSContext.create_context()")

    @classmethod
    def _open(cls, factory: ConnectionFactory, session_mode: int, parent: JMSContext | None = None) -> JMSContext:
        if session_mode not in SESSION_MODES or isinstance(session_mode, bool):
            raise InvalidArgumentRuntimeException(
                f"session mode {session_mode!r} is not one of {', '.join(f'{v} ({k})' for k, v in SESSION_MODES.items())}"
            )
        self = object.__new__(cls)
        self._factory = factory
        self._mode = session_mode
        self._closed = False
        self._lock = threading.RLock()
        self._listeners: dict[int, JMSConsumer] = {}
        self._dispatcher: threading.Thread | None = None
        self._async: _AsyncSender | None = None  # async sends pyjms makes, where the client has none
        self._completions: Any = None  # NativeCompletions: async sends the client makes itself
        self._native_async: bool | None = None  # whether the client sends async (None: not tried yet)
        self._auto_start = True
        self._attributes: Any = None  # AttributeCache, made on the first delayed send
        self._pyjms_broker: bool | None = None  # whether the broker is one pyjms started
        self._marks: Any = None  # MarkClient, made on the first receive_by_token
        self._by_token: list[tuple[str, str]] = []  # (queue, token) got in this transaction
        self._client_id = factory.client_id if parent is None else parent._client_id
        provider, jfactory = factory._java()
        s = jvm.shim()
        self._s = s
        try:
            if parent is None:
                self._ch = s.Channel.open(provider, jfactory, factory.user, factory.password, factory.client_id, session_mode)
            else:
                self._ch = parent._ch.sibling(session_mode)
        except s.JException as e:
            raise translate(e, f"cannot connect to {factory.url or factory.factory_class!r}") from None
        self._provider_name = str(self._ch.providerName())
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

    def close(self) -> None:
        """Closes the session (and the connection when no sibling context uses it).

        A transacted context's uncommitted work is rolled back, as JMS requires.
        """
        if self._closed:
            return
        pending = bool(self._by_token) and self._mode == SESSION_TRANSACTED
        if pending:
            self._mark_client()  # made while this context is open; a sibling outlives its close
        if self._async is not None:
            self._async.stop()
        if self._completions is not None:
            self._completions.stop()  # JMS: close waits for the outstanding async sends
        self._closed = True
        if self._dispatcher is not None and self._dispatcher is not threading.current_thread():
            self._dispatcher.join(timeout=5)
        try:
            self._ch.close()
        except self._s.JException as e:
            raise translate(e, "close") from None
        finally:
            jvm.forget(self)
            if self._marks is not None:
                if pending:
                    self._settle_tokens("unmark")  # closing rolled the transaction back
                self._marks.close()

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
        cid = self._ch.clientId()
        return None if cid is None else str(cid)

    def set_client_id(self, client_id: str) -> None:
        self._check_open()
        self._call(lambda: self._ch.setClientId(client_id), "set_client_id")
        self._client_id = client_id

    def get_auto_start(self) -> bool:
        return self._auto_start

    def set_auto_start(self, auto_start: bool) -> None:
        self._auto_start = bool(auto_start)

    def start(self) -> None:
        self._check_open()
        self._call(self._ch.start, "start")

    def stop(self) -> None:
        self._check_open()
        self._call(self._ch.stop, "stop")

    @property
    def provider_name(self) -> str:
        return self._provider_name

    # ------------------------------------------------------------------ plumbing

    def _call(self, fn: Callable[[], Any], what: str) -> Any:
        try:
            return fn()
        except self._s.JException as e:
            raise translate(e, what) from None

    def _jkey(self, destination: Any) -> Any:
        if not isinstance(destination, Destination):
            raise InvalidDestinationRuntimeException(
                f"destination must be a Queue or Topic from this API, got {destination!r}"
            )
        k = destination._jkey
        if k is None:
            k = destination._jkey = self._s.String(destination.key)
        return k

    def _delay_mechanism(self) -> Any:
        """The delay mechanism for this factory, probed once on first need."""
        from pyjms.delay.mechanism import resolve

        f = self._factory
        if f._delay_mechanism is None:
            f._delay_mechanism = resolve(self, f.delivery_delay)
        return f._delay_mechanism

    def _target_attributes(self, destination: Destination) -> Any:
        """The IBM MQ attributes defined for a destination on a pyjms broker, or None."""
        if self._attributes is None:
            from pyjms.broker.admin import AttributeCache

            self._attributes = AttributeCache(self)
        return self._attributes.get(destination)

    def _on_pyjms_broker(self) -> bool:
        """Whether the broker is one pyjms started (it addresses delayed publications, D16)."""
        if self._pyjms_broker is None:
            self._pyjms_broker = bool(self._ch.provider().isPyjmsBroker(self._ch.connection()))
        return self._pyjms_broker

    def _subscriber_selector(self, selector: str | None, address: str) -> str | None:
        """A topic subscriber's selector: with its address clause on pyjms brokers (D16)."""
        from pyjms.broker import subscriptions

        return subscriptions.selector_for(selector, address) if self._on_pyjms_broker() else selector

    def _staging_queue(self) -> Queue:
        return Queue(self._factory.staging_queue)

    def _drain_async(self) -> None:
        """JMS keeps a session's sends in order: a synchronous call waits for async sends."""
        if self._async is not None:
            self._async.drain()
        if self._completions is not None:
            self._completions.drain()

    def _async_sender(self) -> _AsyncSender:
        if self._async is None:
            self._async = _AsyncSender(self)
        return self._async

    # ------------------------------------------------------------------ destinations

    def create_queue(self, name: str) -> Queue:
        self._check_open()
        return Queue(name)

    def create_topic(self, name: str) -> Topic:
        self._check_open()
        return Topic(name)

    def create_temporary_queue(self) -> TemporaryQueue:
        self._check_open()
        key = str(self._call(self._ch.createTemporaryQueue, "create_temporary_queue"))
        q = TemporaryQueue(key.partition("://")[2])
        q._delete = self._delete_temporary
        return q

    def create_temporary_topic(self) -> TemporaryTopic:
        self._check_open()
        key = str(self._call(self._ch.createTemporaryTopic, "create_temporary_topic"))
        t = TemporaryTopic(key.partition("://")[2])
        t._delete = self._delete_temporary
        return t

    def _delete_temporary(self, d: Destination) -> None:
        self._check_open()
        self._call(lambda: self._ch.deleteTemporary(self._jkey(d)), f"delete {d}")

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
        from pyjms.api.producer import JMSProducer

        self._check_open()
        return JMSProducer(self)

    def create_consumer(
        self, destination: Destination, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        from pyjms.api.consumer import JMSConsumer

        self._check_open()
        key = self._jkey(destination)
        def make() -> Any:
            return self._ch.consumer(key, message_selector, bool(no_local))

        what = f"create_consumer({destination}, selector={message_selector!r})"
        if isinstance(destination, Topic):
            from pyjms.broker.subscriptions import plain_address

            wire_selector = self._subscriber_selector(message_selector, plain_address())
            receiver = self._call(lambda: self._ch.consumer(key, wire_selector, bool(no_local)), what)
            return JMSConsumer(self, receiver, destination, message_selector)
        if not isinstance(destination, Queue):
            return JMSConsumer(self, self._call(make, what), destination, message_selector)
        # A queue consumer takes messages from the provider only from its first receive, so one
        # kept for receive_by_token never hoards the queue. It is made here (a bad selector or
        # a refused read fails at creation, as JMS says) and parked at once: what the provider
        # prefetched to it goes back, unmarked as redelivered.
        consumer = JMSConsumer(self, self._call(make, what), destination, message_selector)
        consumer._reopen = make
        consumer._park()
        return consumer

    def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        from pyjms.api.consumer import JMSConsumer

        self._check_open()
        self._check_topic(topic, "create_durable_consumer")
        if self._client_id is None:
            # ActiveMQ would invent one, making the subscription impossible to find again
            raise IllegalStateRuntimeException(
                "a durable subscription needs a client id: ConnectionFactory(client_id=...) or set_client_id()"
            )
        from pyjms.broker import subscriptions

        key = self._jkey(topic)
        client_id = self._client_id
        wire_selector = (subscriptions.durable_selector(self, topic, client_id, name, message_selector)
                         if self._on_pyjms_broker() else message_selector)
        r = self._call(lambda: self._ch.durableConsumer(key, name, wire_selector, bool(no_local)),
                       f"create_durable_consumer({topic}, {name!r})")
        return JMSConsumer(self, r, topic, message_selector)

    def create_shared_consumer(self, topic: Topic, name: str, message_selector: str | None = None) -> JMSConsumer:
        return self._shared(topic, name, message_selector, durable=False)

    def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        return self._shared(topic, name, message_selector, durable=True)

    def _shared(self, topic: Topic, name: str, selector: str | None, durable: bool) -> JMSConsumer:
        from pyjms.api.consumer import JMSConsumer

        self._check_open()
        what = "create_shared_durable_consumer" if durable else "create_shared_consumer"
        self._check_topic(topic, what)
        key = self._jkey(topic)
        r = self._call(lambda: self._ch.sharedConsumer(key, name, selector, durable), f"{what}({topic}, {name!r})")
        return JMSConsumer(self, r, topic, selector)

    @staticmethod
    def _check_topic(topic: Any, what: str) -> None:
        if not isinstance(topic, Topic):
            raise InvalidDestinationRuntimeException(f"{what} needs a Topic, got {topic!r}")

    def unsubscribe(self, name: str) -> None:
        self._check_open()
        self._call(lambda: self._ch.unsubscribe(name), f"unsubscribe({name!r})")

    def create_browser(self, queue: Queue, message_selector: str | None = None) -> QueueBrowser:
        from pyjms.api.consumer import QueueBrowser

        self._check_open()
        if not isinstance(queue, Queue):
            raise InvalidDestinationRuntimeException(f"create_browser needs a Queue, got {queue!r}")
        key = self._jkey(queue)
        b = self._call(lambda: self._ch.browser(key, message_selector), f"create_browser({queue})")
        return QueueBrowser(self, b, queue, message_selector)

    def create_marking_browser(
        self, queue: Queue, message_selector: str | None = None, cooperative: bool = False, claim_batch: int = 16
    ) -> MarkingBrowser:
        """IBM MQ's browse with mark on queue: a handle of its own, or (cooperative=True, IBM's
        MQOO_CO_OP) one of a cooperating set whose marks every handle on the broker sees.
        See pyjms.browse."""
        from pyjms.browse.browser import MarkingBrowser

        return MarkingBrowser(self, queue, message_selector, cooperative, claim_batch)

    # ------------------------------------------------------------------ transactions and acks

    def commit(self) -> None:
        self._check_open()
        if self._mode != SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("commit() needs a SESSION_TRANSACTED context")
        self._drain_async()
        try:
            self._call(self._ch.commit, "commit")
        except TransactionRolledBackRuntimeException:
            self._settle_tokens("unmark")
            raise
        self._settle_tokens("consumed")

    def rollback(self) -> None:
        self._check_open()
        if self._mode != SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("rollback() needs a SESSION_TRANSACTED context")
        self._drain_async()
        self._call(self._ch.rollback, "rollback")
        self._settle_tokens("unmark")

    def recover(self) -> None:
        """Redelivers every unacknowledged message (not for transacted contexts)."""
        self._check_open()
        if self._mode == SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("recover() is not allowed on a SESSION_TRANSACTED context")
        self._call(self._ch.recover, "recover")

    def acknowledge(self) -> None:
        """CLIENT_ACKNOWLEDGE: acknowledges all messages consumed; ignored in other modes."""
        self._check_open()
        if self._mode == CLIENT_ACKNOWLEDGE:
            self._call(self._ch.acknowledge, "acknowledge")

    # ------------------------------------------------------------------ message tokens

    def _got_by_token(self, queue: str, tokens: list[str]) -> None:
        """Messages got by token: the mark service hears of them at commit or rollback."""
        if not tokens:
            return
        self._by_token.extend((queue, t) for t in tokens)
        if self._mode != SESSION_TRANSACTED:
            self._settle_tokens("consumed")

    def _mark_client(self) -> Any:
        """The MarkClient for notices about gets by token, made on first use."""
        if self._marks is None:
            from pyjms.browse.client import MarkClient

            self._marks = MarkClient(self)
        return self._marks

    def _settle_tokens(self, outcome: str) -> None:
        """Tells the mark service the gets were committed ("consumed": forget the marks) or
        backed out ("unmark": the messages can be dispatched again). A notice, not a request."""
        if not self._by_token:
            return
        got, self._by_token = self._by_token, []
        marks = self._mark_client()
        by_queue: dict[str, list[str]] = {}
        for queue, token in got:
            by_queue.setdefault(queue, []).append(token)
        for queue, tokens in by_queue.items():
            try:
                marks.notify(outcome, queue=queue, ids=tokens)
            except JMSRuntimeException as e:  # best effort: unheard, the marks lapse with the interval
                _log.warning("could not tell the mark service of %d %s message(s) on %s: %s",
                             len(tokens), outcome, queue, e)

    # ------------------------------------------------------------------ listeners

    def _check_no_listener(self) -> None:
        if self._listeners:
            raise IllegalStateRuntimeException(
                "this context has a message listener: synchronous receive is not allowed on it (JMS 2.0)"
            )

    def _set_listener(self, consumer: JMSConsumer, has_listener: bool) -> None:
        with self._lock:
            if has_listener:
                self._listeners[consumer._id] = consumer
                if self._dispatcher is None:
                    self._dispatcher = threading.Thread(
                        target=self._dispatch, name=f"pyjms-dispatch-{id(self):x}", daemon=True
                    )
                    self._dispatcher.start()
            else:
                self._listeners.pop(consumer._id, None)

    def _dispatch(self) -> None:
        """The context's one listener thread: takes each message from the shim, runs the
        listener, and returns a verdict (a failed listener gets the message redelivered)."""
        from pyjms.bridge import codec

        with jvm.java_thread():
            while not self._closed:
                try:
                    raw = self._ch.nextListened(200)
                except Exception:
                    if self._closed:
                        return
                    raise
                if raw is None:
                    continue
                buf = bytes(raw)
                (receiver_id,) = codec._I32.unpack_from(buf, 0)
                consumer = self._listeners.get(receiver_id)
                ok = False
                try:
                    if consumer is not None and consumer._listener is not None:
                        rec = codec.IncomingRecord(buf, 4)
                        consumer._listener(Message._received(rec, self._acker()))
                        ok = True
                except Exception as e:  # a failing listener must not kill the dispatcher
                    consumer._listener_error(e)
                try:
                    self._ch.listenedDone(ok)
                except Exception:
                    if self._closed:
                        return

    def _acker(self) -> Callable[[], None] | None:
        return self.acknowledge if self._mode == CLIENT_ACKNOWLEDGE else None


class _AsyncSender:
    """JMS 2.0 async send: one thread per context sends in order and calls the listeners."""

    def __init__(self, ctx: JMSContext) -> None:
        self._ctx = ctx
        self._q: _queue.Queue[Any] = _queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"pyjms-async-{id(ctx):x}", daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._q.put(job)

    def drain(self) -> None:
        if threading.current_thread() is not self._thread:
            self._q.join()

    def stop(self) -> None:
        self.drain()
        self._q.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        with jvm.java_thread():
            while True:
                job = self._q.get()
                try:
                    if job is None:
                        return
                    job()
                finally:
                    self._q.task_done()
