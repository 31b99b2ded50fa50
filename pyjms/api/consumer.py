"""JMSConsumer: messages arrive as records and decode lazily. (QueueBrowser, in
pyjms.api.queue_browser, is importable from here too.)"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from pyjms.api import extension, observers
from pyjms.api.checks import JAVA_INT_MAX, check_positive_int, check_wait_ms
from pyjms.api.constants import (
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    INDIVIDUAL_ACKNOWLEDGE,
)
from pyjms.api.destination import Destination, Queue
from pyjms.api.duplicates import DUPLICATE_ID_BYTES, RECEIVED, duplicate_id_of
from pyjms.api.message import Message
from pyjms.api.queue_browser import QueueBrowser
from pyjms.bridge import codec as C
from pyjms.bridge.channel import Receiver
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    MessageFormatRuntimeException,
)

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext

__all__ = ["JMSConsumer", "QueueBrowser"]

_log = logging.getLogger("pyjms")
# a wait "forever" is made of slices so that Ctrl-C and close() are noticed
_SLICE_MS = 500
# receive_by_token waits this long for a message before asking the provider again
_TOKEN_SLICE_MS = 250
# "not asked yet" for a consumer's duplicate scope
_UNKNOWN: Any = object()


def _timeout(timeout_ms: int | timedelta | None) -> int | None:
    """None or 0 wait forever (as JMS receive(0) does); otherwise milliseconds, > 0."""
    if timeout_ms is None:
        return None
    if type(timeout_ms) is int and 0 < timeout_ms <= _SLICE_MS:  # the common case, checked first
        return timeout_ms
    return check_wait_ms(timeout_ms, "timeout_ms") or None


def _started() -> int:
    """When a receive began, for consumer observers (0 when none is installed: no clock read)."""
    return time.time_ns() if observers.consumer_observers() else 0


class JMSConsumer:
    """jakarta.jms.JMSConsumer, plus receive_batch and iteration."""

    def __init__(
        self, ctx: JMSContext, receiver: Receiver, destination: Destination, selector: str | None
    ) -> None:
        self._ctx = ctx
        self._r: Receiver | None = receiver  # None while parked for receive_by_token
        self._id = receiver.id
        # set for queue consumers: makes the wire consumer again after receive_by_token parked it
        self._reopen: Callable[[], Receiver] | None = None
        self._destination = destination
        self._selector = selector
        self._closed = False
        self._listener: Callable[[Message], None] | None = None
        self._ack = ctx.acknowledger
        # INDIVIDUAL_ACKNOWLEDGE: a resend dropped here is acknowledged at once (no later
        # acknowledgement covers a message that was never handed over)
        self._individual = ctx.get_session_mode() == INDIVIDUAL_ACKNOWLEDGE
        # where this consumer's resent messages are recognised (pyjms.api.duplicates): its
        # queue, or itself on a topic; None where the broker drops them itself
        self._duplicate_scope: Any = _UNKNOWN
        self._what_receive = f"receive from {destination}"  # made once: each receive names it

    def __repr__(self) -> str:
        return f"<JMSConsumer {self._destination} selector={self._selector!r}>"

    def get_message_selector(self) -> str | None:
        return self._selector

    @property
    def context(self) -> JMSContext:
        """The context this consumer receives in."""
        return self._ctx

    @property
    def destination(self) -> Destination:
        return self._destination

    def _check(self) -> None:
        if self._closed:
            raise IllegalStateRuntimeException("the consumer is closed")
        self._ctx.check_open()
        self._ctx.listeners.check_none()

    def _wire(self) -> Receiver:
        if self._r is None:
            assert self._reopen is not None
            self._r = self._reopen()
            self._id = self._r.id
        return self._r

    def wire_receiver(self) -> Receiver:
        """This consumer on the wire (pyjms.bridge.channel.Receiver), for features whose shim
        code takes messages off it in bulk (the delay processor's filer and mover)."""
        return self._wire()

    def _park(self) -> None:
        """Before a get by token: close the Java consumer, so that the messages the provider
        prefetched to it go back to the queue where the by-token consumer can reach them. The
        next ordinary receive makes it again."""
        if self._r is not None and self._reopen is not None and self._listener is None:
            r, self._r = self._r, None
            r.close(f"close consumer on {self._destination}")

    def _scope(self) -> Any:
        if self._duplicate_scope is _UNKNOWN:
            if self._ctx.provider.detects_duplicates(self._ctx):
                self._duplicate_scope = None
            elif isinstance(self._destination, Queue):
                self._duplicate_scope = self._destination.key
            else:
                self._duplicate_scope = ("consumer", id(self), self._destination.key)
        return self._duplicate_scope

    def set_drop_resends(self, drop: bool) -> JMSConsumer:
        """Whether this consumer drops resent messages where the broker does not
        (pyjms.api.duplicates; the default). A consumer that must see every copy, such as
        the DLQ handler's, turns it off."""
        if not isinstance(drop, bool):
            raise InvalidArgumentRuntimeException(f"set_drop_resends takes a bool, got {drop!r}")
        self._duplicate_scope = _UNKNOWN if drop else None
        return self

    def is_resend(self, message: Message) -> bool:
        """Whether a message this consumer received is a resend of one it or another receiver
        of this process took before (pyjms.api.duplicates): never where the broker detects
        duplicates itself."""
        duplicate_id = duplicate_id_of(message)
        if duplicate_id is None:
            return False
        scope = self._scope()
        if scope is None:
            return False
        return RECEIVED.is_resend(scope, duplicate_id, message.wire_headers().get("message_id"))

    def is_resend_by_ids(self, duplicate_id: str, message_id: str | None) -> bool:
        """is_resend for a message known only by its duplicate id and provider message id
        (a bulk reader that does not make Message objects: the Spark reader's Arrow columns)."""
        scope = self._scope()
        return scope is not None and RECEIVED.is_resend(scope, duplicate_id, message_id)

    def _one(self, wait_ms: int, ack: bool = True) -> Message | None:
        deadline = time.monotonic() + wait_ms / 1000.0
        while True:
            raw = (self._r or self._wire()).receive(wait_ms, ack, self._what_receive)
            if raw is None:
                return None
            m = Message.from_record(C.IncomingRecord(raw, 0), self._ack)
            if not self.is_resend(m):
                return m
            if not ack:
                self._wire().ack_last()  # dropped: consumed like any message the caller took
            elif self._individual:
                self._ctx.acknowledge_messages((m,))
            wait_ms = max(int((deadline - time.monotonic()) * 1000), 0) if wait_ms else 0

    def _wait(self, timeout_ms: int | None, ack: bool = True) -> Message | None:
        if timeout_ms is not None and timeout_ms <= _SLICE_MS:
            return self._one(timeout_ms, ack)
        # a long wait (None: forever) crosses in slices, so that Ctrl-C and close() are noticed
        # and no provider adds a huge timeout to its clock
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        while True:
            left = _SLICE_MS if deadline is None else int((deadline - time.monotonic()) * 1000)
            if left <= 0:
                return None
            m = self._one(min(left, _SLICE_MS), ack)
            if m is not None:
                return m
            self._check()

    def receive(self, timeout_ms: int | timedelta | None = None) -> Message | None:
        """The next message; waits up to timeout_ms (None or 0: until one arrives)."""
        self._check()
        started = _started()
        m = self._wait(_timeout(timeout_ms))
        if m is not None and started:
            observers.tell_received(self, (m,), started)
        return m

    def receive_no_wait(self) -> Message | None:
        self._check()
        started = _started()
        m = self._one(0)
        if m is not None and started:
            observers.tell_received(self, (m,), started)
        return m

    def receive_body(self, body_type: type, timeout_ms: int | timedelta | None = None) -> Any:
        """The next message's body as body_type (str, bytes, dict), or None if none came.

        If the body cannot be returned as body_type, MessageFormatRuntimeException is raised
        and, in AUTO/DUPS_OK modes, the message stays unacknowledged and is redelivered.
        """
        self._check()
        started = _started()
        auto = self._ctx.get_session_mode() in (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE)
        if auto and self._ctx.client_does_jms2():
            # the client acknowledges as it receives: only its own receiveBody can leave a
            # message it cannot convert (in the other modes the application acknowledges)
            return self._client_receive_body(body_type, _timeout(timeout_ms), started)
        m = self._wait(_timeout(timeout_ms), ack=not auto)
        if m is None:
            return None
        if not m.is_body_assignable_to(body_type):
            if auto:
                self._ctx.channel.recover()
            raise MessageFormatRuntimeException(
                f"the body of {type(m).__name__} {m.get_jms_message_id()} cannot be returned as {body_type.__name__}"
            )
        if auto:
            self._wire().ack_last()
        if started:
            observers.tell_received(self, (m,), started)
        return m.get_body(body_type)

    _BODY_KINDS = {
        str: C.KIND_TEXT,
        bytes: C.KIND_BYTES,
        bytearray: C.KIND_BYTES,
        dict: C.KIND_MAP,
        Mapping: C.KIND_MAP,
        object: C.KIND_MESSAGE,
    }

    def _client_receive_body(self, body_type: type, timeout_ms: int | None, started: int) -> Any:
        """receive_body by the client's own receiveBody (Provider.jms2Client), which leaves a
        message whose body is not a body_type unconsumed in AUTO/DUPS_OK modes."""
        kind = self._BODY_KINDS.get(body_type)
        if kind is None:
            raise MessageFormatRuntimeException(
                f"receive_body returns str, bytes, dict or object, not {body_type!r}"
            )
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        while True:  # in slices, so that Ctrl-C and close() are noticed (see _wait)
            wait = _SLICE_MS
            if deadline is not None:
                wait = max(0, min(_SLICE_MS, int((deadline - time.monotonic()) * 1000)))
            raw = self._wire().receive_body(
                kind, wait, f"receive_body({body_type.__name__}) from {self._destination}"
            )
            if raw is not None:
                m = Message._received(C.IncomingRecord(raw, 0), None)
                if started:
                    observers.tell_received(self, (m,), started)
                body = m.get_body()
                return bytearray(body) if body_type is bytearray else body
            if deadline is not None and time.monotonic() >= deadline:
                return None
            self._check()

    def receive_batch(self, max_messages: int, timeout_ms: int | timedelta = 1000) -> list[Message]:
        """Up to max_messages with one JVM crossing: waits up to timeout_ms for the first,
        then takes what is already there."""
        self._check()
        # "up to" a count no crossing can ask for is as many as there are
        most = min(check_positive_int(max_messages, "max_messages"), JAVA_INT_MAX)
        wait = _timeout(timeout_ms) or 0
        started = _started()
        ack = self._ack
        received = Message.from_record
        deadline = time.monotonic() + wait / 1000.0
        while True:
            # a long wait crosses in slices (see _wait)
            raw = self._wire().receive_batch(
                most, min(wait, _SLICE_MS), f"receive_batch from {self._destination}"
            )
            got = [received(rec, ack) for rec in C.iter_batch(raw)]
            if got and DUPLICATE_ID_BYTES in raw:
                fresh = [m for m in got if not self.is_resend(m)]
                if self._individual and len(fresh) < len(got):
                    kept = {id(m) for m in fresh}
                    self._ctx.acknowledge_messages([m for m in got if id(m) not in kept])
                got = fresh
            wait = max(int((deadline - time.monotonic()) * 1000), 0)
            if not got and wait > 0:  # nothing yet, or only resends: wait what is left of timeout_ms
                self._check()
                continue
            if got and started:
                observers.tell_received(self, got, started)
            return got

    def receive_by_token(self, token: str, timeout_ms: int | timedelta = 1000) -> Message:
        """Gets exactly the message a marking browser returned with this token (IBM MQ's
        MQMO_MATCH_MSG_TOKEN), destructively and in this context's transaction.

        Provided by pyjms.browse (browse with mark), which tells the mark service of the get:
        raises NoMessageAvailable (MQRC_NO_MSG_AVAILABLE, 2033) if the message is not on the
        queue within timeout_ms, or NoMessageUnderCursor (2034) if a marking browser in this
        process returned it and it has expired since (E12).
        """
        return cast("Message", extension.implementation("receive_by_token")(self, token, timeout_ms))

    def receive_by_tokens(self, tokens: Sequence[str], timeout_ms: int | timedelta = 1000) -> list[Message]:
        """Gets the messages with these tokens that are on the queue (see receive_by_token);
        those that are gone are simply not in the list. Provided by pyjms.browse."""
        return cast("list[Message]", extension.implementation("receive_by_tokens")(self, tokens, timeout_ms))

    def receive_by_message_ids(
        self, message_ids: Sequence[str], timeout_ms: int | timedelta = 1000
    ) -> list[Message]:
        """Gets the messages with these provider message ids (Message.get_message_token: the
        JMSMessageID as on the queue now) that are on the queue, with one consumer, waiting up
        to timeout_ms for them all; those that are gone are simply not in the list.

        Destructive and in this context's transaction (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE or
        SESSION_TRANSACTED); for a consumer on a Queue.
        """
        self._check()
        if not isinstance(self._destination, Queue):
            raise InvalidDestinationRuntimeException(
                f"receive_by_token needs a consumer on a Queue, not {self._destination}"
            )
        if self._ctx.get_session_mode() in (CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE):
            raise IllegalStateRuntimeException(
                "receive_by_token needs an AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE or SESSION_TRANSACTED context"
            )
        wanted = list(dict.fromkeys(message_ids))
        if not wanted:
            return []
        started = _started()
        self._park()
        wait_ms = _timeout(timeout_ms) or 0
        ctx = self._ctx
        key = ctx.wire_key(self._destination)
        what = f"receive_by_token from {self._destination}"
        got: list[Message] = []
        deadline = time.monotonic() + wait_ms / 1000.0
        while True:
            # One consumer selecting exactly the missing messages. If a slice passes with none
            # of them, a new consumer is made: a provider may be slow to dispatch to a
            # consumer that is one of many coming and going on a queue (ActiveMQ is).
            have = {m.get_message_token() for m in got}
            missing = [t for t in wanted if t not in have]
            if not missing:
                break
            selector = self._selecting_ids(missing)
            # it selects exactly the missing messages, so it may be sent them all at once
            r = ctx.channel.prefetching_consumer(
                key, selector, len(missing), f"receive_by_token on {self._destination}"
            )
            try:
                while len(got) < len(wanted):
                    left_ms = int((deadline - time.monotonic()) * 1000)
                    raw = r.receive_batch(len(wanted) - len(got), max(min(left_ms, _TOKEN_SLICE_MS), 1), what)
                    batch = [Message.from_record(rec, None) for rec in C.iter_batch(raw)]
                    if not batch:
                        break
                    got.extend(batch)
            finally:
                r.close(f"close receive_by_token consumer on {self._destination}")
            if time.monotonic() >= deadline:
                break
        if started:
            observers.tell_received(self, got, started)
        return got

    def _selecting_ids(self, message_ids: Sequence[str]) -> str:
        """A selector of exactly these messages among those this consumer selects."""
        ids = ", ".join("'" + t.replace("'", "''") + "'" for t in message_ids)
        selector = f"JMSMessageID IN ({ids})"
        return f"({self._selector}) AND {selector}" if self._selector else selector

    def consumer_of_messages(self, message_ids: Sequence[str]) -> JMSConsumer:
        """A consumer in this one's context of exactly these messages of its queue (provider
        message ids, as receive_by_message_ids takes), to which the provider may send them all
        at once and nothing else: for features that get a known set of messages through one
        consumer (pyjms.browse's kept gets). Unlike create_consumer's queue consumers, it takes
        its messages from its creation: parked and made again, it would hand them all back to
        the queue, where the provider then walks its whole backlog as redeliveries."""
        self._check()
        if not isinstance(self._destination, Queue):
            raise InvalidDestinationRuntimeException(
                f"a consumer of messages needs a Queue, not {self._destination}"
            )
        wanted = list(dict.fromkeys(message_ids))
        ctx = self._ctx
        selector = self._selecting_ids(wanted)
        receiver = ctx.channel.prefetching_consumer(
            ctx.wire_key(self._destination),
            selector,
            len(wanted),
            f"create_consumer({self._destination}, selector={selector[:80]!r}...)",
        )
        return JMSConsumer(ctx, receiver, self._destination, selector)

    def messages(self, idle_timeout_ms: int | timedelta = 1000) -> Iterator[Message]:
        """Messages until none arrives for idle_timeout_ms."""
        wait = _timeout(idle_timeout_ms)
        while True:
            self._check()
            started = _started()
            m = self._wait(wait)
            if m is None:
                return
            if started:
                observers.tell_received(self, (m,), started)
            yield m

    def __iter__(self) -> Iterator[Message]:
        """Messages as they arrive, until the consumer or its context is closed."""
        started = _started()
        while not self._closed and not self._ctx.closed:
            m = self._one(_SLICE_MS)
            if m is not None:
                if started:
                    observers.tell_received(self, (m,), started)
                yield m
                started = _started()

    def set_message_listener(self, listener: Callable[[Message], None] | None) -> None:
        """Delivers messages to listener(message) on the context's dispatch thread.

        In AUTO/DUPS_OK modes a message is acknowledged when the listener returns; if it
        raises, the message is redelivered. None stops asynchronous delivery.
        """
        if self._closed:
            raise IllegalStateRuntimeException("the consumer is closed")
        self._ctx.check_open()
        if listener is not None and not callable(listener):
            raise InvalidArgumentRuntimeException(f"a message listener must be callable, got {listener!r}")
        if listener is not None and self._listener is None:
            self._wire().listen()
        elif listener is None and self._listener is not None and self._r is not None:
            self._r.unlisten()
        self._listener = listener
        self._ctx.listeners.listen(self, listener is not None)

    def get_message_listener(self) -> Callable[[Message], None] | None:
        return self._listener

    @property
    def receiver_id(self) -> int:
        """The shim's id of this consumer's wire receiver (its listened messages carry it)."""
        return self._id

    def listener_failed(self, error: BaseException) -> None:
        """The listener raised (pyjms.api.dispatch): the message is redelivered."""
        _log.error(
            "message listener on %s failed; the message will be redelivered: %r", self._destination, error
        )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._ctx.listeners.listen(self, False)
        if not self._ctx.closed:
            if self._r is not None:
                self._r.close(f"close consumer on {self._destination}")

    def __enter__(self) -> JMSConsumer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
