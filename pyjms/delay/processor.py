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
import time
from collections.abc import Callable
from typing import Any

from pyjms.api.access import WriteCheck, anyone, temporary_only
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.factory import ConnectionFactory
from pyjms.api.leadership import Leadership
from pyjms.bridge import jvm
from pyjms.delay.processor_deliverer import (
    DRAIN_CHUNK,
    OPEN_AHEAD,
    OPEN_AHEAD_MAX,
    RECOVERED_WAIT_MS,
    SMALLEST_PAGE,
    Deliverer,
)
from pyjms.delay.processor_log import processor_log
from pyjms.delay.processor_moves import (
    DEFAULT_DEAD_LETTER_QUEUE,
    FEEDBACK,
    MOST_ATTEMPTS,
    MQFB_EXPIRATION,
    REPORT_DISCARD,
    REPORT_EXCEPTION,
    REPORT_EXPIRATION,
    Checks,
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
    "MOST_ATTEMPTS",
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
    "leader_role",
    "ProcessorStats",
    "control_queue",
    "parse_marker",
    "processor_answers",
]


#: the first pause before a failed thread (or a failed start) is tried again; it doubles each
#: time, up to MOST_BACKOFF_S, and starts again from here once the thread ran HEALTHY_AFTER_S
FIRST_BACKOFF_S = 0.25
MOST_BACKOFF_S = 30.0
HEALTHY_AFTER_S = 10.0


def leader_role(staging_queue: str) -> str:
    """The role the processors of one staging queue are elected for (pyjms.api.leadership)."""
    return f"delay.{staging_queue}"


