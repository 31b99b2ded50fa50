"""The delay processor's slot finder: the slots a previous processor filed, found after a start
or a takeover.

At start it reads the slot markers (quick, so delivery resumes at once). Then, on a thread of
its own, it reads the broker's list of slot queues once (a slot whose marker was lost; a broker
keeps drained slot queues a while, and browsing hundreds of them must not hold up delivery),
and the markers again at REBROWSE_AFTER_S: what a dead processor's transaction held comes back
only when the broker drops its connection. What that thread finds waits for the deliverer,
which reads those slots again in spare time (processor_deliverer).
"""

from __future__ import annotations

import logging
import queue
import threading
import time

from pyjms.api.context import JMSContext
from pyjms.api.factory import ConnectionFactory
from pyjms.bridge import jvm
from pyjms.delay.processor_slots import SLOT_PREFIX, SlotBook

_log = logging.getLogger("pyjms.delay")

#: seconds after start at which the processor lists the broker's slot queues, on a thread of
#: its own (delivery of what the markers name has begun by then)
LIST_QUEUES_AFTER_S = 1.0
#: how long the finder waits for the broker's list of slot queues
QUEUE_LIST_WAIT_MS = 2000
#: seconds after start at which the markers are read again: what a dead processor's
#: transaction held (markers it was compacting) comes back only when the broker drops its
#: connection
REBROWSE_AFTER_S = (2.0, 5.0, 10.0, 20.0)


class SlotFinder:
    """Finds the slots a previous processor filed: by their markers at start, then again on a
    thread of its own; ``fresh_broker`` (the broker started with this processor, so no other
    processor's transaction can hold staged messages) reads the markers only once again."""

    def __init__(
        self, factory: ConnectionFactory, book: SlotBook, stop: threading.Event, fresh_broker: bool
    ) -> None:
        self._factory = factory
        self._book = book
        self._stop = stop
        self._rebrowse_at = () if fresh_broker else REBROWSE_AFTER_S
        #: what the thread that looks again found, for the deliverer (Deliverer._recheck)
        self.found: queue.SimpleQueue[list[int]] = queue.SimpleQueue()
        self._started = time.monotonic()

    def start(self) -> list[int]:
        """The slots the markers name now (SlotBook.recover); then starts the thread that
        looks again."""
        self._started = time.monotonic()
        with self._factory.create_context() as ctx:
            found = self._book.recover(ctx)  # by the markers: quick, so delivery resumes at once
        threading.Thread(target=self._look_again, name="pyjms-delay-slot-list", daemon=True).start()
        return found

    def _look_again(self) -> None:
        """The thread that finds slots again after start: what it finds goes to ``found``."""
        try:
            with jvm.java_thread(), self._factory.create_context() as ctx:
                if not self._stop.wait(LIST_QUEUES_AFTER_S):
                    self._list_slot_queues(ctx)
                for after_s in self._rebrowse_at:
                    if self._stop.wait(max(0.0, self._started + after_s - time.monotonic())):
                        return
                    self.found.put(self._book.recover(ctx))
        except Exception as e:  # the broker went away; or stopping
            if not self._stop.is_set() and not jvm.shutting_down():
                _log.warning("delay processor: cannot read the slot markers again: %s", e)

    def _list_slot_queues(self, ctx: JMSContext) -> None:
        try:
            names = ctx.channel.queue_names(SLOT_PREFIX, QUEUE_LIST_WAIT_MS, "list slot queues")
            if names is None:
                return  # the provider cannot list them: the markers are all there is
            found = self._book.recover(
                ctx, names, lambda queues: ctx.channel.non_empty_queues(queues, "find slot queues")
            )
        except Exception as e:  # e.g. not allowed to read the broker's advisories; or stopping
            if not self._stop.is_set() and not jvm.shutting_down():
                _log.warning(
                    "delay processor: the broker did not list its slot queues (%s); "
                    "slots are found by their markers alone",
                    e,
                )
            return
        if found:
            _log.warning(
                "delay processor: found %d slot queue(s) without a marker: %s",
                len(found),
                ", ".join(str(slot) for slot in found[:10]),
            )
