"""What the delay processor logs, rate-limited: anyone who may stage may make it log (poison,
targets the stager may not write), so one processor writes at most MOST_LINES lines per
EVERY_S seconds of those (pyjms.api.quietlog), and the next line it writes says how many it
held back. Each bad message is still logged once while within the limit, and always counted
(ProcessorStats) and dead-lettered.
"""

from __future__ import annotations

import logging
from typing import cast

from pyjms.api.quietlog import QuietLog
from pyjms.bridge import jvm
from pyjms.bridge.java_types import JavaPoisonClass

#: most lines per interval, per processor
MOST_LINES = 20
#: the interval, in seconds
EVERY_S = 10.0

_log = logging.getLogger("pyjms.delay")
_poison_log = logging.getLogger("pyjms.poison")
#: a browse's skip is told again when a receiver quarantines the message (pyjms.bridge.channel)
_SKIPPED = "browse skipped"


def processor_log(most: int = MOST_LINES, every_s: float = EVERY_S) -> QuietLog:
    """The log a processor's threads share."""
    return QuietLog(_log, window_s=every_s, most=most)


def log_poison_notes(log: QuietLog) -> None:
    """Logs the poison the shim quarantined since the last call (org.pyjms.shim.Poison), as
    pyjms.bridge.channel.log_poison_notes does, within the processor's limit."""
    notes = cast(JavaPoisonClass, jvm.shim().jclass("org.pyjms.shim.Poison")).drainNotes()
    if notes is not None:
        for line in str(notes).splitlines():
            level = logging.INFO if line.startswith(_SKIPPED) else logging.WARNING
            log.line(_poison_log, level, "%s", line)
