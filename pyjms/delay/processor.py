"""The delay processor: puts each staged message to its target when it is due (D03).

Four threads, each an object that owns its own state and its own context:

* the **sorter** (processor_sorter.Sorter) takes messages off the staging queue and files each
  under its time slot, a queue ``PYJMS.SLOT.<n>.<staging>`` holding the messages due in
  ``[n*slot_ms, (n+1)*slot_ms)``; messages due within two slots it puts to their target itself;
* the **deliverer** (processor_deliverer.Deliverer) drains each slot when it ends, in chunks of
  one transaction each, and reads again the slots that may still hold messages;
* the **rules** thread (processor_rules.RulesWatcher) keeps the set of targets the shim may
  move to without Python current, and stops the moving while the staging queue is
  PUT(DISABLED) (D19);
* the **ping** thread (processor_ping.PingResponder) answers pings on
  ``PYJMS.CONTROL.<staging>``, which is how producers detect that staging delay is available.

The sorter and the deliverer share only the slot book (processor_slots.SlotBook: the pending
slots, what was filed to and moved from each, and their markers on ``PYJMS.SLOTS.<staging>``,
from which a restarted processor finds every slot again), and each moves single messages with
its own Mover (processor_moves: put, expire with a report, or dead-letter). The shim's side is
org.pyjms.shim.delay (SlotFiler, DueMover): plain JMS, so this works on any provider.

Every move (get from one queue, put to the next) commits in one transaction on the broker,
so a processor killed at any point loses nothing and duplicates nothing: what was not
committed is redelivered to the next processor. Lateness is at most a slot (SLOT_MS, 10 ms
by default) plus the work. Slot markers carry the slot length; slots of another length are
filed again by the sorter at start-up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from pyjms.api.context import ConnectionFactory, JMSContext
from pyjms.api.destination import Queue
from pyjms.bridge import jvm
from pyjms.delay.processor_deliverer import (
    DRAIN_CHUNK,
    OPEN_AHEAD,
    OPEN_AHEAD_MAX,
    RECOVERED_WAIT_MS,
    SMALLEST_PAGE,
    Deliverer,
)
from pyjms.delay.processor_moves import (
    DEFAULT_DEAD_LETTER_QUEUE,
    FEEDBACK,
    MQFB_EXPIRATION,
    REPORT_DISCARD,
    REPORT_EXCEPTION,
    REPORT_EXPIRATION,
    Mover,
    ProcessorStats,
)
from pyjms.delay.processor_ping import PingResponder, control_queue, processor_answers
from pyjms.delay.processor_rules import PlainTargets, RulesWatcher
from pyjms.delay.processor_slots import LEGACY_SLOT_MS, SLOT_MS, SLOT_PREFIX, SlotBook, parse_marker
from pyjms.delay.processor_sorter import Sorter
from pyjms.dlq.forward import handler_factory
from pyjms.errors import InvalidArgumentRuntimeException

_log = logging.getLogger("pyjms.delay")

# the names this module had before it was split, still importable from here
__all__ = [
    "DEFAULT_DEAD_LETTER_QUEUE",
    "DRAIN_CHUNK",
    "FEEDBACK",
    "LEGACY_SLOT_MS",
    "MQFB_EXPIRATION",
    "OPEN_AHEAD",
    "OPEN_AHEAD_MAX",
    "RECOVERED_WAIT_MS",
    "REPORT_DISCARD",
    "REPORT_EXCEPTION",
    "REPORT_EXPIRATION",
    "SLOT_MS",
    "SLOT_PREFIX",
    "SMALLEST_PAGE",
    "DelayProcessor",
    "ProcessorStats",
    "control_queue",
    "parse_marker",
    "processor_answers",
]


class DelayProcessor:
    """Runs the sorter, the deliverer, the rules and the ping threads for one staging queue.

    ``fresh_broker``: the broker started with this processor (a pyjms broker runs its own), so
    no other processor's transaction can hold staged messages: the slots found at start are
    read once instead of again every 2 s for a while. ``slot_ms``: the slot length (1..1000 ms),
    by default the provider's (ProviderPlugin.delay_slot_ms: 20 on Artemis) or SLOT_MS."""

    def __init__(
        self,
        factory: ConnectionFactory,
        *,
        staging_queue: str | None = None,
        slot_ms: int | None = None,
        dead_letter_queue: str = DEFAULT_DEAD_LETTER_QUEUE,
        record_lateness: bool = False,
        fresh_broker: bool = False,
    ) -> None:
        # its own rollbacks must never turn a staged message into provider "poison"
        self.factory = handler_factory(factory)
        self.staging = staging_queue or factory.staging_queue
        if slot_ms is None:  # the provider's, else SLOT_MS
            slot_ms = self.factory.provider.delay_slot_ms or SLOT_MS
        if isinstance(slot_ms, bool) or not isinstance(slot_ms, int) or not 1 <= slot_ms <= 1000:
            raise InvalidArgumentRuntimeException(f"slot_ms {slot_ms!r} must be an int of 1..1000 ms")
        self.slot_ms = slot_ms
        self.dead_letter_queue = dead_letter_queue
        self.stats = ProcessorStats()
        self._stop = threading.Event()
        # start() holds it throughout, so that stop() waits for a start under way and then joins
        # every thread it started
        self._lifecycle = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException] = []
        self._book = SlotBook(self.staging, slot_ms)
        self._plain = PlainTargets()

        def new_mover(ctx: JMSContext) -> Mover:
            return Mover(ctx, self.stats, dead_letter_queue, record_lateness)

        self._rules = RulesWatcher(self.factory, self.staging, self._plain, self._stop)
        suspended = self._rules.suspended
        self._sorter = Sorter(self.factory, self._book, self.stats, new_mover, self._stop, suspended)
        self._deliverer = Deliverer(
            self.factory,
            self._book,
            self.stats,
            self._plain,
            new_mover,
            self._stop,
            suspended,
            record_lateness,
            fresh_broker,
        )
        self._ping = PingResponder(self.factory, self.staging, self._stop)

    # ------------------------------------------------------------------ names

    def slot_queue(self, slot: int) -> Queue:
        return self._book.slot_queue(slot)

    @property
    def slots_queue(self) -> Queue:
        return self._book.slots_queue

    @property
    def control_queue(self) -> Queue:
        return control_queue(self.staging)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> DelayProcessor:
        with self._lifecycle:
            if self._stop.is_set():
                # stopped first (a broker stopped while it started this processor in the
                # background): a stopped processor never starts
                return self
            self._deliverer.start()  # finds the slots a previous processor filed, before any thread runs
            for name, loop in (
                ("sorter", self._sorter.run),
                ("deliverer", self._deliverer.run),
                ("ping", self._ping.run),
                ("rules", self._rules.run),
            ):
                t = threading.Thread(target=self._guard(name, loop), name=f"pyjms-delay-{name}", daemon=True)
                t.start()
                self._threads.append(t)
            return self

    def stop(self, timeout: float = 10) -> None:
        self._stop.set()
        with self._lifecycle:  # a start under way ends first
            for t in self._threads:
                t.join(timeout)
            self._threads.clear()

    def __enter__(self) -> DelayProcessor:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def suspended(self) -> bool:
        """Whether the processor stopped moving because its staging queue is PUT(DISABLED)."""
        return self._rules.suspended.is_set()

    @property
    def pending_slots(self) -> int:
        return self._book.pending()

    @property
    def plain_targets(self) -> frozenset[str]:
        """The keys of the targets the shim moves to without Python (targets without rules)."""
        return self._plain.keys()

    def _guard(self, name: str, loop: Callable[[], None]) -> Callable[[], None]:
        """Recoverable failures restart the loop after a pause (D19); nothing is lost meanwhile."""

        def run() -> None:
            with jvm.java_thread():
                while not self._stop.is_set():
                    try:
                        loop()
                    except Exception as e:  # the broker went away, a session broke...
                        if self._stop.is_set() or jvm.shutting_down():
                            return
                        self._errors.append(e)
                        _log.warning("delay processor %s failed, restarting: %s", name, e)
                        self._stop.wait(1.0)

        return run
