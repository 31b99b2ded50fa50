"""Protocols of the shim's embedded Artemis broker (java/.../shim/artemis), cast once where the
class is looked up (as pyjms.bridge.java_types)."""

from __future__ import annotations

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
        /,
    ) -> JavaEmbeddedArtemis: ...
