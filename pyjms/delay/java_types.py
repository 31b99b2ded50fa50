"""Protocols of the delay processor's shim classes (java/.../shim/delay), as pyjms.bridge.java_types
types the core ones: cast once where the class is looked up."""

from __future__ import annotations

from typing import Protocol

from pyjms.bridge.java_types import JavaBytes, JavaChannel, JavaReceiver, JavaStringArg, JavaStringSet


class JavaSlotFiler(Protocol):
    """org.pyjms.shim.delay.SlotFiler: files staged messages under their slot queues."""

    def file(self, source: JavaReceiver, max_messages: int, timeout_ms: int, /) -> JavaBytes: ...


class JavaSlotFilerClass(Protocol):
    def __call__(
        self,
        channel: JavaChannel,
        slot_prefix: JavaStringArg,
        suffix: JavaStringArg,
        slot_ms: int,
        horizon_ms: int,
        most_attempts: int,
        /,
    ) -> JavaSlotFiler: ...


class JavaDueMover(Protocol):
    """org.pyjms.shim.delay.DueMover: moves a slot's due messages to plain targets."""

    def deliverDue(
        self,
        source: JavaReceiver,
        max_messages: int,
        timeout_ms: int,
        plain_targets: JavaStringSet,
        allowed: JavaStringSet | None,
        /,
    ) -> JavaBytes: ...


class JavaDueMoverClass(Protocol):
    def __call__(self, channel: JavaChannel, most_attempts: int, /) -> JavaDueMover: ...


class JavaConcurrentHashMapClass(Protocol):
    """java.util.concurrent.ConcurrentHashMap, for its concurrent key set."""

    def newKeySet(self) -> JavaStringSet: ...
