"""JMSProducer: fluent send options, one JVM crossing per send or per batch.

A send goes through the factory's send policies (pyjms.api.policy) when any applies to the
producer's options: that is how IBM MQ's rules and the delivery-delay mechanisms (pyjms.rules,
pyjms.delay) take part. A send no policy applies to goes straight to the wire.

The headers and properties a producer puts on every message it sends, and their packed form,
are pyjms.api.producer_properties's; this module holds the producer's send options and its sends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from pyjms.api import checks
from pyjms.api.completions import notify_listener
from pyjms.api.constants import DEFAULT_PRIORITY, PERSISTENT
from pyjms.api.destination import Destination
from pyjms.api.expiry import now_ms
from pyjms.api.message import BytesMessage, Message, TextMessage, message_for_body
from pyjms.api.message.properties import DUPLICATE_ID_PROPERTY, check_duplicate_id
from pyjms.api.policy import OutgoingSend, ProducerOptions, SendPolicy, SendResult
from pyjms.api.producer_properties import ProducerProperties
from pyjms.api.sending import SendOptions
from pyjms.bridge import codec as C
from pyjms.bridge.contract import SEND_DELAY_NATIVE, SEND_NO_MESSAGE_ID, SEND_NO_TIMESTAMP
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException, MessageFormatRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext

_log = logging.getLogger("pyjms")


class CompletionListener(Protocol):
    """jakarta.jms.CompletionListener (a plain callable taking (message, exception) also works)."""

    def on_completion(self, message: Message) -> None: ...

    def on_exception(self, message: Message, exception: JMSRuntimeException) -> None: ...


class JMSProducer(ProducerProperties):
    """jakarta.jms.JMSProducer. Setters return the producer, so calls chain (the headers' and
    properties' setters are pyjms.api.producer_properties.ProducerProperties's)."""

    def __init__(self, ctx: JMSContext) -> None:
        super().__init__()
        self._ctx = ctx
        self._mode = PERSISTENT
        self._priority = DEFAULT_PRIORITY
        self._ttl = 0
        self._delay = 0
        self._disable_id = False
        self._disable_ts = False
        self._listener: Any = None
        self._chain: tuple[SendPolicy, ...] = ctx.factory.send_policies()
        self._active: tuple[SendPolicy, ...] | None = None  # the policies the options call for

    # ------------------------------------------------------------------ options

    def _options(self, **changes: int) -> ProducerOptions:
        values = {
            "delivery_mode": self._mode,
            "priority": self._priority,
            "time_to_live": self._ttl,
            "delivery_delay": self._delay,
            **changes,
        }
        return ProducerOptions(**values)

    def _check_options(self, options: ProducerOptions) -> None:
        """Every policy judges options as they are set (no broker round trip)."""
        for policy in self._chain:
            policy.check_options(options, self._ctx)

    def _policies(self) -> tuple[SendPolicy, ...]:
        """The policies this producer's sends go through, found again when its options change."""
        if self._active is None:
            options = self._options()
            self._active = tuple(p for p in self._chain if p.applies(options))
        return self._active

    def set_delivery_mode(self, delivery_mode: int) -> JMSProducer:
        mode = checks.check_delivery_mode(delivery_mode)
        # the policies found for the options stand while the options do (a forwarder sets
        # them for each send, mostly to what they were)
        if mode != self._mode:
            self._mode = mode
            self._active = None
        return self

    def get_delivery_mode(self) -> int:
        return self._mode

    def set_priority(self, priority: int) -> JMSProducer:
        priority = checks.check_priority(priority)
        if priority != self._priority:
            self._priority = priority
            self._active = None
        return self

    def get_priority(self) -> int:
        return self._priority

    def set_time_to_live(self, time_to_live: int | timedelta) -> JMSProducer:
        ttl = checks.check_time_to_live(time_to_live)
        self._check_options(self._options(time_to_live=ttl))
        if ttl != self._ttl:
            self._ttl = ttl
            self._active = None
        return self

    def get_time_to_live(self) -> int:
        return self._ttl

    def set_delivery_delay(self, delivery_delay: int | timedelta) -> JMSProducer:
        """Delays delivery of the messages sent from now by delivery_delay ms.

        No broker round trip: the factory's delay mechanism (pyjms.delay) is resolved at the
        first delayed send. A delay the factory is known to be unable to apply is refused here.
        """
        delay = checks.check_delivery_delay(delivery_delay)
        self._check_options(self._options(delivery_delay=delay))
        self._delay = delay
        self._active = None
        return self

    def get_delivery_delay(self) -> int:
        return self._delay

    def set_disable_message_id(self, value: bool) -> JMSProducer:
        self._disable_id = checks.check_bool(value, "disable_message_id")
        return self

    def get_disable_message_id(self) -> bool:
        return self._disable_id

    def set_disable_message_timestamp(self, value: bool) -> JMSProducer:
        self._disable_ts = checks.check_bool(value, "disable_message_timestamp")
        return self

    def get_disable_message_timestamp(self) -> bool:
        return self._disable_ts

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
        flags = (SEND_NO_MESSAGE_ID if self._disable_id else 0) | (
            SEND_NO_TIMESTAMP if self._disable_ts else 0
        )
        # a delay no policy takes care of is the client's own (JMS 2.0 setDeliveryDelay)
        return flags | SEND_DELAY_NATIVE if self._delay else flags

    def _wire_options(self) -> SendOptions:
        return (self._mode, self._priority, self._ttl, self._delay, self._flags())

    def _outgoing(self, destination: Destination, messages: list[Message], describe: bool) -> OutgoingSend:
        return OutgoingSend(
            self._ctx,
            destination,
            messages,
            self._mode,
            self._priority,
            self._ttl,
            self._delay,
            self._flags(),
            dict(self._props),
            self._overrides(),
            describe,
        )

    def send(self, destination: Destination, body: Any) -> JMSProducer:
        """Sends a str (TextMessage), bytes (BytesMessage), dict (MapMessage), None or a Message."""
        sends = self._ctx.sends
        key = sends.key(destination)
        policies = self._policies()
        if not policies and self._listener is None and isinstance(body, (str, bytes)):
            # the fast path: no Message object, one JVM call
            headers, props = self._packed_blocks()
            record = C.pack_record(
                C.KIND_TEXT if isinstance(body, str) else C.KIND_BYTES, body, headers, props
            )
            sends.send(key, record, self._wire_options(), f"send to {destination}")
            return self
        self._send_checked(destination, message_for_body(body), policies, describe=True)
        return self

    def routed_entry(self, destination: Destination, body: Any) -> tuple[bytes, int] | None:
        """For a sender that coalesces sends into one crossing (pyjms.aio): the send of ``body``
        to ``destination`` with this producer's options as they are now, as a routed entry
        (codec.pack_routed, for SendPath.send_routed) and its flags, when it would go straight
        to the wire (a str or bytes body, no send policy, no completion listener); else None,
        and the send goes through send(). It checks neither the context nor the destination
        against the session: SendPath.key does, before the crossing."""
        route = self._direct_route(destination) if isinstance(body, (str, bytes)) else None
        if route is None:
            return None
        return route + _routed_record(body, *self._packed_blocks()), self._flags()

    def routed_bodies(self, destination: Destination, bodies: list[Any]) -> RoutedBodies | None:
        """routed_entry for a send_batch to one destination: its RoutedBodies, whose records are
        packed later, by whichever thread sends them; None unless every body is str or bytes
        and the send would go straight to the wire. A str that is not Unicode text is refused
        here, at the call, as send_batch refuses it."""
        for body in bodies:  # one pass, no call per body: the loop's whole share of the work
            if isinstance(body, str):
                if not body.isascii():
                    C.check_text(body)
            elif not isinstance(body, bytes):
                return None
        route = self._direct_route(destination)
        if route is None:
            return None
        return RoutedBodies(route, *self._packed_blocks(), bodies, self._wire_options())

    def _direct_route(self, destination: Destination) -> bytes | None:
        """The where and how of a routed entry (codec.pack_routed without its record), or None
        when a send to ``destination`` would not go straight to the wire."""
        if self._listener is not None or not isinstance(destination, Destination) or self._policies():
            return None
        return C.pack_routed(destination.key, self._mode, self._priority, self._ttl, self._delay, b"")

    def _send_message(self, destination: Destination, message: Message, *, describe: bool) -> None:
        """send(destination, message) for forwarders (pyjms.api.forward): without describe, the
        message does not get the headers the provider assigned (message id, timestamp...),
        which JMS's send sets on it, and they are not brought back from the shim."""
        self._ctx.sends.key(destination)  # the session and the destination pass first
        self._send_checked(destination, message, self._policies(), describe=describe)

    def _forward_consumed(
        self, destination: Destination, drop: Collection[str], message_id: str, block: bytes
    ) -> bool:
        """forward's send of the message the context consumed last, copied in the JVM
        (Channel.forwardConsumed; ``block``: Message._forward_block), where nothing of this
        producer's would change it or see it: no policy, completion listener, delay, property or
        header of its own. False if it sent nothing: the caller then sends its own copy."""
        if self._delay or self._props or self._listener is not None or self._overrides() or self._policies():
            return False
        sends = self._ctx.sends
        key = sends.key(destination)
        return sends.forward_consumed(
            message_id, key, drop, block, self._wire_options(), f"send to {destination}"
        )

    def _send_checked(
        self, destination: Destination, message: Message, policies: tuple[SendPolicy, ...], *, describe: bool
    ) -> None:
        """A Message's send through ``policies`` (this producer's), once the context and
        destination passed."""
        out = self._outgoing(destination, [message], describe=describe)
        listener = self._listener
        if listener is not None:

            def completed(headers: Mapping[str, Any] | None, error: JMSRuntimeException | None) -> None:
                if headers is not None:
                    message._apply_sent_headers(headers)
                notify_listener(listener, message, error)

            out.completion = completed
        result = self._through(policies, out)
        if result.headers is not None:
            message._apply_sent_headers(result.headers)

    def _through(self, policies: tuple[SendPolicy, ...], send: OutgoingSend) -> SendResult:
        """Every policy checks the send, then the chain carries it out, ending at the wire."""
        for policy in policies:
            policy.check_send(send)

        def step(i: int, s: OutgoingSend) -> SendResult:
            if i == len(policies):
                return _to_wire(s)
            return policies[i].send(s, lambda changed: step(i + 1, changed))

        return step(0, send)

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
            ttl = checks.check_time_to_live(expiry)
        saved = (self._ttl, self._correlation_id, self._blocks)
        self._ttl, self._correlation_id, self._blocks, self._active = (
            ttl,
            request.get_jms_message_id(),
            None,
            None,
        )
        try:
            return self.send(reply_to, body)
        finally:
            (self._ttl, self._correlation_id, self._blocks), self._active = saved, None

    def send_batch(
        self,
        destination: Destination,
        bodies: Iterable[str | bytes],
        duplicate_ids: Sequence[str] | None = None,
    ) -> int:
        """Sends many str/bytes bodies with one JVM crossing; returns how many were sent.

        Every message gets this producer's options and properties. In a transacted context
        they commit together with the context. ``duplicate_ids``, one per body, give each
        message its duplicate-detection id (Message.set_duplicate_id), so that the same batch
        resent after an in-doubt commit arrives once.
        """
        sends = self._ctx.sends
        key = sends.key(destination)
        if not isinstance(bodies, (list, tuple)):
            bodies = list(bodies)  # read twice when policies apply
        headers, props = self._packed_blocks()
        per_message_props: list[bytes] | None = None
        if duplicate_ids is not None:
            ids = [check_duplicate_id(i) for i in duplicate_ids]
            if len(ids) != len(bodies):
                raise InvalidArgumentRuntimeException(
                    f"send_batch got {len(ids)} duplicate ids for {len(bodies)} bodies: give one per body",
                    values={"duplicate_ids": len(ids), "bodies": len(bodies)},
                )
            per_message_props = [
                C.pack_properties({**self._props, DUPLICATE_ID_PROPERTY: (C.T_STRING, i)}) for i in ids
            ]
        try:
            if per_message_props is None:
                records = C.pack_records(bodies, headers, props)
            else:  # each with its own duplicate id
                records = [
                    C.pack_records((body,), headers, own)[0]
                    for body, own in zip(bodies, per_message_props, strict=True)
                ]
        except TypeError:
            raise _not_str_or_bytes(bodies) from None
        if not records:
            return 0
        policies = self._policies()
        if policies:
            messages: list[Message] = [
                TextMessage(b) if isinstance(b, str) else BytesMessage(bytes(b)) for b in bodies
            ]
            for m, i in zip(messages, duplicate_ids or (), strict=False):
                m.set_duplicate_id(i)
            out = self._outgoing(destination, messages, describe=False)
            out._records = records  # what encoding the messages would give, made already
            return self._through(policies, out).count
        return sends.send_batch(
            key, records, self._wire_options(), f"send_batch of {len(records)} messages to {destination}"
        )


