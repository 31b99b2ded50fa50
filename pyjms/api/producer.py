"""JMSProducer: fluent send options, one JVM crossing per send or per batch."""

from __future__ import annotations

import itertools
import logging
import threading
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

from pyjms.api.constants import DEFAULT_PRIORITY, PERSISTENT
from pyjms.api.destination import Destination, Topic
from pyjms.api.message import Message, check_property_name, checked_value, convert, message_for_body, tag_for
from pyjms.bridge import codec as C
from pyjms.bridge import jvm
from pyjms.bridge.errors import translate
from pyjms.broker.subscriptions import SUBSCRIBER
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException, MessageFormatRuntimeException
from pyjms.delay import staging
from pyjms.delay.mechanism import DelayMechanism
from pyjms.rules import delivery as rules
from pyjms.rules.expiry import now_ms

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext


class CompletionListener(Protocol):
    """jakarta.jms.CompletionListener (a plain callable taking (message, exception) also works)."""

    def on_completion(self, message: Message) -> None: ...

    def on_exception(self, message: Message, exception: JMSRuntimeException) -> None: ...


class JMSProducer:
    """jakarta.jms.JMSProducer. Setters return the producer, so calls chain."""

    def __init__(self, ctx: JMSContext) -> None:
        self._ctx = ctx
        self._mode = PERSISTENT
        self._priority = DEFAULT_PRIORITY
        self._ttl = 0
        self._delay = 0
        self._disable_id = False
        self._disable_ts = False
        self._correlation_id: str | None = None
        self._type: str | None = None
        self._reply_to: Destination | None = None
        self._props: dict[str, tuple[int, Any]] = {}
        self._listener: Any = None
        self._delay_flag = 0  # how the shim applies a delay (pyjms.delay.mechanism)
        self._staged = False  # delayed messages go to the staging queue (pyjms.delay.staging)
        self._blocks: tuple[bytes, bytes] | None = None  # packed (headers, properties), cached

    # ------------------------------------------------------------------ options

    def set_delivery_mode(self, delivery_mode: int) -> JMSProducer:
        self._mode = rules.check_delivery_mode(delivery_mode)
        return self

    def get_delivery_mode(self) -> int:
        return self._mode

    def set_priority(self, priority: int) -> JMSProducer:
        self._priority = rules.check_priority(priority)
        return self

    def get_priority(self) -> int:
        return self._priority

    def set_time_to_live(self, time_to_live: int | timedelta) -> JMSProducer:
        ttl = rules.check_time_to_live(time_to_live)
        rules.check_delay_within_ttl(self._delay, ttl)
        self._ttl = ttl
        return self

    def get_time_to_live(self) -> int:
        return self._ttl

    def set_delivery_delay(self, delivery_delay: int | timedelta) -> JMSProducer:
        delay = rules.check_delivery_delay(delivery_delay)
        rules.check_delay_within_ttl(delay, self._ttl)
        if delay:
            mechanism = self._ctx._delay_mechanism()
            if not mechanism.available:
                raise rules.delay_not_supported(delay, self._ctx.provider_name)
            self._delay_flag = mechanism.send_flag
            self._staged = mechanism is DelayMechanism.STAGING
        self._delay = delay
        return self

    def get_delivery_delay(self) -> int:
        return self._delay

    def set_disable_message_id(self, value: bool) -> JMSProducer:
        self._disable_id = bool(value)
        return self

    def get_disable_message_id(self) -> bool:
        return self._disable_id

    def set_disable_message_timestamp(self, value: bool) -> JMSProducer:
        self._disable_ts = bool(value)
        return self

    def get_disable_message_timestamp(self) -> bool:
        return self._disable_ts

    def set_jms_correlation_id(self, correlation_id: str | None) -> JMSProducer:
        if correlation_id is not None and not isinstance(correlation_id, str):
            raise MessageFormatRuntimeException(f"a correlation id must be a str, got {correlation_id!r}")
        self._correlation_id = correlation_id
        self._blocks = None
        return self

    def get_jms_correlation_id(self) -> str | None:
        return self._correlation_id

    def set_jms_type(self, jms_type: str | None) -> JMSProducer:
        if jms_type is not None and not isinstance(jms_type, str):
            raise MessageFormatRuntimeException(f"a JMS type must be a str, got {jms_type!r}")
        self._type = jms_type
        self._blocks = None
        return self

    def get_jms_type(self) -> str | None:
        return self._type

    def set_jms_reply_to(self, reply_to: Destination | None) -> JMSProducer:
        if reply_to is not None and not isinstance(reply_to, Destination):
            raise MessageFormatRuntimeException(f"reply-to must be a Queue or Topic, got {reply_to!r}")
        self._reply_to = reply_to
        self._blocks = None
        return self

    def get_jms_reply_to(self) -> Destination | None:
        return self._reply_to

    def set_property(self, name: str, value: bool | int | float | str) -> JMSProducer:
        """Sets a property on every message this producer sends (JMS type from the Python type)."""
        check_property_name(name)
        tag = tag_for(value, what=f"property {name!r}")
        self._props[name] = (tag, checked_value(tag, value, f"property {name!r}"))
        self._blocks = None
        return self

    def _set_typed(self, name: str, tag: int, value: Any) -> JMSProducer:
        check_property_name(name)
        self._props[name] = (tag, checked_value(tag, value, f"property {name!r}"))
        self._blocks = None
        return self

    def set_boolean_property(self, name: str, value: bool) -> JMSProducer:
        return self._set_typed(name, C.T_BOOL, value)

    def set_int_property(self, name: str, value: int) -> JMSProducer:
        return self._set_typed(name, C.T_INT, value)

    def set_long_property(self, name: str, value: int) -> JMSProducer:
        return self._set_typed(name, C.T_LONG, value)

    def set_double_property(self, name: str, value: float) -> JMSProducer:
        return self._set_typed(name, C.T_DOUBLE, value)

    def set_string_property(self, name: str, value: str) -> JMSProducer:
        return self._set_typed(name, C.T_STRING, value)

    def clear_properties(self) -> JMSProducer:
        self._props.clear()
        self._blocks = None
        return self

    def property_exists(self, name: str) -> bool:
        return name in self._props

    def get_property_names(self) -> set[str]:
        return set(self._props)

    def get_object_property(self, name: str) -> Any:
        e = self._props.get(name)
        return None if e is None else e[1]

    def get_string_property(self, name: str) -> str | None:
        return convert(self._props.get(name), C.T_STRING, f"property {name!r}")

    def get_int_property(self, name: str) -> int:
        return convert(self._props.get(name), C.T_INT, f"property {name!r}")

    def get_long_property(self, name: str) -> int:
        return convert(self._props.get(name), C.T_LONG, f"property {name!r}")

    def get_boolean_property(self, name: str) -> bool:
        return convert(self._props.get(name), C.T_BOOL, f"property {name!r}")

    def get_double_property(self, name: str) -> float:
        return convert(self._props.get(name), C.T_DOUBLE, f"property {name!r}")

    def set_async(self, completion_listener: CompletionListener | Callable[..., None] | None) -> JMSProducer:
        """Sends return at once; the listener hears of each completion in send order.

        It may be an object with on_completion/on_exception, or a callable
        ``fn(message, exception_or_None)``. None makes sends synchronous again.
        """
        if completion_listener is not None and not (
            callable(completion_listener) or hasattr(completion_listener, "on_completion")
        ):
            raise InvalidArgumentRuntimeException(
                f"a completion listener needs on_completion/on_exception or to be callable, got {completion_listener!r}"
            )
        self._listener = completion_listener
        return self

    def get_async(self) -> Any:
        return self._listener

    # ------------------------------------------------------------------ sending

    def _flags(self) -> int:
        return (1 if self._disable_id else 0) | (2 if self._disable_ts else 0) | self._delay_flag

    def _packed_blocks(self) -> tuple[bytes, bytes]:
        if self._blocks is None:
            reply = self._reply_to.key if self._reply_to is not None else None
            has_headers = self._correlation_id is not None or self._type is not None or reply is not None
            headers = C.pack_headers(self._correlation_id, self._type, reply) if has_headers else b""
            self._blocks = (headers, C.pack_properties(self._props) if self._props else b"")
        return self._blocks

    def send(self, destination: Destination, body: Any) -> JMSProducer:
        """Sends a str (TextMessage), bytes (BytesMessage), dict (MapMessage), None or a Message."""
        ctx = self._ctx
        ctx._check_open()
        key = ctx._jkey(destination)
        if self._delay and self._staged:
            self._stage_one(destination, body)
            return self
        if isinstance(body, (str, bytes)) and self._listener is None:
            # the fast path: no Message object, one JVM call
            if self._delay:
                self._check_delayed(destination, self._props, len(body.encode()) if isinstance(body, str) else len(body))
            headers, props = self._packed_blocks()
            record = C.pack_record(C.KIND_TEXT if isinstance(body, str) else C.KIND_BYTES, body, headers, props)
            if ctx._async is not None:
                ctx._drain_async()
            try:
                ctx._ch.send(key, record, self._mode, self._priority, self._ttl, self._delay, self._flags())
            except ctx._s.JException as e:
                raise translate(e, f"send to {destination}") from None
            return self
        message = message_for_body(body)
        record = message._pack(**self._overrides(), extra_properties=self._props)
        if self._delay:
            self._check_delayed(destination, {**message._properties(), **self._props}, len(record))
        args = (key, record, self._mode, self._priority, self._ttl, self._delay, self._flags())
        if self._listener is not None:
            if ctx._native_async is not False and self._send_natively_async(destination, message, args):
                return self
            ctx._async_sender().submit(lambda: self._send_async(destination, message, args, self._listener))
            return self
        ctx._drain_async()
        self._send_described(destination, message, args)
        return self

    def _overrides(self) -> dict[str, Any]:
        """The producer's headers that replace a message's own (JMS 2.0: those that are set)."""
        out: dict[str, Any] = {}
        if self._correlation_id is not None:
            out["correlation_id"] = self._correlation_id
        if self._type is not None:
            out["jms_type"] = self._type
        if self._reply_to is not None:
            out["reply_to"] = self._reply_to
        return out

    def _check_delayed(self, destination: Destination, props: dict[str, tuple[int, Any]], size: int = 0) -> None:
        """The send-time rules for a delayed message (D05-D08, D22, D23)."""
        rules.check_delay_within_ttl(self._delay, self._ttl)
        rules.check_delayed_message(self._delay, {k: v for k, (_, v) in props.items()})
        rules.check_delayed_target(
            destination.key, self._ctx._target_attributes(destination),
            persistent=self._mode == PERSISTENT, size=size, delay_ms=self._delay,
        )

    # ------------------------------------------------------------------ staging (IBM MQ's delay design)

    def _staged_records(
        self, destination: Destination, body: Any, subscribers: list[str] | None = None
    ) -> tuple[list[bytes], str, int, Message]:
        """The staged copies of one delayed message: one, or for a topic one per subscriber
        address (D16; ``subscribers`` None means one copy, matched at delivery)."""
        message = message_for_body(body)
        now = now_ms()
        original_id = staging.new_message_id()
        own_correlation = self._correlation_id if self._correlation_id is not None else message.get_jms_correlation_id()
        header = staging.staging_properties(destination.key, now, self._delay, self._ttl, original_id, own_correlation)
        overrides = self._overrides()
        overrides["correlation_id"] = original_id  # D12: find a staged message by its original id
        props = {**self._props, **header}
        record = message._pack(**overrides, extra_properties=props)
        self._check_delayed(destination, {**message._properties(), **self._props}, len(record))
        if subscribers is None:
            return [record], original_id, now, message
        records = [message._pack(**overrides, extra_properties={**props, SUBSCRIBER: (C.T_STRING, address)})
                   for address in subscribers]
        return records, original_id, now, message

    def _subscribers(self, destination: Destination) -> list[str] | None:
        """For a delayed publication: the subscribers it is staged for now (D16), else None."""
        if not isinstance(destination, Topic):
            return None
        from pyjms.broker.subscriptions import subscribers_at_send

        return subscribers_at_send(self._ctx, destination)

    def _staging_key(self) -> Any:
        return self._ctx._jkey(self._ctx._staging_queue())

    def _stage_one(self, destination: Destination, body: Any) -> None:
        """D02: the message goes to the staging queue with its target and delivery time."""
        ctx = self._ctx
        records, original_id, now, message = self._staged_records(destination, body, self._subscribers(destination))
        ctx._drain_async()
        try:
            # no TTL on the staged copy: the processor expires it, with a report (D18)
            if len(records) == 1:
                ctx._ch.send(self._staging_key(), records[0], self._mode, self._priority, 0, 0, self._flags())
            elif records:
                ctx._ch.sendBatch(self._staging_key(), C.pack_batch(records, len(records)), self._mode,
                                  self._priority, 0, 0, self._flags())
        except ctx._s.JException as e:
            raise translate(e, f"stage a delayed message for {destination}") from None
        message._apply_sent_headers({
            "message_id": original_id, "timestamp": now, "destination": destination,
            "delivery_mode": self._mode, "priority": self._priority,
            "expiration": now + self._ttl if self._ttl else 0, "delivery_time": now + self._delay,
        })

    def _send_described(self, destination: Destination, message: Message, args: tuple[Any, ...]) -> None:
        ctx = self._ctx
        try:
            raw = ctx._ch.sendDescribed(*args)
        except ctx._s.JException as e:
            raise translate(e, f"send to {destination}") from None
        headers, _ = C.read_headers(bytes(raw), 0)
        message._apply_sent_headers(headers)

    def _send_natively_async(self, destination: Destination, message: Message, args: tuple[Any, ...]) -> bool:
        """JMS 2.0 async send by the client itself (Artemis, Qpid JMS); False, with nothing sent,
        where the client has none (ActiveMQ Classic): pyjms then sends on a thread of its own."""
        ctx = self._ctx
        if ctx._completions is None:
            ctx._completions = NativeCompletions(ctx)
        completions: NativeCompletions = ctx._completions
        ticket = completions.track(self._listener, message, destination)
        try:
            accepted = bool(ctx._ch.sendAsync(*args, ticket))
        except ctx._s.JException as e:
            completions.forget(ticket)
            raise translate(e, f"send to {destination}") from None
        if not accepted:
            completions.forget(ticket)
            completions.stop()
            ctx._completions = None
        ctx._native_async = accepted
        return accepted

    def _send_async(self, destination: Destination, message: Message, args: tuple[Any, ...], listener: Any) -> None:
        try:
            self._send_described(destination, message, args)
        except JMSRuntimeException as e:
            _notify(listener, message, e)
        else:
            _notify(listener, message, None)

    def send_reply(self, request: Message, body: Any, expiry: str | int | timedelta = "copy") -> JMSProducer:
        """Replies to a request: to its JMSReplyTo, correlated by its message id (E13).

        ``expiry`` is ``"copy"`` (the request's remaining lifetime, as IBM MQ's
        MQRO_PASS_DISCARD_AND_EXPIRY does), ``"unlimited"``, or a time-to-live.
        """
        reply_to = request.get_jms_reply_to()
        if reply_to is None:
            raise InvalidArgumentRuntimeException(
                f"request {request.get_jms_message_id()} has no JMSReplyTo to reply to"
            )
        if expiry == "copy":
            left = request.get_jms_expiration() - now_ms() if request.get_jms_expiration() else 0
            ttl = max(1, left) if request.get_jms_expiration() else 0
        elif expiry == "unlimited":
            ttl = 0
        else:
            ttl = rules.check_time_to_live(expiry)
        saved = (self._ttl, self._correlation_id, self._blocks)
        self._ttl, self._correlation_id, self._blocks = ttl, request.get_jms_message_id(), None
        try:
            return self.send(reply_to, body)
        finally:
            self._ttl, self._correlation_id, self._blocks = saved

    def send_batch(self, destination: Destination, bodies: Iterable[str | bytes]) -> int:
        """Sends many str/bytes bodies with one JVM crossing; returns how many were sent.

        Every message gets this producer's options and properties. In a transacted context
        they commit together with the context.
        """
        ctx = self._ctx
        ctx._check_open()
        key = ctx._jkey(destination)
        if self._delay and self._staged:
            bodies = list(bodies)
            for i, body in enumerate(bodies):
                if not isinstance(body, (str, bytes, bytearray, memoryview)):
                    raise MessageFormatRuntimeException(
                        f"send_batch takes str or bytes bodies; body #{i} is {type(body).__name__}"
                    )
            subscribers = self._subscribers(destination) if bodies else None  # matched once, at this send
            records = [r for body in bodies for r in self._staged_records(destination, body, subscribers)[0]]
            if not records:
                return len(bodies)  # a publication nobody subscribes to is sent to nobody
            ctx._drain_async()
            try:
                ctx._ch.sendBatch(self._staging_key(), C.pack_batch(records, len(records)), self._mode,
                                  self._priority, 0, 0, self._flags())
                return len(bodies)
            except ctx._s.JException as e:
                raise translate(e, f"stage {len(records)} delayed messages for {destination}") from None
        headers, props = self._packed_blocks()
        text, binary = C.KIND_TEXT, C.KIND_BYTES
        pack = C.pack_record
        records = []
        for body in bodies:
            if isinstance(body, str):
                records.append(pack(text, body, headers, props))
            elif isinstance(body, (bytes, bytearray, memoryview)):
                records.append(pack(binary, body, headers, props))
            else:
                raise MessageFormatRuntimeException(
                    f"send_batch takes str or bytes bodies; body #{len(records)} is {type(body).__name__}"
                )
        if not records:
            return 0
        if self._delay:
            self._check_delayed(destination, self._props, max(len(r) for r in records))
        ctx._drain_async()
        try:
            return int(
                ctx._ch.sendBatch(key, C.pack_batch(records, len(records)), self._mode, self._priority, self._ttl,
                                  self._delay, self._flags())
            )
        except ctx._s.JException as e:
            raise translate(e, f"send_batch of {len(records)} messages to {destination}") from None


