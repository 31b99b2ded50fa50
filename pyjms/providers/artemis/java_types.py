"""Protocols of the shim's Artemis classes (java/.../shim/artemis): the embedded broker and the
provider's static helpers, cast once where the class is looked up (as pyjms.bridge.java_types)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from pyjms.bridge.java_types import JavaString, JavaStringArg, JavaStringArray


class JavaQueueLimits(Protocol):
    """org.pyjms.shim.artemis.QueueLimits: the limits the broker enforces."""

    def define(
        self, queue: JavaStringArg, put_enabled: bool, max_message_length: int, max_depth: int, /
    ) -> None: ...

    def clear(self, queue: JavaStringArg, /) -> None: ...


class JavaEmbeddedArtemis(Protocol):
    """org.pyjms.shim.artemis.EmbeddedArtemis."""

    def vmUrl(self) -> JavaString: ...

    def tcpPort(self) -> int: ...

    def limits(self) -> JavaQueueLimits: ...

    def queueDepth(self, queue: JavaStringArg, /) -> int: ...

    def queuesOf(self, address: JavaStringArg, /) -> JavaStringArray: ...

    def subscribersOf(self, topic: JavaStringArg, /) -> JavaStringArray: ...

    def durableSelector(
        self, topic: JavaStringArg, client_id: JavaStringArg, name: JavaStringArg, /
    ) -> JavaString | None: ...

    def destinations(self) -> JavaStringArray: ...

    def hasDestination(self, kind: JavaStringArg, name: JavaStringArg, /) -> bool: ...

    def mayWrite(self, user: JavaStringArg | None, kind: JavaStringArg, name: JavaStringArg, /) -> bool: ...

    def removeDestination(self, kind: JavaStringArg, name: JavaStringArg, /) -> None: ...

    def stop(self) -> None: ...


class JavaEmbeddedArtemisClass(Protocol):
    def start(
        self,
        name: JavaStringArg,
        data_dir: JavaStringArg | None,
        tcp_port: int,
        users: list[list[str]] | None,
        rules: list[list[str]] | None,
        dead_letter_queue: JavaStringArg | None,
        expiry_queue: JavaStringArg | None,
        key_store: JavaStringArg | None,
        key_store_password: JavaStringArg | None,
        standing_by: Callable[[], None] | None,
        /,
    ) -> JavaEmbeddedArtemis: ...


class JavaArtemisProviderClass(Protocol):
    """org.pyjms.shim.artemis.ArtemisProvider's static methods."""

    def storedFilter(self, selector: JavaStringArg, /) -> JavaString: ...