def _to_wire(send: OutgoingSend) -> SendResult:
    """The end of every send chain: the send's records go to the context's send path."""
    count, headers = send.context.sends.send_records(
        send.destination,
        send.records(),
        (send.delivery_mode, send.priority, send.time_to_live, send.delivery_delay, send.flags),
        describe=send.describe,
        completion=send.completion,
    )
    return SendResult(count, headers)


class RoutedBodies:
    """A NON_PERSISTENT send_batch's bodies to one destination, with its call's options, packed
    when they cross: on the thread that sends them, so that an event loop that queued the batch
    (pyjms.aio) is not held for the milliseconds that packing a thousand bodies takes. They pack
    as a batch's records (``records()``, for SendPath.send_batch), or as routed entries
    (``routed()``, codec.pack_routed) to cross with other routed sends. ``len()`` is the
    number of messages."""

    __slots__ = ("_route", "_headers", "_props", "_bodies", "options")

    def __init__(
        self, route: bytes, headers: bytes, props: bytes, bodies: list[str | bytes], options: SendOptions
    ) -> None:
        self._route = route
        self._headers = headers
        self._props = props
        self._bodies = bodies
        self.options = options

    @property
    def flags(self) -> int:
        return self.options[4]

    def __len__(self) -> int:
        return len(self._bodies)

    def records(self) -> list[bytes]:
        return C.pack_records(self._bodies, self._headers, self._props)

    def routed(self) -> list[bytes]:
        return C.pack_records(self._bodies, self._headers, self._props, self._route)


def _not_str_or_bytes(bodies: Sequence[Any]) -> MessageFormatRuntimeException:
    """send_batch's error for its first body that is neither str nor bytes-like."""
    index, body = next(
        (i, b) for i, b in enumerate(bodies) if not isinstance(b, (str, bytes, bytearray, memoryview))
    )
    return MessageFormatRuntimeException(
        f"send_batch takes str or bytes bodies; body #{index} is {type(body).__name__}"
    )


def _routed_record(body: str | bytes, headers: bytes, props: bytes) -> bytes:
    """A str or bytes body's record in a routed entry (after JMSProducer._direct_route)."""
    return C.pack_record(C.KIND_TEXT if isinstance(body, str) else C.KIND_BYTES, body, headers, props)