class NativeCompletions:
    """The outcomes of a context's async sends made by the client itself; one pyjms thread per
    context applies the headers the provider set and calls the listeners, in send order, as
    JMS requires (Artemis reports a refused send before the confirmations of earlier ones), and
    pyjms never runs Python on a provider's thread."""

    POLL_MS = 200
    #: commit, rollback and close wait this long at most for outstanding sends
    DRAIN_S = 60.0
    _NEVER_SENT = object()

    def __init__(self, ctx: JMSContext) -> None:
        self._ctx = ctx
        self._pending: dict[int, tuple[Any, Message, Destination]] = {}  # by ticket, in send order
        self._arrived: dict[int, Any] = {}  # outcomes that came ahead of an earlier send's
        self._tickets = itertools.count(1)
        self._next = 1  # the ticket whose listener is due next
        self._changed = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=f"pyjms-completions-{id(ctx):x}", daemon=True)
        self._thread.start()

    def track(self, listener: Any, message: Message, destination: Destination) -> int:
        with self._changed:
            ticket = next(self._tickets)
            self._pending[ticket] = (listener, message, destination)
            return ticket

    def forget(self, ticket: int) -> None:
        """A send that never reached the client: no outcome will come for it."""
        with self._changed:
            self._arrived[ticket] = self._NEVER_SENT

    def drain(self) -> None:
        """Waits until every async send so far has completed and its listener returned."""
        if threading.current_thread() is self._thread:
            return  # a listener that commits: its own completion is the one being delivered
        with self._changed:
            if not self._changed.wait_for(lambda: not self._pending, timeout=self.DRAIN_S):
                logging.getLogger("pyjms").warning("%d async send(s) not completed after %.0f s",
                                                   len(self._pending), self.DRAIN_S)

    def stop(self) -> None:
        self.drain()
        self._stopping = True
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        channel = self._ctx._ch
        with jvm.java_thread():
            while not self._stopping:
                done = channel.nextCompletion(self.POLL_MS)
                with self._changed:
                    if done is not None:
                        self._arrived[int(done.ticket())] = done
                while True:
                    with self._changed:
                        if self._next not in self._arrived:
                            break
                        ticket, self._next = self._next, self._next + 1
                        done = self._arrived.pop(ticket)
                        listener, message, destination = self._pending[ticket]
                    if done is not self._NEVER_SENT:
                        self._complete(listener, message, destination, done)
                    with self._changed:
                        del self._pending[ticket]
                        self._changed.notify_all()

    @staticmethod
    def _complete(listener: Any, message: Message, destination: Destination, done: Any) -> None:
        error = None
        if done.error() is not None:
            error = translate(done.error(), f"send to {destination}")
        elif done.headers() is not None:
            message._apply_sent_headers(C.read_headers(bytes(done.headers()), 0)[0])
        _notify(listener, message, error)


def _notify(listener: Any, message: Message, error: JMSRuntimeException | None) -> None:
    try:
        if hasattr(listener, "on_completion"):
            if error is None:
                listener.on_completion(message)
            else:
                listener.on_exception(message, error)
        else:
            listener(message, error)
    except Exception:  # a failing listener must not stop later completions
        logging.getLogger("pyjms").exception("completion listener failed")
