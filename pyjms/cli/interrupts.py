"""Ctrl-C for the pyjms command: it ends a command at once, except inside a section that must
finish whole (a send, a receive's write and acknowledge), where it is held until the section
ends. A second Ctrl-C inside such a section ends it at once. A command that runs a service
(a broker, a delay processor, a mark service) stops it cleanly on SIGINT or SIGTERM instead."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from pyjms.bridge import signals

#: the exit status of a command ended by Ctrl-C (128 + SIGINT), as shells report it
EXIT_INTERRUPTED = 128 + signal.SIGINT


class Interrupts:
    """SIGINT raises KeyboardInterrupt, but not inside ``whole()``."""

    def __init__(self) -> None:
        self._depth = 0
        self._pending = False

    def install(self) -> Interrupts:
        """Takes SIGINT (call after the JVM started: pyjms starts it with -Xrs, so it stays ours)."""
        signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self._depth and not self._pending:
            self._pending = True  # the section ends first
            return
        raise KeyboardInterrupt

    @property
    def pending(self) -> bool:
        """A Ctrl-C came and is held until the current section ends."""
        return self._pending

    @contextmanager
    def whole(self) -> Iterator[None]:
        """A section that a first Ctrl-C does not cut; the interrupt comes when it ends."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if not self._depth and self._pending:
                self._pending = False
                raise KeyboardInterrupt


def stop_on_signals(stop: threading.Event) -> list[int]:
    """A service stops cleanly on SIGINT or SIGTERM; the list gets the signal that stopped it.
    The event is set from a thread of its own (pyjms.bridge.signals: setting it in the handler
    could deadlock the main thread that waits on it)."""
    return signals.stop_on_signals(stop.set)


def exit_status(stopped_by: list[int]) -> int:
    """130 after Ctrl-C, as for every command; 0 after SIGTERM, a supervisor's stop."""
    return EXIT_INTERRUPTED if stopped_by and stopped_by[0] == signal.SIGINT else 0
