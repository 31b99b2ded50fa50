"""FakeChannel: pyjms.bridge.channel.Channel's contract, kept by Python and an in-memory broker.

The real channel hands packed records to the Java shim (org.pyjms.shim.Channel, Receiver,
Browser), which decodes them into provider messages (Codec.decode) and encodes what it
receives (Codec.encode). This fake speaks the same byte formats, with pyjms.bridge.codec's
readers and writers, so that everything above the wire can be unit-tested without a JVM, as
Qpid JMS tests its client against its MockProvider:

- FakeBroker holds queues and topics (each subscription a queue of its own), message ids and a
  clock (``now_ms``: tests may set it), and what a test asks of the provider (``Capabilities``);
- FakeChannel is one session: AUTO/CLIENT/DUPS_OK acknowledgement or a transaction, sends that
  apply the send flags and delivery delay as Channel.java does, consumers, browsers, listeners;
- FakeReceiver and FakeBrowser are the shim's Receiver and Browser.

What the fake does not do: message selectors other than by JMSMessageID, which pyjms's own
components use (it refuses the others), poison quarantine, a broken connection. Those stay
with the real-broker tests.
"""

from __future__ import annotations

import itertools
import queue
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from pyjms.api.constants import (  # the session modes a channel is opened in (jakarta.jms.Session)
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    INDIVIDUAL_ACKNOWLEDGE,
    SESSION_TRANSACTED,
)
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    MessageFormatRuntimeException,
)

_T = TypeVar("_T")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_I8 = struct.Struct(">b")

#: an incoming record's length, kind, flags and body offset, before its blocks
_RECORD_HEAD = 10
#: message ids are unique in the process, as a real broker's are (pyjms.api.duplicates keeps
#: what it received by id, across contexts and so across tests)
_MESSAGE_IDS = itertools.count(1)
#: the JMSXDeliveryCount a message has on its first delivery
FIRST_DELIVERY = 1


# ---------------------------------------------------------------------------- messages


@dataclass
class StoredMessage:
    """A message as the broker holds it: what Codec.decode made of a record, and its headers."""

    kind: int
    body: Any  # str (text), bytes, dict name -> (tag, value) (map), None (no body)
    properties: dict[str, tuple[int, Any]] = field(default_factory=dict)
    message_id: str | None = None
    timestamp: int = 0
    correlation_id: str | None = None
    reply_to: str | None = None
    destination: str | None = None
    delivery_mode: int = 2
    redelivered: bool = False
    jms_type: str | None = None
    expiration: int = 0
    delivery_time: int = 0
    priority: int = 4
    delivery_count: int = 0

    def is_expired(self, now_ms: int) -> bool:
        """As the broker and Receiver.expired see it: the JMS header, or pyjms's exact time."""
        exact = self.properties.get(contract.EXPIRATION)
        expiration = exact[1] if exact is not None else self.expiration
        return expiration != 0 and now_ms >= expiration

    def text(self) -> str | None:
        """The text body (for tests that look at what a queue holds)."""
        return self.body if self.kind == C.KIND_TEXT else None


def decode_record(buf: bytes | memoryview, pos: int = 0) -> tuple[StoredMessage, int]:
    """An outgoing record (Python to JMS) as Codec.decode reads it; the position after it."""
    kind, flags = buf[pos], buf[pos + 1]
    pos += 2
    correlation_id = jms_type = reply_to = None
    if flags & C.FLAG_HEADERS:
        correlation_id, pos = C.read_string(buf, pos)
        jms_type, pos = C.read_string(buf, pos)
        reply_to, pos = C.read_string(buf, pos)
    properties: dict[str, tuple[int, Any]] = {}
    if flags & C.FLAG_PROPERTIES:
        properties, pos = C.read_tagged_map(buf, pos)
    body: Any = None
    if kind == C.KIND_TEXT:
        body, pos = C.read_string(buf, pos)
    elif kind == C.KIND_BYTES:
        (n,) = _I32.unpack_from(buf, pos)
        body, pos = bytes(buf[pos + 4 : pos + 4 + n]), pos + 4 + n
    elif kind == C.KIND_MAP:
        body, pos = C.read_tagged_map(buf, pos)
    elif kind != C.KIND_MESSAGE:
        raise ValueError(f"cannot send a message of kind {kind}")  # as Codec.decode refuses it
    message = StoredMessage(
        kind, body, properties, correlation_id=correlation_id, jms_type=jms_type, reply_to=reply_to
    )
    return message, pos


