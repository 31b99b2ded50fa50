"""Ctrl-C for the pyjms command: it ends a command at once, except inside a section that must
finish whole (a send, a receive's write and acknowledge), where it is held until the section
ends. A second Ctrl-C inside such a section ends it at once. A command that runs a service
(a broker, a delay processor, a mark service) stops it cleanly on SIGINT or SIGTERM instead
(pyjms.bridge.signals)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


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
