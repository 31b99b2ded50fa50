"""What the delay processor logs, rate-limited: anyone who may stage may make it log (poison,
targets the stager may not write), so one processor writes at most MOST_LINES lines per
EVERY_S seconds of those (pyjms.api.quietlog), and the next line it writes says how many it
held back. Each bad message is still logged once while within the limit, and always counted
(ProcessorStats) and dead-lettered.
"""

from __future__ import annotations

import logging

from pyjms.api.bulk import is_browse_skip, poison_notes
from pyjms.api.quietlog import QuietLog

#: most lines per interval, per processor
MOST_LINES = 20
#: the interval, in seconds
EVERY_S = 10.0

_log = logging.getLogger("pyjms.delay")
_poison_log = logging.getLogger("pyjms.poison")


def processor_log(most: int = MOST_LINES, every_s: float = EVERY_S) -> QuietLog:
    """The log a processor's threads share."""
    return QuietLog(_log, window_s=every_s, most=most)


def log_poison_notes(log: QuietLog) -> None:
    """Logs the poison the shim quarantined since the last call (org.pyjms.shim.Poison), as
    pyjms.bridge.channel.log_poison_notes does, within the processor's limit."""
    for line in poison_notes():
        log.line(_poison_log, logging.INFO if is_browse_skip(line) else logging.WARNING, "%s", line)