def _tagged(tag: int, value: Any) -> bytes:
    return bytes((C.T_NULL,)) if tag == C.T_NULL else C.pack_value(tag, value)


def _tagged_map(entries: dict[str, tuple[int, Any]]) -> bytes:
    return _I32.pack(len(entries)) + b"".join(C.pack_string(n) + _tagged(*tv) for n, tv in entries.items())


def _carried(m: StoredMessage, name: str, otherwise: int) -> int:
    value = m.properties.get(name)
    return value[1] if value is not None and value[0] == C.T_LONG else otherwise


def encode_headers(m: StoredMessage) -> bytes:
    """The full header block, as Codec.encodeHeaders writes it (pyjms's own times win)."""
    return b"".join(
        (
            C.pack_string(m.message_id),
            _I64.pack(_carried(m, contract.SEND_TIME, m.timestamp)),
            C.pack_string(m.correlation_id),
            C.pack_string(m.reply_to),
            C.pack_string(m.destination),
            _I8.pack(m.delivery_mode),
            _I8.pack(1 if m.redelivered else 0),
            C.pack_string(m.jms_type),
            _I64.pack(_carried(m, contract.EXPIRATION, m.expiration)),
            _I64.pack(_carried(m, contract.DELIVERY_TIME, m.delivery_time)),
            _I8.pack(m.priority),
            _I32.pack(m.delivery_count),
        )
    )


def _body(kind: int, body: Any) -> bytes:
    if kind == C.KIND_TEXT:
        return C.pack_string(body)
    if kind == C.KIND_BYTES:
        return _I32.pack(len(body)) + bytes(body)
    if kind == C.KIND_MAP:
        return _tagged_map(body)
    return b""  # no body crosses: object and stream bodies are never deserialized


def _record(kind: int, flags: int, blocks: bytes, body: bytes) -> bytes:
    body_offset = _RECORD_HEAD + len(blocks)
    return _I32.pack(body_offset + len(body)) + bytes((kind, flags)) + _I32.pack(body_offset) + blocks + body


def encode_record(m: StoredMessage) -> bytes:
    """An incoming record (JMS to Python) as Codec.encode writes it."""
    blocks = encode_headers(m) + _tagged_map(m.properties)
    return _record(m.kind, C.FLAG_HEADERS | C.FLAG_PROPERTIES, blocks, _body(m.kind, m.body))


def encode_body_record(kind: int, body: Any) -> bytes:
    """A body alone as a record without headers or properties (Codec.encodeBody)."""
    return _record(kind, 0, b"", _body(kind, body))


def encode_batch(messages: Iterable[StoredMessage]) -> bytes:
    records = [encode_record(m) for m in messages]
    return _I32.pack(len(records)) + b"".join(records)


# ---------------------------------------------------------------------------- selectors

#: which messages a consumer or browser takes (None: all)
Selector = Callable[[StoredMessage], bool]
_QUOTED = r"'(?:[^']|'')*'"
_ID_LIST = re.compile(rf"^\s*JMSMessageID\s+IN\s*\(\s*({_QUOTED}(?:\s*,\s*{_QUOTED})*)\s*\)\s*$")
_NOT = re.compile(r"^\s*NOT\s*\((.*)\)\s*$", re.DOTALL)
_ONE_ID = re.compile(rf"^\s*JMSMessageID\s*=\s*({_QUOTED})\s*$")


def selector_of(text: str | None, what: str) -> Selector | None:
    """The selectors pyjms's own components make, by message id: ``JMSMessageID = 'x'``,
    ``JMSMessageID IN ('x', ...)`` and ``NOT (...)`` of one. Any other is refused, never ignored."""
    if text is None:
        return None
    negated = _NOT.match(text)
    if negated is not None:
        inner = selector_of(negated.group(1), what)
        assert inner is not None
        return lambda m: not inner(m)
    found = _ID_LIST.match(text) or _ONE_ID.match(text)
    if found is None:
        raise NotImplementedError(
            f"{what}: the fake channel evaluates only JMSMessageID selectors, not {text!r}"
        )
    ids = {quoted[1:-1].replace("''", "'") for quoted in re.findall(_QUOTED, found.group(1))}
    return lambda m: m.message_id in ids


# ---------------------------------------------------------------------------- the broker