class _Health:
    """What went wrong lately, per thread: the newest failure of each, until the thread has run
    HEALTHY_AFTER_S past its restart (bounded: one entry per thread name, and a count)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._problems: dict[str, tuple[str, float]] = {}  # name -> (what, monotonic time it ends)
        #: how many times a thread failed, or a start did
        self.failures = 0

    def failed(self, name: str, error: BaseException, backoff_s: float) -> None:
        with self._lock:
            self.failures += 1
            self._problems[name] = (f"{name}: {error}", time.monotonic() + backoff_s + HEALTHY_AFTER_S)

    def cleared(self, name: str) -> None:
        with self._lock:
            self._problems.pop(name, None)

    def problem(self) -> str | None:
        now = time.monotonic()
        with self._lock:
            live = [what for what, until in self._problems.values() if until > now]
        return "; ".join(live) or None


class _Term:
    """What one term of leadership runs: its own slot book and threads, and their stop event."""

    def __init__(self, owner: DelayProcessor, fresh_broker: bool) -> None:
        self.stop = threading.Event()
        self.book = SlotBook(owner.staging, owner.slot_ms, owner.log, owner.dead_letter_queue)
        self.plain = PlainTargets(checks_users=owner.checks.target is not None)
        checks = Checks(owner.checks.target, owner.checks.reply_to, self.plain.allow)

        def new_mover(ctx: JMSContext) -> Mover:
            return Mover(ctx, owner.stats, owner.dead_letter_queue, owner.record_lateness, checks, owner.log)

        self.rules = RulesWatcher(owner.factory, owner.staging, self.plain, self.stop)
        suspended = self.rules.suspended
        self.sorter = Sorter(
            owner.factory, self.book, owner.stats, new_mover, self.stop, suspended, owner.log
        )
        self.deliverer = Deliverer(
            owner.factory,
            self.book,
            owner.stats,
            self.plain,
            new_mover,
            self.stop,
            suspended,
            owner.record_lateness,
            owner.log,
            fresh_broker,
        )
        self.threads: list[threading.Thread] = []


class DelayProcessor:
    """Runs the sorter, the deliverer, the rules and the ping threads for one staging queue.

    ``start()`` returns at once: the processor stands for election (``delay.<staging>``) and
    runs its threads while the broker has it lead (``active``); the ping thread answers
    throughout, with whether this one is active and healthy (``status()``).

    ``fresh_broker``: the broker started with this processor (a pyjms broker runs its own), so
    no other processor's transaction can hold staged messages: the slots found at its first
    election are read once instead of again every 2 s for a while (a later election, a
    takeover, is no fresh broker). ``slot_ms``: the slot length (1..1000 ms), by default the
    provider's (ProviderPlugin.delay_slot_ms: 20 on Artemis) or SLOT_MS.

    ``may_write``: where the user who staged a message (its JMSXUserID) may write
    (pyjms.api.access). A broker that runs the processor passes its own rules: then a target
    the user may not write is dead-lettered with MQRC_NOT_AUTHORIZED, and a report goes to a
    reply-to only where the user may write. None (a processor beside a broker whose rules it
    cannot read): targets are left to the broker, which checked who may stage (D11), and
    reports go to temporary destinations only (``temporary_only``)."""

    def __init__(
        self,
        factory: ConnectionFactory,
        *,
        staging_queue: str | None = None,
        slot_ms: int | None = None,
        dead_letter_queue: str = DEFAULT_DEAD_LETTER_QUEUE,
        record_lateness: bool = False,
        fresh_broker: bool = False,
        may_write: WriteCheck | None = None,
    ) -> None:
        # its own rollbacks must never turn a staged message into provider "poison"; and when it
        # dies, the broker must hand its lock and its transactions' messages on within seconds
        base = handler_factory(factory)
        self.factory = base.provider.service_factory(base)
        self.staging = staging_queue or factory.staging_queue
        if slot_ms is None:  # the provider's, else SLOT_MS
            slot_ms = self.factory.provider.delay_slot_ms or SLOT_MS
        if isinstance(slot_ms, bool) or not isinstance(slot_ms, int) or not 1 <= slot_ms <= 1000:
            raise InvalidArgumentRuntimeException(f"slot_ms {slot_ms!r} must be an int of 1..1000 ms")
        self.slot_ms = slot_ms
        self.dead_letter_queue = dead_letter_queue
        self.record_lateness = record_lateness
        self.stats = ProcessorStats()
        #: everything the processor logs about what others put (poison, refusals) is rate-limited
        self.log = processor_log()
        # a broker that authenticates nobody lets anyone write anywhere: nothing to check
        self.checks = Checks(
            target=None if may_write in (None, anyone) else may_write,
            reply_to=may_write or temporary_only,
            allow=lambda user, key: None,
        )
        self._fresh_broker = fresh_broker
        self._stop = threading.Event()
        # start() holds it throughout, so that stop() waits for a start under way
        self._lifecycle = threading.Lock()
        # a term begins and ends holding it (on the election thread, or in stop())
        self._terms = threading.Lock()
        self._term: _Term | None = None
        self._elected_once = False
        self._health = _Health()
        self._ping = PingResponder(self.factory, self.staging, self._stop, self.status, self.checks.reply_to)
        self._ping_thread: threading.Thread | None = None
        self._leadership = Leadership(self.factory, leader_role(self.staging), self._elected, self._deposed)
        self._started = False

    # ------------------------------------------------------------------ names

    def slot_queue(self, slot: int) -> Queue:
        return SlotBook(self.staging, self.slot_ms).slot_queue(slot)

    @property
    def slots_queue(self) -> Queue:
        return SlotBook(self.staging, self.slot_ms).slots_queue

    @property
    def control_queue(self) -> Queue:
        return control_queue(self.staging)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> DelayProcessor:
        """Stands for election and answers pings; returns at once (``active`` once elected)."""
        with self._lifecycle:
            if self._stop.is_set() or self._started:
                # stopped first (a broker stopped while it started this processor in the
                # background): a stopped processor never starts
                return self
            self._started = True
            self._ping_thread = threading.Thread(
                target=self._guard("ping", self._ping.run, self._stop), name="pyjms-delay-ping", daemon=True
            )
            self._ping_thread.start()
            self._leadership.start()
            return self

    def stop(self, timeout: float = 10) -> None:
        self._stop.set()
        with self._lifecycle:  # a start under way ends first
            self._leadership.stop(timeout)  # steps down: its threads stop first (_deposed)
            self._deposed()
            if self._ping_thread is not None:
                self._ping_thread.join(timeout)
                self._ping_thread = None

    def __enter__(self) -> DelayProcessor:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def wait_until_active(self, timeout: float | None = None) -> bool:
        """Waits until the broker elected this processor; whether it was."""
        return self._leadership.wait_until_leading(timeout)

    # ------------------------------------------------------------------ state

    @property
    def active(self) -> bool:
        """Whether this processor leads (moves messages); else it stands by."""
        return self._leadership.leading and self._term is not None

    @property
    def problem(self) -> str | None:
        """What keeps this processor from working now (a thread failing, a start failing)."""
        return self._health.problem()

    def status(self) -> dict[str, Any]:
        """Its ping's answer: whether it is active, whether it is healthy, and why not."""
        problem = self.problem
        return {
            "active": self.active,
            "healthy": problem is None,
            "problem": problem or "",
            "candidate": self._leadership.candidate,
            "failures": self._health.failures,
        }

    @property
    def suspended(self) -> bool:
        """Whether the processor stopped moving because its staging queue is PUT(DISABLED)."""
        term = self._term
        return term is not None and term.rules.suspended.is_set()

    @property
    def pending_slots(self) -> int:
        term = self._term
        return term.book.pending() if term is not None else 0

    @property
    def plain_targets(self) -> frozenset[str]:
        """The keys of the targets the shim moves to without Python (targets without rules)."""
        term = self._term
        return term.plain.keys() if term is not None else frozenset()

    # ------------------------------------------------------------------ terms

    def _elected(self) -> None:
        """On the election thread: a term begins; its threads start once the slot book is found
        again (on a thread of its own, which retries: the election thread must return)."""
        with self._terms:
            if self._stop.is_set() or self._term is not None:
                return
            fresh = self._fresh_broker and not self._elected_once
            self._elected_once = True
            term = self._term = _Term(self, fresh)
            t = threading.Thread(target=lambda: self._begin(term), name="pyjms-delay-start", daemon=True)
            term.threads.append(t)
            t.start()
        _log.info("delay processor %s on %s: active", self._leadership.candidate, self.staging)

    def _begin(self, term: _Term) -> None:
        """Finds the slots a previous processor filed (Deliverer.start), retrying with backoff
        while that fails, loudly; then starts the threads."""
        backoff = FIRST_BACKOFF_S
        with jvm.java_thread():
            while not term.stop.is_set():
                try:
                    term.deliverer.start()
                    break
                except Exception as e:  # the broker went away; a marker queue it cannot read...
                    if term.stop.is_set() or jvm.shutting_down():
                        return
                    self._health.failed("start", e, backoff)
                    _log.error(
                        "delay processor on %s cannot start: %s; trying again in %g s",
                        self.staging,
                        e,
                        backoff,
                    )
                    term.stop.wait(backoff)
                    backoff = min(backoff * 2, MOST_BACKOFF_S)
            self._health.cleared("start")
            with self._terms:
                if term.stop.is_set():
                    return
                for name, loop in (
                    ("sorter", term.sorter.run),
                    ("deliverer", term.deliverer.run),
                    ("rules", term.rules.run),
                ):
                    t = threading.Thread(
                        target=self._guard(name, loop, term.stop), name=f"pyjms-delay-{name}", daemon=True
                    )
                    t.start()
                    term.threads.append(t)

    def _deposed(self) -> None:
        """The lock is gone (or the processor stops): the term's threads end before this
        returns, so they never move a message while another processor leads."""
        with self._terms:
            term, self._term = self._term, None
            if term is None:
                return
            term.stop.set()
            threads = list(term.threads)
        for t in threads:
            if t is not threading.current_thread():
                t.join(10)
        if not self._stop.is_set():
            _log.warning(
                "delay processor %s on %s: no longer active; standing by",
                self._leadership.candidate,
                self.staging,
            )

    def _guard(self, name: str, loop: Callable[[], None], stop: threading.Event) -> Callable[[], None]:
        """Recoverable failures restart the loop (D19), after a pause that doubles each time up to
        MOST_BACKOFF_S; nothing is lost meanwhile. Only the newest failure is kept (_Health)."""

        def run() -> None:
            backoff = FIRST_BACKOFF_S
            with jvm.java_thread():
                while not stop.is_set():
                    began = time.monotonic()
                    try:
                        loop()
                    except Exception as e:  # the broker went away, a session broke...
                        if stop.is_set() or jvm.shutting_down():
                            return
                        if time.monotonic() - began > HEALTHY_AFTER_S:
                            backoff = FIRST_BACKOFF_S  # it ran well meanwhile
                        self._health.failed(name, e, backoff)
                        self.log.line(
                            _log,
                            logging.WARNING,
                            "delay processor %s failed, restarting in %g s: %s",
                            name,
                            backoff,
                            e,
                        )
                        stop.wait(backoff)
                        backoff = min(backoff * 2, MOST_BACKOFF_S)

        return run
