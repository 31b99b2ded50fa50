"""A log that a flood cannot fill: each kind of trouble is logged once a window, and the lines of
all kinds together at most so many a window; what was held back is counted in the next line.

pyjms's services log what a hostile or broken peer does to them (a malformed request, a reply
nobody may be sent, a broken session); a peer that does it a million times must not make a
million lines.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["QuietLog"]


class QuietLog:
    """``warn(key, msg, *args)``: logged unless ``key`` was logged within ``window_s``, or
    ``most`` lines were logged within it already. ``line(logger, level, msg, *args)``: logged
    unless ``most`` lines were (every bad message is told once, within the limit).
    Thread-safe."""

    #: keys remembered at most (a flood of distinct keys is held back by ``most`` anyway)
    KEYS = 1000

    def __init__(
        self,
        logger: logging.Logger,
        *,
        window_s: float = 60.0,
        most: int = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = logger
        self._window_s = window_s
        self._most = most
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: dict[str, float] = {}  # key -> when last logged
        self._window_start = clock()
        self._lines = 0
        #: lines held back since the last one logged
        self.held_back = 0

    def _may(self, key: str | None) -> int | None:
        """How many were held back before this line, or None: hold this one back too."""
        with self._lock:
            now = self._clock()
            if now - self._window_start >= self._window_s:
                self._window_start, self._lines = now, 0
                self._keys = {k: t for k, t in self._keys.items() if now - t < self._window_s}
            last = None if key is None else self._keys.get(key)
            if (last is not None and now - last < self._window_s) or self._lines >= self._most:
                self.held_back += 1
                return None
            if key is not None:
                if len(self._keys) >= self.KEYS:
                    self._keys.clear()
                self._keys[key] = now
            self._lines += 1
            held, self.held_back = self.held_back, 0
            return held

    def log(
        self,
        level: int,
        key: str | None,
        msg: str,
        *args: Any,
        exc_info: Any = None,
        logger: logging.Logger | None = None,
    ) -> bool:
        """Logs the line (to ``logger``, else this log's) if it may; True if it did."""
        held = self._may(key)
        if held is None:
            return False
        if held:
            msg += f" ({held} similar line(s) held back)"
        (logger or self._log).log(level, msg, *args, exc_info=exc_info)
        return True

    def line(self, logger: logging.Logger, level: int, msg: str, *args: Any) -> bool:
        """Logs the line to ``logger`` unless ``most`` lines were logged within the window."""
        return self.log(level, None, msg, *args, logger=logger)

    def warn(self, key: str, msg: str, *args: Any) -> bool:
        return self.log(logging.WARNING, key, msg, *args)

    def error(self, key: str, msg: str, *args: Any, exc_info: Any = None) -> bool:
        return self.log(logging.ERROR, key, msg, *args, exc_info=exc_info)
