"""The JVM boundary, typed: Protocols of the Java classes pyjms calls through JPype.

JPype hands back untyped proxies. Each is cast to one of these Protocols once, where pyjms
obtains it (pyjms.bridge.jvm for the shim's classes, the typed channel for what its methods
return), so every later call is checked against the Java signature it crosses to. They describe
only the methods pyjms calls, as JPype shows them with ``convertStrings=False``: a Java String
comes back as a java.lang.String (``str()`` makes it text), a byte[] as a Java array
(``bytes()`` copies it), and Python's str, int, bool and bytes convert to the Java parameter
types on the way in.

The shim's classes (java/src/main/java/org/pyjms/shim) are named after them; the few Jakarta
Messaging and java.* types pyjms touches are here too. Classes a provider or feature owns
(an embedded broker, the delay processor's movers) have their Protocols in that package.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, Protocol, SupportsInt, overload

# ---------------------------------------------------------------------------- java.lang


class JavaString(Protocol):
    """A java.lang.String (JPype's JString): ``str()`` is its text."""

    def length(self) -> int: ...


#: where a Java String parameter is expected: a Python str converts, a JavaString passes as is
JavaStringArg = str | JavaString


class JavaDirectBuffer(Protocol):
    """A java.nio.ByteBuffer over a Python bytearray's memory (jpype.nio.convertToDirectBuffer):
    pyjms only passes it back to the shim."""


class JavaBytes(Protocol):
    """A Java byte[] (JPype's JArray): ``bytes()`` copies it (through the buffer protocol)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[int]: ...


class JavaStringArray(Protocol):
    """A Java String[]."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[JavaString]: ...


class JavaClass(Protocol):
    """A java.lang.Class."""

    def getSimpleName(self) -> JavaString: ...

    def getSuperclass(self) -> JavaClass | None: ...


class JavaThrowable(Protocol):
    """A java.lang.Throwable: what the error translation reads (pyjms.bridge.errors)."""

    def getClass(self) -> JavaClass: ...

    def getMessage(self) -> JavaString | None: ...

    def getCause(self) -> JavaThrowable | None: ...


class JavaJMSException(JavaThrowable, Protocol):
    """A jakarta.jms.JMSException (or JMSRuntimeException): it has the provider's error code."""

    def getErrorCode(self) -> JavaString | None: ...


if TYPE_CHECKING:

    class JavaException(Exception):
        """jpype.JException: a Java Throwable raised into Python (both an Exception and a
        Throwable). Only a type: its class at run time is JPype's (pyjms.bridge.jvm)."""

        def getClass(self) -> JavaClass: ...

        def getMessage(self) -> JavaString | None: ...

        def getCause(self) -> JavaThrowable | None: ...


class JavaThreadClass(Protocol):
    """java.lang.Thread, with JPype's attachment methods."""

    def attachAsDaemon(self) -> None: ...

    def detach(self) -> None: ...


class JavaStringClass(Protocol):
    """java.lang.String: a new Java String from a str."""

    def __call__(self, text: str, /) -> JavaString: ...


# ---------------------------------------------------------------------------- java.util


class JavaMap(Protocol):
    """A java.util.Map<String, String>."""

    def put(self, key: JavaStringArg, value: JavaStringArg, /) -> JavaString | None: ...


class JavaHashMapClass(Protocol):
    """java.util.HashMap: a new empty map."""

    def __call__(self) -> JavaMap: ...


class JavaStringSet(Protocol):
    """A java.util.Set<String>."""

    def add(self, item: JavaStringArg, /) -> bool: ...

    def remove(self, item: JavaStringArg, /) -> bool: ...


class JavaEnumeration(Protocol):
    """A java.util.Enumeration."""

    def hasMoreElements(self) -> bool: ...

    def nextElement(self) -> object: ...


# ---------------------------------------------------------------------------- jakarta.jms


class JavaConnectionFactory(Protocol):
    """A jakarta.jms.ConnectionFactory (made by a Provider, handed back to Channel.open)."""


class JavaConnection(Protocol):
    """A jakarta.jms.Connection (passed back to the shim, never called from Python)."""


class JavaDestination(Protocol):
    """A jakarta.jms.Destination (a Queue or a Topic)."""


class JavaQueueBrowser(Protocol):
    """A jakarta.jms.QueueBrowser."""

    def getEnumeration(self) -> JavaEnumeration: ...

    def close(self) -> None: ...


class JavaSession(Protocol):
    """A jakarta.jms.Session."""

    def createQueue(self, name: JavaStringArg, /) -> JavaDestination: ...

    def createBrowser(
        self, queue: JavaDestination, selector: JavaStringArg | None, /
    ) -> JavaQueueBrowser: ...


# ---------------------------------------------------------------------------- org.pyjms.shim


class JavaProvider(Protocol):
    """org.pyjms.shim.Provider: what the shim needs of a provider beyond Jakarta Messaging."""

    def name(self) -> JavaString: ...

    def factory(self, url: JavaStringArg, properties: JavaMap, /) -> JavaConnectionFactory: ...

    def isPyjmsBroker(self, connection: JavaConnection, /) -> bool: ...

    def peerDetectsDuplicates(self, connection: JavaConnection, /) -> bool: ...

    def peerProduct(self, connection: JavaConnection, /) -> JavaString | None: ...


class JavaProvidersClass(Protocol):
    """org.pyjms.shim.Providers: finds a provider (its static methods)."""

    def forName(self, name: JavaStringArg, /) -> JavaProvider: ...

    def forFactoryClass(self, class_name: JavaStringArg | None, /) -> JavaProvider: ...


class JavaReceiver(Protocol):
    """org.pyjms.shim.Receiver: a consumer; records and batches are the codec's."""

    def id(self) -> int: ...

    def receiveBatch(self, max_messages: int, timeout_ms: int, /) -> JavaBytes: ...

    def receiveBody(self, kind: int, timeout_ms: int, /) -> JavaBytes | None: ...

    def receiveToArea(self, area: JavaDirectBuffer, timeout_ms: int, ack: bool, /) -> int: ...

    def takeOversize(self) -> JavaBytes: ...

    def ackLast(self) -> None: ...

    def listen(self) -> None: ...

    def unlisten(self) -> None: ...

    def close(self) -> None: ...


class JavaBrowser(Protocol):
    """org.pyjms.shim.Browser: a queue browser handing out batches."""

    def next(self, max_messages: int, /) -> JavaBytes: ...

    def skippedIds(self) -> JavaString | None: ...

    def close(self) -> None: ...


class JavaCompletion(Protocol):
    """Channel.nextCompletion's Object[]: {ticket, header block or null, exception or null}."""

    @overload
    def __getitem__(self, index: Literal[0], /) -> SupportsInt: ...

    @overload
    def __getitem__(self, index: Literal[1], /) -> JavaBytes | None: ...

    @overload
    def __getitem__(self, index: Literal[2], /) -> JavaThrowable | None: ...


class JavaChannel(Protocol):
    """org.pyjms.shim.Channel: one session (and the connection its siblings share)."""

    def sibling(self, session_mode: int, /) -> JavaChannel: ...

    def providerName(self) -> JavaString: ...

    def connectionFailure(self) -> JavaThrowable | None: ...
    def connectionLost(self) -> bool: ...
    def lostBeforeLastCommit(self) -> bool: ...

    def provider(self) -> JavaProvider: ...

    def connection(self) -> JavaConnection: ...

    def session(self) -> JavaSession: ...

    def clientId(self) -> JavaString | None: ...

    def setClientId(self, client_id: JavaStringArg, /) -> None: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def send(
        self,
        destination: JavaStringArg,
        record: bytes,
        delivery_mode: int,
        priority: int,
        ttl: int,
        delay_ms: int,
        flags: int,
        /,
    ) -> None: ...

    def sendFromArea(
        self,
        area: JavaDirectBuffer,
        length: int,
        destination: JavaStringArg,
        delivery_mode: int,
        priority: int,
        ttl: int,
        delay_ms: int,
        flags: int,
        /,
    ) -> None: ...

    def forwardConsumed(
        self,
        message_id: JavaStringArg,
        destination: JavaStringArg,
        drop: list[str],
        block: bytes,
        delivery_mode: int,
        priority: int,
        ttl: int,
        flags: int,
        /,
    ) -> bool: ...

    def sendDescribed(
        self,
        destination: JavaStringArg,
        record: bytes,
        delivery_mode: int,
        priority: int,
        ttl: int,
        delay_ms: int,
        flags: int,
        /,
    ) -> JavaBytes: ...

    def sendBatch(
        self,
        destination: JavaStringArg,
        batch: bytes,
        delivery_mode: int,
        priority: int,
        ttl: int,
        delay_ms: int,
        flags: int,
        /,
    ) -> int: ...

    def sendRouted(self, batch: bytes, flags: int, /) -> int: ...

    def jms2Client(self) -> bool: ...

    def sendsAsync(self) -> bool: ...

    def sendAsync(
        self,
        destination: JavaStringArg,
        record: bytes,
        delivery_mode: int,
        priority: int,
        ttl: int,
        delay_ms: int,
        flags: int,
        ticket: int,
        /,
    ) -> None: ...

    def nextCompletion(self, timeout_ms: int, /) -> JavaCompletion | None: ...

    def setDeadLetterQueue(self, key: JavaStringArg, appl_name: JavaStringArg, /) -> None: ...
    def quarantinedCount(self) -> int: ...

    def queueNames(self, prefix: JavaStringArg, wait_ms: int, /) -> JavaString | None: ...

    def nonEmptyQueues(self, names: JavaStringArg, /) -> JavaString: ...

    def schedulerKnown(self) -> bool: ...

    def schedulerMarkable(self) -> bool: ...

    def supportsNativeDelay(self) -> bool: ...

    def nativeDelayKnown(self) -> bool: ...

    def consumer(
        self, destination: JavaStringArg, selector: JavaStringArg | None, no_local: bool, /
    ) -> JavaReceiver: ...

    def prefetchingConsumer(
        self, destination: JavaStringArg, selector: JavaStringArg | None, prefetch: int, /
    ) -> JavaReceiver: ...

    def durableConsumer(
        self, topic: JavaStringArg, name: JavaStringArg, selector: JavaStringArg | None, no_local: bool, /
    ) -> JavaReceiver: ...

    def sharedConsumer(
        self, topic: JavaStringArg, name: JavaStringArg, selector: JavaStringArg | None, durable: bool, /
    ) -> JavaReceiver: ...

    def unsubscribe(self, name: JavaStringArg, /) -> None: ...

    def browser(self, queue: JavaStringArg, selector: JavaStringArg | None, ahead: int, /) -> JavaBrowser: ...

    def createTemporaryQueue(self) -> JavaString: ...

    def createTemporaryTopic(self) -> JavaString: ...

    def deleteTemporary(self, key: JavaStringArg, /) -> None: ...

    def nextListened(self, timeout_ms: int, /) -> JavaBytes | None: ...

    def listenedDone(self, ok: bool, /) -> None: ...

    def commit(self) -> int: ...

    def rollback(self) -> None: ...

    def recover(self) -> None: ...

    def acknowledge(self) -> None: ...

    def acknowledgeMessages(self, ids: list[str | None], /) -> None: ...

    def close(self) -> None: ...


class JavaChannelClass(Protocol):
    """org.pyjms.shim.Channel's static methods."""

    def open(
        self,
        provider: JavaProvider,
        factory: JavaConnectionFactory,
        user: JavaStringArg | None,
        password: JavaStringArg | None,
        client_id: JavaStringArg | None,
        session_mode: int,
        /,
    ) -> JavaChannel: ...


class JavaCodecClass(Protocol):
    """org.pyjms.shim.Codec (looked up with the others; Python calls none of its methods)."""


class JavaContractClass(Protocol):
    """org.pyjms.shim.Contract's static methods (the Python twin: pyjms.bridge.contract)."""

    def reasonOf(self, error: JavaThrowable, /) -> int: ...

    def withoutReason(self, text: JavaStringArg, /) -> JavaString: ...


class JavaPoisonClass(Protocol):
    """org.pyjms.shim.Poison's static methods."""

    def drainNotes(self) -> JavaString | None: ...
