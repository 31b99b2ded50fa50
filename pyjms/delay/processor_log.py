"""What the delay processor logs, rate-limited: anyone who may stage may make it log (poison,
targets the stager may not write), so one processor writes at most MOST_LINES lines per
EVERY_S seconds of those, and then one line saying how many it left out. Each bad message is
still logged once while within the limit, and always counted (ProcessorStats) and dead-lettered.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import cast

from pyjms.bridge import jvm
from pyjms.bridge.java_types import JavaPoisonClass

#: most lines per interval, per processor
MOST_LINES = 20
#: the interval, in seconds
EVERY_S = 10.0

_poison_log = logging.getLogger("pyjms.poison")
#: a browse's skip is told again when a receiver quarantines the message (pyjms.bridge.channel)
_SKIPPED = "browse skipped"


class LogLimit:
    """At most ``most`` lines per ``every_s`` seconds, shared by a processor's threads; past
    that, lines are counted, and the first line of the next interval says how many were left out."""

    def __init__(self, most: int = MOST_LINES, every_s: float = EVERY_S) -> None:
        self._most = most
        self._every_s = every_s
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._lines = 0
        self._left_out = 0

    def log(self, logger: logging.Logger, level: int, fmt: str, *args: object) -> None:
        with self._lock:
            now = time.monotonic()
            left_out = 0
            if now - self._start >= self._every_s:
                left_out, self._left_out = self._left_out, 0
                self._start, self._lines = now, 0
            if self._lines >= self._most:
                self._left_out += 1
                return
            self._lines += 1
        if left_out:
            logger.warning(
                "delay processor: %d more line(s) like the ones before were left out (at most %d per %g s)",
                left_out,
                self._most,
                self._every_s,
            )
        logger.log(level, fmt, *args)

    def poison_notes(self) -> None:
        """Logs the poison the shim quarantined since the last call (org.pyjms.shim.Poison), as
        pyjms.bridge.channel.log_poison_notes does, within this limit."""
        notes = cast(JavaPoisonClass, jvm.shim().jclass("org.pyjms.shim.Poison")).drainNotes()
        if notes is not None:
            for line in str(notes).splitlines():
                level = logging.INFO if line.startswith(_SKIPPED) else logging.WARNING
                self.log(_poison_log, level, "%s", line)
