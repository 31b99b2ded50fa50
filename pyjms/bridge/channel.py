"""The typed channel: one JMS session of the shim (org.pyjms.shim.Channel) with Python types.

Every call translates a Java exception into the pyjms error tree (pyjms.bridge.errors), so no
JPype object reaches the layers above through a failure; ``what`` names the operation in the
error's message. Records and batches are the codec's (pyjms.bridge.codec); destination keys
are ``queue://NAME``-style strings (or the Java strings made from them by ``java_string``).

The raw Java objects stay reachable as ``.java`` for shim extensions a provider or feature
owns (their calls must translate Java exceptions the same way: ``Channel.call``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, TypeVar

from pyjms.bridge import jvm
from pyjms.bridge.errors import translate
from pyjms.bridge.java_types import (
    JavaChannel,
    JavaConnection,
    JavaConnectionFactory,
    JavaDirectBuffer,
    JavaProvider,
    JavaString,
    JavaStringArg,
    JavaThrowable,
)
from pyjms.bridge.receivers import (
    AREA_BYTES,
    Browser,
    Receiver,
    is_browse_skip,
    log_poison_notes,
    poison_notes,
)
from pyjms.errors import ConnectionBrokenRuntimeException, JMSRuntimeException
from pyjms.reasons import MQRC

if TYPE_CHECKING:
    from pyjms.bridge.java_types import JavaException

#: also importable from here (pyjms.bridge.receivers)
__all__ = [
    "AREA_BYTES",
    "Browser",
    "Channel",
    "Receiver",
    "SendArgs",
    "SendOutcome",
    "is_browse_skip",
    "log_poison_notes",
    "poison_notes",
]

_T = TypeVar("_T")
#: Channel.send's arguments but ``what``: destination key, record, delivery mode, priority,
#: time to live, delivery delay, flags
SendArgs = tuple[JavaStringArg, bytes, int, int, int, int, int]

#: an async send's outcome: the header block the message got, or the exception that failed it
#: (for Channel.translated)
SendOutcome = tuple[bytes | None, JavaThrowable | None]


class Channel:
    """One session (and the connection it shares with its siblings) on the wire."""

    __slots__ = (
        "java",
        "_shim",
        "_jexc",
        "_area",
        "_java_area",
        "_area_lock",
        "_send_from_area",
        "_commit",
        "quarantined_at_commit",
    )

    def __init__(self, java: JavaChannel) -> None:
        jvm.detach_when_thread_ends()
        self.java = java
        self._shim = jvm.shim()
        self._jexc = self._shim.JException
        # where send writes its record for the shim (Channel.sendFromArea): converting a bytes
        # argument to a byte[] cost about as much as the call itself
        self._area = bytearray(AREA_BYTES)
        self._java_area = self._shim.direct_buffer(self._area)
        self._area_lock = threading.Lock()
        self._send_from_area = java.sendFromArea  # bound once: JPype makes a method object per lookup
        self._commit = java.commit
        #: quarantined_count() as the last successful commit left it (the shim's commit returns
        #: it, so a reader counting committed poison makes no second JVM call per commit)
        self.quarantined_at_commit = 0

    @classmethod
    def open(
        cls,
        provider: JavaProvider,
        factory: JavaConnectionFactory,
        user: str | None,
        password: str | None,
        client_id: str | None,
        session_mode: int,
        what: str,
    ) -> Channel:
        """A new connection with one session, through a provider's Java connection factory."""
        s = jvm.shim()
        jvm.detach_when_thread_ends()
        try:
            return cls(s.Channel.open(provider, factory, user, password, client_id, session_mode))
        except s.JException as e:
            raise translate(e, what) from None

    def sibling(self, session_mode: int, what: str) -> Channel:
        """Another session on this channel's connection."""
        return Channel(self.call(lambda: self.java.sibling(session_mode), what))

    @property
    def java_exception(self) -> type[JavaException]:
        """The JPype class of Java exceptions (what this channel's receivers and browsers catch)."""
        return self._jexc

    def direct_buffer(self, area: bytearray) -> JavaDirectBuffer:
        """A Java direct buffer over ``area`` (where the shim writes or reads records)."""
        return self._shim.direct_buffer(area)

    def translated(self, jexc: JavaThrowable, what: str) -> JMSRuntimeException:
        """The pyjms error for a Java exception of this channel's calls: when the connection
        broke before (the client told its exception listener), the error says so and carries
        MQRC_CONNECTION_BROKEN or MQRC_Q_MGR_NOT_AVAILABLE, whatever the call itself reported
        ("the producer is closed")."""
        error = translate(jexc, what)
        if error.reason is not None:
            return error
        try:
            failure = self.java.connectionFailure()
            # some clients close a failed connection's sessions before they tell the listener
            lost = failure is not None or bool(self.java.connectionLost())
        except self._jexc:
            failure, lost = None, False
        if not lost:
            return error
        if failure is None:
            return type(error)(
                f"{error.message} (the connection broke)",
                error_code=error.error_code,
                reason=MQRC.CONNECTION_BROKEN,
                values=error.values,
            )
        cause = translate(failure)
        return type(error)(
            f"{error.message} (the connection broke: {cause.message})",
            error_code=error.error_code,
            reason=cause.reason or MQRC.CONNECTION_BROKEN,
            values=error.values,
        )

    def connection_failure(self) -> JMSRuntimeException | None:
        """Why this channel's connection failed, as the client told its exception listener: a
        ConnectionBrokenRuntimeException (or BrokerUnavailableRuntimeException when a
        reconnect was refused); None while it has not failed. Cheap: it reads what the
        shim's listener kept, without I/O."""
        try:
            failure = self.java.connectionFailure()
        except self._jexc:
            return None
        if failure is None:
            return None
        error = translate(failure, "the connection failed")
        if error.reason is not None:
            return error
        return ConnectionBrokenRuntimeException(error.message, error_code=error.error_code)

    def queue_names(self, prefix: str, wait_ms: int, what: str) -> list[str] | None:
        """The names of the broker's queues that start with prefix, or None if the provider
        cannot list them. May wait up to wait_ms for the broker."""
        names = self.call(lambda: self.java.queueNames(prefix, wait_ms), what)
        return None if names is None else [n for n in str(names).split("\n") if n]

    def non_empty_queues(self, names: list[str], what: str) -> list[str]:
        """Those of the queues that hold a message now (a browse of each)."""
        found = self.call(lambda: self.java.nonEmptyQueues("\n".join(names)), what)
        return [n for n in str(found).split("\n") if n]

    def set_dead_letter_queue(self, key: str, put_appl_name: str = "pyjms") -> None:
        """Where this session quarantines poison (org.pyjms.shim.Poison): a destination key, and
        the PutApplName its dead-letter headers carry."""
        self.java.setDeadLetterQueue(key, put_appl_name)

    def quarantined_count(self) -> int:
        """How many messages this session has quarantined (org.pyjms.shim.Poison), counting
        those of a transaction not committed yet."""
        return int(self.java.quarantinedCount())

    def call(self, fn: Callable[[], _T], what: str) -> _T:
        """Runs fn (Java calls), translating a Java exception into a pyjms error."""
        jvm.detach_when_thread_ends()
        try:
            return fn()
        except self._jexc as e:
            raise self.translated(e, what) from None

    def ask_provider(self, question: Callable[[JavaProvider, JavaConnection], _T], what: str) -> _T:
        """Asks the provider's shim (org.pyjms.shim.Provider) something about this channel's
        connection, translating a Java exception as every call does."""
        java = self.java
        return self.call(lambda: question(java.provider(), java.connection()), what)

    def java_string(self, text: str) -> JavaString:
        """A Java String, for keys passed on every send (made once, not per call)."""
        return self._shim.String(text)

    # ------------------------------------------------------------------ the session

    def provider_name(self) -> str:
        return str(self.java.providerName())

    def client_id(self) -> str | None:
        cid = self.call(self.java.clientId, "get_client_id")
        return None if cid is None else str(cid)

    def set_client_id(self, client_id: str) -> None:
        self.call(lambda: self.java.setClientId(client_id), "set_client_id")

    def start(self) -> None:
        self.call(self.java.start, "start")

    def stop(self) -> None:
        self.call(self.java.stop, "stop")

    def commit(self) -> None:
        self.quarantined_at_commit = int(self.call(self._commit, "commit"))

    def lost_before_last_commit(self) -> bool:
        """Whether the client knew its connection had failed when the last commit was called
        (then that commit never left, and nothing was committed)."""
        try:
            return bool(self.java.lostBeforeLastCommit())
        except self._jexc:
            return False

    def rollback(self) -> None:
        self.call(self.java.rollback, "rollback")

    def recover(self) -> None:
        self.call(self.java.recover, "recover")

    def acknowledge(self) -> None:
        self.call(self.java.acknowledge, "acknowledge")

    def acknowledge_messages(self, message_ids: list[str | None]) -> None:
        """INDIVIDUAL_ACKNOWLEDGE: acknowledges the consumed messages with these JMSMessageIDs
        (Channel.acknowledgeMessages)."""
        self.call(lambda: self.java.acknowledgeMessages(message_ids), "acknowledge")

    def close(self) -> None:
        self.call(self.java.close, "close")

    def supports_native_delay(self) -> bool:
        """Whether the provider's client implements JMS 2.0 setDeliveryDelay (a local check)."""
        return bool(self.java.supportsNativeDelay())

    def scheduler_known(self) -> bool:
        """Whether the provider knows the broker runs a scheduler it can use (False: unknown)."""
        return bool(self.java.schedulerKnown())

    def scheduler_markable(self) -> bool:
        """Whether the provider has a scheduler property to mark a message with (a local check)."""
        return bool(self.java.schedulerMarkable())

    def native_delay_known(self) -> bool:
        """Whether the peer is known to honour a native delay it offers (False: try it first)."""
        return bool(self.java.nativeDelayKnown())

    def jms2_client(self) -> bool:
        """Whether the client has JMS 2.0's async send and receiveBody (a local check)."""
        return bool(self.java.jms2Client())

    def sends_async(self) -> bool:
        """Whether the client has JMS 2.0's async send itself (a local check)."""
        return bool(self.java.sendsAsync())

    # ------------------------------------------------------------------ sending

    def send(
        self,
        key: JavaStringArg,
        record: bytes,
        mode: int,
        priority: int,
        ttl: int,
        delay: int,
        flags: int,
        what: str,
    ) -> None:
        jvm.detach_when_thread_ends()
        n = len(record)
        try:
            if n > AREA_BYTES:
                self.java.send(key, record, mode, priority, ttl, delay, flags)
                return
            with self._area_lock:
                self._area[:n] = record
                self._send_from_area(self._java_area, n, key, mode, priority, ttl, delay, flags)
        except self._jexc as e:
            raise self.translated(e, what) from None

    def forward_consumed(
        self,
        message_id: str,
        key: JavaStringArg,
        drop: Collection[str],
        block: bytes,
        mode: int,
        priority: int,
        ttl: int,
        flags: int,
        what: str,
    ) -> bool:
        """Forwards the message this session consumed last, if it is ``message_id``, with a copy
        made in the JVM (Channel.forwardConsumed; ``block``: Message._forward_block): its
        properties do not cross again. False if it sent nothing (another message was consumed
        last): the caller sends its own copy."""
        jvm.detach_when_thread_ends()
        try:
            return bool(
                self.java.forwardConsumed(message_id, key, list(drop), block, mode, priority, ttl, flags)
            )
        except self._jexc as e:
            raise self.translated(e, what) from None

    def send_async(self, args: SendArgs, ticket: int, what: str) -> None:
        """Hands one send to the client's own async send (Channel.sendAsync); its outcome comes
        under ``ticket`` from next_completion."""
        try:
            self.java.sendAsync(*args, ticket)
        except self._jexc as e:
            raise self.translated(e, what) from None

    def next_completion(self, timeout_ms: int, what: str) -> tuple[int, SendOutcome] | None:
        """The next async send's outcome, by its ticket, or None within timeout_ms."""
        try:
            outcome = self.java.nextCompletion(timeout_ms)
        except self._jexc as e:
            raise self.translated(e, what) from None
        if outcome is None:
            return None
        headers = outcome[1]
        return int(outcome[0]), (None if headers is None else bytes(headers), outcome[2])

    def send_described(
        self,
        key: JavaStringArg,
        record: bytes,
        mode: int,
        priority: int,
        ttl: int,
        delay: int,
        flags: int,
        what: str,
    ) -> bytes:
        """Sends one record; returns the header block the provider assigned (codec.read_headers)."""
        jvm.detach_when_thread_ends()
        try:
            return bytes(self.java.sendDescribed(key, record, mode, priority, ttl, delay, flags))
        except self._jexc as e:
            raise self.translated(e, what) from None

    def send_batch(
        self,
        key: JavaStringArg,
        batch: bytes,
        mode: int,
        priority: int,
        ttl: int,
        delay: int,
        flags: int,
        what: str,
    ) -> int:
        """Sends a batch (codec.pack_batch) to one destination with one set of options."""
        jvm.detach_when_thread_ends()
        try:
            return int(self.java.sendBatch(key, batch, mode, priority, ttl, delay, flags))
        except self._jexc as e:
            raise self.translated(e, what) from None

    def send_routed(self, batch: bytes, flags: int, what: str) -> int:
        """Sends a batch of routed entries (codec.pack_routed), each with its own destination."""
        jvm.detach_when_thread_ends()
        try:
            return int(self.java.sendRouted(batch, flags))
        except self._jexc as e:
            raise self.translated(e, what) from None

    # ------------------------------------------------------------------ consuming

    def consumer(self, key: JavaStringArg, selector: str | None, no_local: bool, what: str) -> Receiver:
        return Receiver(self.call(lambda: self.java.consumer(key, selector, no_local), what), self)

    def prefetching_consumer(
        self, key: JavaStringArg, selector: str | None, prefetch: int, what: str
    ) -> Receiver:
        """A consumer the provider sends at most ``prefetch`` messages ahead (None: no selector)."""
        return Receiver(self.call(lambda: self.java.prefetchingConsumer(key, selector, prefetch), what), self)

    def durable_consumer(
        self, key: JavaStringArg, name: str, selector: str | None, no_local: bool, what: str
    ) -> Receiver:
        return Receiver(
            self.call(lambda: self.java.durableConsumer(key, name, selector, no_local), what), self
        )

    def shared_consumer(
        self, key: JavaStringArg, name: str, selector: str | None, durable: bool, what: str
    ) -> Receiver:
        return Receiver(self.call(lambda: self.java.sharedConsumer(key, name, selector, durable), what), self)

    def unsubscribe(self, name: str, what: str) -> None:
        self.call(lambda: self.java.unsubscribe(name), what)

    def browser(self, key: JavaStringArg, selector: str | None, what: str, read_ahead: int = 0) -> Browser:
        """A browser; read_ahead > 0: one read in batches of that many, which the provider may
        send that many messages ahead (org.pyjms.shim.Provider.browsing)."""
        return Browser(self.call(lambda: self.java.browser(key, selector, read_ahead), what), self)

    def create_temporary_queue(self) -> str:
        return str(self.call(self.java.createTemporaryQueue, "create_temporary_queue"))

    def create_temporary_topic(self) -> str:
        return str(self.call(self.java.createTemporaryTopic, "create_temporary_topic"))

    def delete_temporary(self, key: JavaStringArg, what: str) -> None:
        self.call(lambda: self.java.deleteTemporary(key), what)

    # ------------------------------------------------------------------ listeners

    def next_listened(self, timeout_ms: int) -> bytes | None:
        """The next message for a listener: receiver id (i32) then its record, or None.
        Raises whatever the shim raises once the channel is closed (the caller checks)."""
        raw = self.java.nextListened(timeout_ms)
        if raw is None:
            log_poison_notes()
            return None
        return bytes(raw)

    def listened_done(self, ok: bool) -> None:
        self.java.listenedDone(ok)