class ManualClock:
    """A broker clock (FakeBroker's now_ms) that moves only when a test sets ``now``."""

    def __init__(self, now: int = 1_800_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@dataclass(frozen=True)
class Capabilities:
    """What the fake provider answers to the channel's capability questions."""

    provider_name: str = "fake"
    native_delay: bool = True
    scheduler_known: bool = False
    scheduler_markable: bool = False
    native_delay_known: bool = True
    jms2_client: bool = True
    sends_async: bool = False
    lists_queues: bool = True


@dataclass
class _Subscription:
    name: str | None
    topic: str
    durable: bool
    client_id: str | None
    queue: deque[StoredMessage] = field(default_factory=deque)
    consumers: int = 0


class FakeBroker:
    """Queues and topics in memory, shared by every channel opened on it."""

    def __init__(self, capabilities: Capabilities = Capabilities(), now_ms: Callable[[], int] | None = None):
        self.capabilities = capabilities
        self.now_ms: Callable[[], int] = now_ms or (lambda: int(time.time() * 1000))
        self.queues: dict[str, deque[StoredMessage]] = {}
        self.subscriptions: list[_Subscription] = []
        self.temporaries: set[str] = set()
        self.sent: list[StoredMessage] = []  # every message as it reached the broker, for tests
        #: destinations whose sends fail, with the error each raises (refuse_sends)
        self.refused: dict[str, JMSRuntimeException] = {}
        #: the queues whose consumers are exclusive, by name prefix: as pyjms brokers make
        #: PYJMS.LEADER.* (pyjms.api.leadership), the oldest open consumer gets every message
        self.exclusive_prefixes: tuple[str, ...] = (contract.LEADER_PREFIX,)
        self._exclusive_consumers: dict[int, list[FakeReceiver]] = {}  # by id(source)
        self.changed = threading.Condition()
        self._temp_names = itertools.count(1)

    def open_channel(self, session_mode: int = AUTO_ACKNOWLEDGE, client_id: str | None = None) -> FakeChannel:
        """A channel on a new connection (Channel.open)."""
        return FakeChannel(self, _Connection(client_id), session_mode)

    # -------------------------------------------------------------- what tests look at

    def queue(self, name: str) -> list[StoredMessage]:
        """The messages waiting on a queue (by name or key), oldest first."""
        key = name if "://" in name else f"queue://{name}"
        return list(self.queues.get(key, ()))

    def refuse_sends(self, key: str, error: JMSRuntimeException | None) -> None:
        """Makes every send to a destination fail with ``error`` (None: accept them again)."""
        if error is None:
            self.refused.pop(key, None)
        else:
            self.refused[key] = error

    def put(self, key: str, message: StoredMessage) -> None:
        """Puts a message on a destination as another client's send would (given its headers)."""
        with self.changed:
            self._deliver(key, message)

    # -------------------------------------------------------------- the broker's work

    def next_id(self) -> str:
        return f"ID:fake-{next(_MESSAGE_IDS)}"

    def temporary(self, scheme: str) -> str:
        key = f"{scheme}://fake-temp-{next(self._temp_names)}"
        self.temporaries.add(key)
        if scheme == "temp-queue":
            self.queues[key] = deque()
        return key

    def _deliver(self, key: str, message: StoredMessage) -> None:
        """Called holding ``changed``: the message reaches its queue or topic's subscriptions."""
        scheme = key.partition("://")[0]
        if scheme.startswith("temp-") and key not in self.temporaries:
            raise InvalidDestinationRuntimeException(f"{key} was deleted")
        self.sent.append(message)
        if scheme in ("topic", "temp-topic"):
            for sub in self.subscriptions:
                if sub.topic == key:
                    sub.queue.append(replace(message, properties=dict(message.properties)))
        else:
            self.queues.setdefault(key, deque()).append(message)
        self.changed.notify_all()

    def _take(self, source: deque[StoredMessage], selector: Selector | None = None) -> StoredMessage | None:
        """Called holding ``changed``: the first deliverable message the selector takes, expired
        ones dropped (a receiver never sees one: E03), highest priority first as a broker may
        order them."""
        now = self.now_ms()
        for m in [m for m in source if m.is_expired(now)]:
            source.remove(m)
        ready = [m for m in source if m.delivery_time <= now and (selector is None or selector(m))]
        if not ready:
            return None
        chosen = max(ready, key=lambda m: m.priority)  # max keeps the oldest of equal priority
        source.remove(chosen)
        chosen.delivery_count += 1
        chosen.redelivered = chosen.delivery_count > FIRST_DELIVERY
        return chosen

    def _exclusive(self, key: str) -> bool:
        return key.startswith("queue://") and key[len("queue://") :].startswith(self.exclusive_prefixes)

    def _opened(self, receiver: FakeReceiver, key: str) -> None:
        if self._exclusive(key):
            self._exclusive_consumers.setdefault(id(receiver.source), []).append(receiver)

    def _closed(self, receiver: FakeReceiver) -> None:
        consumers = self._exclusive_consumers.get(id(receiver.source))
        if consumers is not None and receiver in consumers:
            consumers.remove(receiver)
            self.changed.notify_all()  # the next consumer may take over

    def _may_take(self, receiver: FakeReceiver) -> bool:
        """Whether the broker dispatches to this receiver: on an exclusive queue, only the oldest."""
        consumers = self._exclusive_consumers.get(id(receiver.source))
        return not consumers or consumers[0] is receiver

    def _wait(
        self, take: Callable[[], _T | None], timeout_ms: int, stop: Callable[[], bool] | None = None
    ) -> _T | None:
        """take() under the lock, waiting up to timeout_ms (<= 0: no wait) for it to find one;
        a wait ends early when ``stop()`` says so (its channel closed)."""
        deadline = time.monotonic() + max(0, timeout_ms) / 1000
        with self.changed:
            while True:
                found = take()
                remaining = deadline - time.monotonic()
                if found is not None or remaining <= 0 or (stop is not None and stop()):
                    return found
                self.changed.wait(remaining)


class _Connection:
    """What sibling channels share: the client id and whether delivery is started."""

    def __init__(self, client_id: str | None) -> None:
        self.client_id = client_id
        self.started = False
        self.users = 1


# ---------------------------------------------------------------------------- the session


class FakeChannel:
    """One session on the fake broker, with pyjms.bridge.channel.Channel's methods."""

    def __init__(self, broker: FakeBroker, connection: _Connection, session_mode: int) -> None:
        self.broker = broker
        self.connection = connection
        self.session_mode = session_mode
        self.closed = False
        self.quarantined_at_commit = 0
        self.dead_letter_queue = "queue://" + contract.DEAD_LETTER_QUEUE
        self.put_appl_name = "pyjms"
        #: consumed and not yet acknowledged (or committed): where each came from
        self.unacked: list[tuple[StoredMessage, deque[StoredMessage]]] = []
        self.last_consumed: StoredMessage | None = None
        self._pending_sends: list[tuple[str, StoredMessage]] = []  # a transaction's, until commit
        self._receivers: dict[int, FakeReceiver] = {}
        self._receiver_ids = itertools.count(1)
        self._listened: tuple[FakeReceiver, StoredMessage] | None = None
        self._completions: queue.Queue[tuple[int, tuple[bytes | None, Any]]] = queue.Queue()

    @property
    def transacted(self) -> bool:
        return self.session_mode == SESSION_TRANSACTED

    def sibling(self, session_mode: int, what: str) -> FakeChannel:
        self._check_open(what)
        self.connection.users += 1
        return FakeChannel(self.broker, self.connection, session_mode)

    def translated(self, jexc: BaseException, what: str) -> JMSRuntimeException:
        return JMSRuntimeException(f"{what}: {jexc}")

    def call(self, fn: Callable[[], _T], what: str) -> _T:
        self._check_open(what)
        return fn()

    def java_string(self, text: str) -> str:
        return text  # the fake's keys are Python strings

    def _check_open(self, what: str) -> None:
        if self.closed:
            raise IllegalStateRuntimeException(f"{what}: the session is closed")

    # -------------------------------------------------------------- the provider's answers

    def provider_name(self) -> str:
        return self.broker.capabilities.provider_name

    def supports_native_delay(self) -> bool:
        return self.broker.capabilities.native_delay

    def scheduler_known(self) -> bool:
        return self.broker.capabilities.scheduler_known

    def scheduler_markable(self) -> bool:
        return self.broker.capabilities.scheduler_markable

    def native_delay_known(self) -> bool:
        return self.broker.capabilities.native_delay_known

    def jms2_client(self) -> bool:
        return self.broker.capabilities.jms2_client

    def sends_async(self) -> bool:
        return self.broker.capabilities.sends_async

    def queue_names(self, prefix: str, wait_ms: int, what: str) -> list[str] | None:
        self._check_open(what)
        self._started()
        if not self.broker.capabilities.lists_queues:
            return None
        names = (k.partition("://")[2] for k in self.broker.queues if k.startswith("queue://"))
        return sorted(n for n in names if n.startswith(prefix))

    def non_empty_queues(self, names: list[str], what: str) -> list[str]:
        self._check_open(what)
        self._started()
        return [n for n in names if self.broker.queues.get(f"queue://{n}")]

    def set_dead_letter_queue(self, key: str, put_appl_name: str = "pyjms") -> None:
        self.dead_letter_queue, self.put_appl_name = key, put_appl_name

    def quarantined_count(self) -> int:
        return 0  # the fake carries no poison

    # -------------------------------------------------------------- the connection

    def client_id(self) -> str | None:
        self._check_open("get_client_id")
        return self.connection.client_id

    def set_client_id(self, client_id: str) -> None:
        self._check_open("set_client_id")
        if self.connection.client_id is not None:
            raise IllegalStateRuntimeException("set_client_id: the client id is set already")
        self.connection.client_id = client_id

    def start(self) -> None:
        self._check_open("start")
        self._started()

    def _started(self) -> None:
        """JMS 2.0's autostart, as the shim does it: consumers and browsers start the connection."""
        with self.broker.changed:
            self.connection.started = True
            self.broker.changed.notify_all()

    def stop(self) -> None:
        self._check_open("stop")
        self.connection.started = False

    def close(self) -> None:
        if self.closed:
            return
        for receiver in list(self._receivers.values()):
            receiver.close()
        with self.broker.changed:
            self._give_back()  # what was consumed and not acknowledged is redelivered
            self._pending_sends.clear()
            self.closed = True
            self.broker.changed.notify_all()  # a listener's wait ends
        self.connection.users -= 1

    # -------------------------------------------------------------- acknowledgement, transactions

    def commit(self) -> None:
        self._check_open("commit")
        if not self.transacted:
            raise IllegalStateRuntimeException("commit: the session is not transacted")
        with self.broker.changed:
            for key, message in self._pending_sends:
                self.broker._deliver(key, message)
            self._pending_sends.clear()
            self.unacked.clear()
        self.quarantined_at_commit = 0

    def lost_before_last_commit(self) -> bool:
        return False

    def connection_failure(self) -> JMSRuntimeException | None:
        """The fake's connection never fails on its own."""
        return None

    def rollback(self) -> None:
        self._check_open("rollback")
        if not self.transacted:
            raise IllegalStateRuntimeException("rollback: the session is not transacted")
        with self.broker.changed:
            self._pending_sends.clear()
            self._give_back()

    def recover(self) -> None:
        self._check_open("recover")
        if self.transacted:
            raise IllegalStateRuntimeException("recover: the session is transacted")
        with self.broker.changed:
            self._give_back()

    def acknowledge(self) -> None:
        """CLIENT_ACKNOWLEDGE: every message the session consumed (JMS 2.0)."""
        self._check_open("acknowledge")
        if self.session_mode in (CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE):
            self.unacked.clear()

    def acknowledge_messages(self, message_ids: list[str | None]) -> None:
        """INDIVIDUAL_ACKNOWLEDGE: for each id, the oldest unacknowledged message with it."""
        self._check_open("acknowledge")
        if self.session_mode != INDIVIDUAL_ACKNOWLEDGE:
            raise IllegalStateRuntimeException(
                "acknowledging single messages needs an INDIVIDUAL_ACKNOWLEDGE session"
            )
        with self.broker.changed:
            for message_id in message_ids:
                for i, (message, _source) in enumerate(self.unacked):
                    if message.message_id == message_id:
                        del self.unacked[i]
                        break

    def _give_back(self) -> None:
        """Called holding the broker's lock: the unacknowledged messages go back to where they
        came from, in their order, to be redelivered."""
        for message, source in reversed(self.unacked):
            source.appendleft(message)
        self.unacked.clear()
        self.broker.changed.notify_all()

    def _consumed(self, message: StoredMessage, source: deque[StoredMessage], ack: bool) -> None:
        """Called holding the broker's lock, for each message handed to Python."""
        self.last_consumed = message
        auto = self.session_mode in (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE)
        if not (auto and ack):
            self.unacked.append((message, source))

    def ack_last(self) -> None:
        """Receiver.ackLast: what an auto-acknowledge session received with ack = False."""
        if self.session_mode in (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE):
            self.unacked.clear()

    # -------------------------------------------------------------- sending

    def _stamp(
        self, message: StoredMessage, key: str, mode: int, priority: int, ttl: int, delay: int, flags: int
    ) -> StoredMessage:
        """What the client and Channel.delay do to a message sent: headers, delay, expiration."""
        now = self.broker.now_ms()
        message.destination = key
        message.delivery_mode = mode
        message.priority = priority
        message.message_id = None if flags & contract.SEND_NO_MESSAGE_ID else self.broker.next_id()
        message.timestamp = 0 if flags & contract.SEND_NO_TIMESTAMP else now
        message.expiration = now + ttl if ttl > 0 else 0
        message.delivery_time = now
        if delay > 0:
            if flags & contract.SEND_DELAY_NATIVE:
                message.delivery_time = now + delay  # the client's own delay, carried as JMSDeliveryTime
            elif flags & contract.SEND_DELAY_SCHEDULER:
                # the broker's scheduler holds it, then sends it anew: JMSTimestamp restamped
                message.delivery_time = message.timestamp = now + delay
                message.properties[contract.DELIVERY_TIME] = (C.T_LONG, now + delay)
                message.properties[contract.SEND_TIME] = (C.T_LONG, now)
                if ttl > 0:
                    message.properties[contract.EXPIRATION] = (C.T_LONG, now + ttl)
            else:  # only recorded: delivered at once (a staging queue's delay processor holds it)
                message.properties[contract.DELIVERY_TIME] = (C.T_LONG, now + delay)
        return message

    def _send(self, key: str, message: StoredMessage, *options: int) -> StoredMessage:
        refused = self.broker.refused.get(key)
        if refused is not None:
            raise refused
        self._stamp(message, key, *options)
        with self.broker.changed:
            if self.transacted:
                self._pending_sends.append((key, message))
            else:
                self.broker._deliver(key, message)
        return message

    def send(
        self, key: str, record: bytes, mode: int, priority: int, ttl: int, delay: int, flags: int, what: str
    ) -> None:
        self._check_open(what)
        self._send(key, decode_record(record)[0], mode, priority, ttl, delay, flags)

    def send_described(
        self, key: str, record: bytes, mode: int, priority: int, ttl: int, delay: int, flags: int, what: str
    ) -> bytes:
        self._check_open(what)
        return encode_headers(self._send(key, decode_record(record)[0], mode, priority, ttl, delay, flags))

    def send_async(self, args: tuple[str, bytes, int, int, int, int, int], ticket: int, what: str) -> None:
        """The client's own async send: sent at once, its outcome queued under ``ticket``."""
        key, record, *options = args
        headers = self.send_described(key, record, *options, what)
        self._completions.put((ticket, (headers, None)))

    def next_completion(self, timeout_ms: int, what: str) -> tuple[int, tuple[bytes | None, Any]] | None:
        """The next async send's outcome (ticket, (header block, error)), or None in time."""
        try:
            return self._completions.get(timeout=max(0, timeout_ms) / 1000)
        except queue.Empty:
            return None

    def send_batch(
        self, key: str, batch: bytes, mode: int, priority: int, ttl: int, delay: int, flags: int, what: str
    ) -> int:
        self._check_open(what)
        (count,) = _I32.unpack_from(batch, 0)
        pos = 4
        for _ in range(count):
            message, pos = decode_record(batch, pos)
            self._send(key, message, mode, priority, ttl, delay, flags)
        return count

    def send_routed(self, batch: bytes, flags: int, what: str) -> int:
        self._check_open(what)
        (count,) = _I32.unpack_from(batch, 0)
        pos = 4
        for _ in range(count):
            key, pos = C.read_string(batch, pos)
            mode, priority, ttl, delay = C.ROUTE.unpack_from(batch, pos)
            message, pos = decode_record(batch, pos + C.ROUTE.size)
            self._send(key or "", message, mode, priority, ttl, delay, flags)
        return count

    def forward_consumed(
        self,
        message_id: str,
        key: str,
        drop: Collection[str],
        block: bytes,
        mode: int,
        priority: int,
        ttl: int,
        flags: int,
        what: str,
    ) -> bool:
        """Codec.forwarded: the message consumed last, copied with the block's headers and
        added properties, without the dropped ones; False if another was consumed last."""
        self._check_open(what)
        m = self.last_consumed
        if m is None or m.message_id != message_id:
            return False
        correlation_id, pos = C.read_string(block, 0)
        jms_type, pos = C.read_string(block, pos)
        reply_to, pos = C.read_string(block, pos)
        added, _ = C.read_tagged_map(block, pos)
        kept = {n: tv for n, tv in m.properties.items() if n not in drop and tv[0] != C.T_NULL}
        body = dict(m.body) if isinstance(m.body, dict) else m.body
        copy = StoredMessage(m.kind, body, {**kept, **added}, correlation_id=correlation_id)
        copy.jms_type, copy.reply_to = jms_type, reply_to
        self._send(key, copy, mode, priority, ttl, 0, flags)
        return True

    # -------------------------------------------------------------- consuming

    def _receiver(
        self,
        source: deque[StoredMessage],
        selector: Selector | None,
        subscription: _Subscription | None = None,
    ) -> FakeReceiver:
        receiver = FakeReceiver(self, next(self._receiver_ids), source, selector, subscription)
        self._receivers[receiver.id] = receiver
        return receiver

    def _queue_receiver(self, key: str, selector: Selector | None) -> FakeReceiver:
        """Called holding the broker's lock: a consumer of a queue (exclusive ones registered)."""
        receiver = self._receiver(self.broker.queues.setdefault(key, deque()), selector)
        self.broker._opened(receiver, key)
        return receiver

    def consumer(self, key: str, selector: str | None, no_local: bool, what: str) -> FakeReceiver:
        self._check_open(what)
        accept = selector_of(selector, what)
        self._started()
        with self.broker.changed:
            if key.partition("://")[0] in ("topic", "temp-topic"):
                sub = _Subscription(None, key, False, self.connection.client_id)
                self.broker.subscriptions.append(sub)
                return self._receiver(sub.queue, accept, sub)
            return self._queue_receiver(key, accept)

    def prefetching_consumer(self, key: str, selector: str | None, prefetch: int, what: str) -> FakeReceiver:
        return self.consumer(key, selector, False, what)

    def durable_consumer(
        self, key: str, name: str, selector: str | None, no_local: bool, what: str
    ) -> FakeReceiver:
        if self.connection.client_id is None:  # as the shim says (Channel.durableConsumer)
            raise IllegalStateRuntimeException(f"{what}: a durable subscription needs a client id")
        return self._subscriber(key, name, selector, True, what, self.connection.client_id)

    def shared_consumer(
        self, key: str, name: str, selector: str | None, durable: bool, what: str
    ) -> FakeReceiver:
        return self._subscriber(key, name, selector, durable, what, None)

    def _subscriber(
        self, key: str, name: str, selector: str | None, durable: bool, what: str, client_id: str | None
    ) -> FakeReceiver:
        self._check_open(what)
        accept = selector_of(selector, what)
        self._started()
        with self.broker.changed:
            sub = next(
                (
                    s
                    for s in self.broker.subscriptions
                    if (s.name, s.client_id, s.durable) == (name, client_id, durable)
                ),
                None,
            )
            if sub is None or sub.topic != key:
                if sub is not None:  # a durable subscription to another topic is replaced (JMS 2.0)
                    self.broker.subscriptions.remove(sub)
                sub = _Subscription(name, key, durable, client_id)
                self.broker.subscriptions.append(sub)
            return self._receiver(sub.queue, accept, sub)

    def unsubscribe(self, name: str, what: str) -> None:
        self._check_open(what)
        with self.broker.changed:
            for sub in [s for s in self.broker.subscriptions if s.durable and s.name == name]:
                if sub.consumers:
                    raise IllegalStateRuntimeException(f"{what}: the subscription {name!r} has a consumer")
                self.broker.subscriptions.remove(sub)

    def browser(self, key: str, selector: str | None, what: str, read_ahead: int = 0) -> FakeBrowser:
        self._check_open(what)
        accept = selector_of(selector, what)
        self._started()
        return FakeBrowser(self, key, accept)

    def create_temporary_queue(self) -> str:
        self._check_open("create_temporary_queue")
        return self.broker.temporary("temp-queue")

    def create_temporary_topic(self) -> str:
        self._check_open("create_temporary_topic")
        return self.broker.temporary("temp-topic")

    def delete_temporary(self, key: str, what: str) -> None:
        self._check_open(what)
        self.broker.temporaries.discard(key)
        self.broker.queues.pop(key, None)

    # -------------------------------------------------------------- listeners

    def next_listened(self, timeout_ms: int) -> bytes | None:
        """The next message for a listening receiver: its id (i32), then the record."""
        self._check_open("next_listened")

        def take() -> tuple[FakeReceiver, StoredMessage] | None:
            if not self.connection.started:
                return None
            for receiver in self._receivers.values():
                if (
                    receiver.listening
                    and self.broker._may_take(receiver)
                    and (m := self.broker._take(receiver.source, receiver.selector)) is not None
                ):
                    self._consumed(m, receiver.source, ack=False)
                    return receiver, m
            return None

        found = self.broker._wait(take, timeout_ms, stop=lambda: self.closed)
        if found is None:
            return None
        self._listened = found
        return _I32.pack(found[0].id) + encode_record(found[1])

    def listened_done(self, ok: bool) -> None:
        """The listener's verdict: processed (acknowledged in an auto session) or failed
        (redelivered, outside a transaction)."""
        self._listened = None
        auto = self.session_mode in (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE)
        if ok and auto:
            self.unacked.clear()
        elif not ok and not self.transacted:
            with self.broker.changed:
                self._give_back()


class FakeReceiver:
    """A consumer (org.pyjms.shim.Receiver)."""

    def __init__(
        self,
        channel: FakeChannel,
        receiver_id: int,
        source: deque[StoredMessage],
        selector: Selector | None,
        subscription: _Subscription | None,
    ) -> None:
        self.channel = channel
        self.id = receiver_id
        self.source = source
        self.selector = selector
        self.subscription = subscription
        self.listening = False
        self.closed = False
        if subscription is not None:
            subscription.consumers += 1

    def _check_open(self, what: str) -> None:
        if self.closed:
            raise IllegalStateRuntimeException(f"{what}: the consumer is closed")
        self.channel._check_open(what)

    def _take(self) -> StoredMessage | None:
        if not self.channel.connection.started or not self.channel.broker._may_take(self):
            return None
        return self.channel.broker._take(self.source, self.selector)

    def receive(self, timeout_ms: int, ack: bool, what: str) -> bytes | None:
        self._check_open(what)

        def take() -> StoredMessage | None:
            m = self._take()
            if m is not None:
                self.channel._consumed(m, self.source, ack)
            return m

        m = self.channel.broker._wait(take, timeout_ms)
        return None if m is None else encode_record(m)

    def receive_batch(self, max_messages: int, timeout_ms: int, what: str) -> bytes:
        self._check_open(what)
        first = self.channel.broker._wait(self._take, timeout_ms)
        taken = [] if first is None else [first]
        with self.channel.broker.changed:
            while taken and len(taken) < max_messages and (m := self._take()) is not None:
                taken.append(m)
            for m in taken:
                self.channel._consumed(m, self.source, ack=True)
        return encode_batch(taken)

    def receive_body(self, kind: int, timeout_ms: int, what: str) -> bytes | None:
        """The body alone (Codec.encodeBody); one of another kind stays where it is (JMS 2.0)."""
        self._check_open(what)

        def take() -> StoredMessage | None:
            m = self._take()
            if m is None:
                return None
            if kind != C.KIND_MESSAGE and m.kind != kind:
                self.source.appendleft(m)
                m.delivery_count -= 1
                raise MessageFormatRuntimeException(
                    f"{what}: the message's body is not of the kind asked for"
                )
            self.channel._consumed(m, self.source, ack=True)
            return m

        m = self.channel.broker._wait(take, timeout_ms)
        return None if m is None or m.body is None else encode_body_record(m.kind, m.body)

    def ack_last(self, what: str = "acknowledge") -> None:
        self._check_open(what)
        self.channel.ack_last()

    def listen(self, what: str = "set_message_listener") -> None:
        self._check_open(what)
        with self.channel.broker.changed:
            self.listening = True
            self.channel.broker.changed.notify_all()

    def unlisten(self, what: str = "set_message_listener(None)") -> None:
        self.listening = False

    def close(self, what: str = "close consumer") -> None:
        if self.closed:
            return
        self.closed = True
        self.channel._receivers.pop(self.id, None)
        broker = self.channel.broker
        with broker.changed:
            broker._closed(self)
            sub = self.subscription
            if sub is not None:
                sub.consumers -= 1
                if not sub.durable and sub.consumers == 0 and sub in broker.subscriptions:
                    broker.subscriptions.remove(sub)


class FakeBrowser:
    """A queue browser (org.pyjms.shim.Browser): the queue as it was at the first page (its
    enumeration), nothing consumed; a message that expired since is not shown (E03)."""

    def __init__(self, channel: FakeChannel, key: str, selector: Selector | None) -> None:
        self.channel = channel
        self.key = key
        self.selector = selector
        self._cursor: deque[StoredMessage] | None = None

    def next(self, max_messages: int, what: str) -> bytes:
        self.channel._check_open(what)
        with self.channel.broker.changed:
            if self._cursor is None:
                waiting = self.channel.broker.queues.get(self.key, ())
                self._cursor = deque(m for m in waiting if self.selector is None or self.selector(m))
        now = self.channel.broker.now_ms()
        page: list[StoredMessage] = []
        while self._cursor and len(page) < max_messages:
            m = self._cursor.popleft()
            if not m.is_expired(now):
                page.append(m)
        return encode_batch(page)

    def skipped_ids(self) -> list[str]:
        return []  # the fake carries no poison

    def close(self, what: str = "close browser") -> None:
        pass
