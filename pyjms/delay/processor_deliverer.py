"""The delay processor's deliverer: drains each time slot to its targets when the slot ends.

It takes the earliest pending slot from the slot book, opens the slot's consumer a few slots
before its end (so that the broker has dispatched the slot's messages when it ends), and at
the end drains it in chunks, one transaction each, each what the broker has dispatched (a
transaction gets at most a broker page of a queue). The shim moves a chunk itself when every
message in it is plain (org.pyjms.shim.delay.DueMover); otherwise the chunk comes back and
the Mover handles it message by message, in delivery-time order. When the deliverer is behind
(the next slot has ended too) one transaction takes the last chunks of several slots.
Lateness is at most a slot plus the work. The slots a previous processor filed are found by
the SlotFinder (processor_finder) and read again in spare time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from pyjms.api.bulk import DueMover
from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.consumer import JMSConsumer
from pyjms.api.context import JMSContext
from pyjms.api.expiry import now_ms
from pyjms.api.factory import ConnectionFactory
from pyjms.api.message import Message
from pyjms.api.quietlog import QuietLog
from pyjms.delay import staging
from pyjms.delay.processor_finder import SlotFinder
from pyjms.delay.processor_log import log_poison_notes
from pyjms.delay.processor_moves import MOST_ATTEMPTS, Mover, ProcessorStats
from pyjms.delay.processor_rules import PlainTargets, has_rules
from pyjms.delay.processor_slots import SlotBook
from pyjms.errors import JMSRuntimeException

_log = logging.getLogger("pyjms.delay")

#: most moves per transaction when a slot is drained. A chunk is what the broker has dispatched
#: (never waited for beyond the first message), so a broker page bounds it too: ActiveMQ's
#: maxPageSize, 200 by default, 2,000 for slot queues on pyjms brokers (see Deliverer._drain)
DRAIN_CHUNK = 1000
#: the deliverer opens a slot's consumer this many slots before the slot ends
OPEN_AHEAD = 4
#: most slot consumers open ahead at once (a deliverer that is behind, as after a restart,
#: opens the next ended slots together, so that the broker dispatches them all meanwhile)
OPEN_AHEAD_MAX = 16
#: most consumers open at once of slots found at start-up that have ended: most such slots were
#: drained before the restart (their markers are compacted only once as many are dead as are
#: live), and each costs a consumer and its share of one RECOVERED_WAIT_MS. 16 at a time left a
#: restarted processor reading ~800 empty slots for ~10 s before its first delivery
RECOVERED_OPEN_AHEAD = 256
#: consumers of found slots opened per step while no slot of the book is pending: it bounds the
#: slots read per RECOVERED_WAIT_MS (16 read ~700 overdue slots at ~50/s: amqp, under load)
IDLE_OPENING = 64
#: how long a consumer of a slot found at start-up waits for its first message after opening:
#: that slot's count is unknown, so it is read until this passes with nothing more
RECOVERED_WAIT_MS = 200
#: ActiveMQ's default page: a chunk this big may have more behind it, paged in at its commit
SMALLEST_PAGE = 200
#: seconds after a compaction that gave way to a slot before the next one starts (_compact)
COMPACT_PAUSE_S = 0.5


class Deliverer:
    """The deliverer thread. It owns its context and what is made on it, the slot consumers
    opened ahead, the moves not committed yet, and the slots it reads again later; it shares
    the slot book with the sorter and the plain targets with the rules thread."""

    def __init__(
        self,
        factory: ConnectionFactory,
        book: SlotBook,
        stats: ProcessorStats,
        plain: PlainTargets,
        new_mover: Callable[[JMSContext], Mover],
        stop: threading.Event,
        suspended: threading.Event,
        record_lateness: bool,
        log: QuietLog,
        fresh_broker: bool = False,
    ) -> None:
        self._factory = factory
        self._log = log
        self._book = book
        self._stats = stats
        self._plain = plain
        self._new_mover = new_mover
        self._stop = stop
        self._suspended = suspended
        self._record_lateness = record_lateness
        # the broker started with this processor: no other processor's transaction can hold
        # staged messages, so the slots found at start are read once, not again and again
        self._fresh_broker = fresh_broker
        # finds the slots a previous processor filed, at start and again later (for _recheck)
        self._finder = SlotFinder(factory, book, stop, fresh_broker)
        self._slot_ms = book.slot_ms
        # kept across runs (a run ends when its connection fails)
        self._suspect: set[int] = set()  # slots whose batch commit failed: moved one by one
        self._poison: set[str] = set()  # staged copies whose own move failed at commit
        # slots read again later: found at start-up (a killed processor's transaction may still
        # hold some of their messages until the broker notices its connection is gone), or
        # still owed filed messages after their drain
        self._rechecks: list[tuple[float, int, int]] = []  # (monotonic time, slot, checks left)
        # rechecks that came due, to read in spare time (_read_later) as the slots the book set
        # aside are; each with how many times to read it again after that
        self._later: dict[int, int] = {}
        self._compact_after = 0.0  # monotonic time before which no compaction starts (_compact)
        # made again on each run's context
        self._ctx: JMSContext | None = None
        self._mover: Mover | None = None
        self._due_mover: DueMover | None = None
        self._opened: dict[int, tuple[JMSConsumer, float]] = {}  # slot -> its consumer, monotonic time opened
        self._later_opened: dict[int, tuple[JMSConsumer, float]] = {}  # the same, of slots in _later
        self._uncommitted: list[tuple[int, int]] = []  # (slot, moves) the shim made, not committed yet

    def start(self) -> None:
        """Before the thread starts: finds the slots a previous processor filed (SlotFinder);
        each is read again a few times later (unless the broker started with this processor).

        Those that have ended are set aside (SlotBook.recover) and read in spare time, newest
        first (_read_later): most of them were drained before the takeover (markers go only at
        a compaction), and reading hundreds of them first, oldest first, held up the slots due
        after a takeover for seconds (bench/bench_takeover.py)."""
        self._recheck_found(self._finder.start())

    def _recheck_found(self, found: list[int]) -> None:
        if not self._fresh_broker:
            self._rechecks.extend((time.monotonic() + 2.0, slot, 3) for slot in found)

    def run(self) -> None:
        with self._factory.create_context(SESSION_TRANSACTED) as ctx:
            self._ctx = ctx
            self._mover = self._new_mover(ctx)
            self._plain.reset()  # a Java object of the previous JVM session is not reused
            self._due_mover = DueMover(ctx, MOST_ATTEMPTS)
            self._opened = {}
            self._later_opened = {}
            self._uncommitted = []
            try:
                while not self._stop.is_set():
                    self._deliver_next()
                self._commit_moves()
            except BaseException:
                self._requeue_uncommitted()  # rolled back when the context closes
                raise

    def _deliver_next(self) -> None:
        """One step: waits for the first slot's end, or drains it.

        A drained slot's last chunk is committed at once unless the next slot is due too (the
        deliverer is behind): then one transaction takes the last chunks of several slots, up
        to DRAIN_CHUNK moves, so a deliverer that fell behind catches up with fewer commits.
        """
        if self._suspended.is_set():
            self._commit_moves()
            self._stop.wait(0.1)
            return
        self._recheck()
        first = self._book.first()
        if not first:
            self._commit_moves()
            if self._read_later(IDLE_OPENING):
                return
            # idle: the markers of what was drained go now, until the sorter files a slot (a
            # burst begins); not while slots wait to be read later (each read would compact)
            if self._book.dead_markers() and not self._later and not self._book.aside(1):
                assert self._ctx is not None
                self._book.compact_markers(self._ctx, self._kept(), lambda: bool(self._book.first()))
            self._stop.wait(0.02)
            return
        slot = first[0]
        wait_ms = (slot + 1) * self._slot_ms - now_ms()  # the slot's end: all of it is due
        if wait_ms > 0:
            self._commit_moves()
            self._open_ahead(OPEN_AHEAD_MAX)
        elif not self._book.was_filed(slot):
            # found at start-up, so ended long ago, like those after it: open them together,
            # so that they share RECOVERED_WAIT_MS (a slot this processor filed is opened
            # ahead only while it is on time: more consumers at once slowed a busy broker)
            self._open_ahead(RECOVERED_OPEN_AHEAD)
        if wait_ms > 0:
            if not self._read_later(OPEN_AHEAD):
                self._stop.wait(min(wait_ms, 20) / 1000)  # re-check: an earlier slot may appear
            return
        complete = self._drain(slot)
        finished = self._book.finish(slot, complete)
        if finished is None:
            return  # the sorter committed more to it while it drained: again
        compact, following = finished
        if not complete:  # owed messages did not come: read the slot again later
            _log.warning(
                "slot %s: %d filed messages did not arrive in time; reading it again later",
                slot,
                self._book.owed(slot) or 0,
            )
            self._rechecks.append((time.monotonic() + 2.0, slot, 15))  # every 2 s for 30 s
        behind = following is not None and (following + 1) * self._slot_ms <= now_ms()
        if compact or not behind or self._chunk_full():
            self._commit_moves()
        if compact:
            self._compact()

    def _compact(self) -> None:
        """Compacts the markers, unless a slot is due or a compaction gave way to one less than
        COMPACT_PAUSE_S ago: each begins with a read of the marker queue, and after a takeover
        (hundreds of dead markers, so every drained slot asked for a compaction that gave way
        at its first batch) they held every slot up ~40 ms and the deliverer fell behind."""
        if time.monotonic() < self._compact_after or self._slot_is_due():
            return
        assert self._ctx is not None
        self._book.compact_markers(self._ctx, self._kept(), self._slot_is_due)
        if self._book.dead_markers():  # it gave way to a slot that came due
            self._compact_after = time.monotonic() + COMPACT_PAUSE_S

    def _kept(self) -> set[int]:
        """The slots read again later, which keep their markers at a compaction."""
        return {slot for _, slot, _ in self._rechecks} | set(self._later)

    def _read_later(self, opening: int) -> bool:
        """In spare time (no slot of the book has ended): reads the slots the book set aside (not
        read since they were found), then those of _later, whose consumers have been open
        RECOVERED_WAIT_MS, so that an empty one costs no wait; each kind the newest first (what
        a killed processor left is in the slots that ended last), all in one transaction. Opens
        the consumers of the next ones, ``opening`` at a time, up to RECOVERED_OPEN_AHEAD.
        Whether it read one.

        It stops between slots once a slot of the book has ended (which so waits for one read
        at most) or DRAIN_CHUNK moves are uncommitted. Read one per call, with a commit each, and
        mixed with the slots read again (3 times each), the ~900 slots of a processor that had
        fallen behind under load came up to 65 s late (test_processor_takeover.py, amqp)."""
        first_reads = self._book.aside(RECOVERED_OPEN_AHEAD)  # the newest first
        rereads = sorted(set(self._later) - set(first_reads), reverse=True)
        newest = [*first_reads, *rereads][:RECOVERED_OPEN_AHEAD]
        if not newest:
            return False
        room = max(0, min(opening, RECOVERED_OPEN_AHEAD - len(self._later_opened)))
        for closed in [slot for slot in newest if slot not in self._later_opened][:room]:
            if self._slot_is_due():
                break  # each open is a round trip to the broker: the slot that ended goes first
            self._later_opened[closed] = (self._slot_consumer(closed), time.monotonic())
        aged = time.monotonic() - RECOVERED_WAIT_MS / 1000
        ready = [s for s in newest if s in self._later_opened and self._later_opened[s][1] <= aged]
        compact = False
        for n, slot in enumerate(ready):
            if n and (self._slot_is_due() or self._chunk_full()):
                break
            compact = self._read_slot_later(slot) or compact
        self._commit_moves()
        if compact:
            self._compact()
        return bool(ready)

    def _read_slot_later(self, slot: int) -> bool:
        """Reads one slot found at start-up or of _later (its consumer open), leaving its moves
        uncommitted; whether the markers are due for compaction."""
        again = self._later.pop(slot, 0)
        consumer = self._later_opened.pop(slot)
        if slot in self._opened:  # pending in the book again (the sorter filed it late)
            consumer[0].close()
        else:
            self._opened[slot] = consumer
        complete = self._drain(slot, patience_s=0.5)
        compact = False
        if self._book.is_aside(slot):
            finished = self._book.finish(slot, complete)
            if finished is None:  # the sorter committed more to it meanwhile: read it again
                self._later[slot] = again
                return False
            compact = finished[0]
        if again:
            self._rechecks.append((time.monotonic() + 2.0, slot, again))
        return compact

    def _chunk_full(self) -> bool:
        """Whether the moves not committed yet make a transaction's worth (DRAIN_CHUNK)."""
        return sum(n for _, n in self._uncommitted) >= DRAIN_CHUNK

    def _slot_is_due(self) -> bool:
        """Whether a slot has ended, so its messages wait for this thread."""
        first = self._book.first()
        return bool(first) and (first[0] + 1) * self._slot_ms <= now_ms()

    def _open_ahead(self, most: int) -> None:
        """Opens the consumers of the first ``most`` slots that end within OPEN_AHEAD slots, so
        the broker has dispatched their messages when they end (nothing is got before then): a
        consumer opened one slot ahead often held a few of its slot's messages at the end, and
        the rest took more transactions. A slot found at start-up is opened RECOVERED_WAIT_MS
        ahead, so that its drain does not wait for it (its count is unknown: _drain)."""
        now = now_ms()
        horizon = now + OPEN_AHEAD * self._slot_ms
        recovered_horizon = max(horizon, now + RECOVERED_WAIT_MS)
        first = self._book.first(most) if len(self._opened) < most else []
        for slot in first:
            end = (slot + 1) * self._slot_ms
            if end > recovered_horizon:
                break
            if slot not in self._opened and (end <= horizon or not self._book.was_filed(slot)):
                self._opened[slot] = (self._slot_consumer(slot), time.monotonic())

    def _slot_consumer(self, slot: int) -> JMSConsumer:
        """A consumer of a slot queue that takes its messages from the broker at once.

        JMSContext.create_consumer parks a queue consumer until its first receive (so that one
        kept for receive_by_token hoards nothing), so the consumers opened ahead prefetched
        nothing and each drain made its consumer again; a slot's consumer must have its slot
        dispatched to it when the slot ends. It is not registered with the context either (the
        context's list of consumers only grows; the deliverer makes one per slot).
        """
        ctx = self._ctx
        assert ctx is not None
        queue = self._book.slot_queue(slot)
        receiver = ctx.channel.consumer(queue.key, None, False, f"create_consumer({queue})")
        return JMSConsumer(ctx, receiver, queue, None)  # closed by _drain, or with the session

    def _commit_moves(self) -> None:
        """Commits the moves the shim made and left uncommitted (_uncommitted), if any."""
        if self._uncommitted:
            self._commit(lambda: self._suspect.update(slot for slot, _ in self._uncommitted))

    def _commit(self, on_failure: Callable[[], None]) -> None:
        """Commits the moves (with any the shim left uncommitted); a failed commit marks what to
        isolate and restarts the loop on a new connection (the provider may hold the messages of
        a failed commit until then)."""
        assert self._ctx is not None and self._mover is not None
        try:
            self._mover.flush()
            self._ctx.commit()
        except JMSRuntimeException:
            on_failure()
            if self._uncommitted:
                self._suspect.update(slot for slot, _ in self._uncommitted)
            raise
        self._uncommitted = []

    def _requeue_uncommitted(self) -> None:
        """The run failed with moves uncommitted: they are rolled back, so their slots are
        drained again (as pending slots, whatever the book said)."""
        pending, self._uncommitted = self._uncommitted, []
        for slot, n in pending:
            self._book.unmove(slot, n)
            self._stats.delivered -= n

    def _recheck(self) -> None:
        """Reads slots again every 2 s, in spare time (_read_later): recovered ones 3 times (what
        a dead processor's transaction held comes back only when the broker drops its
        connection), and ones whose filed messages did not arrive 15 times."""
        while not self._finder.found.empty():
            self._recheck_found(self._finder.found.get())
        now = time.monotonic()
        due = [r for r in self._rechecks if r[0] <= now]
        if not due:
            return
        self._rechecks = [r for r in self._rechecks if r[0] > now]
        for _, slot, left in due:
            not_over_ms = (slot + 1) * self._slot_ms - now_ms()
            if not_over_ms > 0:  # a slot still to come is read when it has ended, never early
                self._rechecks.append((now + not_over_ms / 1000, slot, left))
            else:
                # read in spare time (their consumers open together, so that they share one
                # wait for the broker's dispatch); read inline, hundreds of slots found at
                # start-up held up the slots due meanwhile for seconds
                self._later[slot] = max(self._later.get(slot, 0), left - 1)

    def _drain(self, slot: int, patience_s: float = 10) -> bool:
        """Moves every message of a slot to its target, in chunks of one transaction each.

        A transaction gets few messages from one queue: ActiveMQ keeps what an open
        transaction got paged in until it commits and pages in at most maxPageSize messages
        of a queue (200 by default; pyjms brokers page 2,000 of a slot queue), so a drain that
        waited for a whole big slot in one transaction waited for messages the broker would
        never dispatch to it. A chunk waits only for its first message and then takes what
        has been dispatched (at most DRAIN_CHUNK), is put in delivery-time order and committed
        with its gets.

        How many to expect is known for slots this processor filed (what the sorter committed
        minus what was moved, read again after each chunk); a slot found after a restart is
        read until it stays empty. Returns False if a filed slot was still owed messages after
        patience_s. Empty slot queues are left for the broker to collect (pyjms brokers
        do): deleting one could race with a late message.
        """
        opened: tuple[JMSConsumer, float] | None = self._opened.pop(slot, None)
        consumer, opened_at = opened or (self._slot_consumer(slot), time.monotonic())
        deadline = time.monotonic() + patience_s
        complete = True
        n = None  # the last chunk's size
        try:
            while True:
                owed = self._book.owed(slot)
                if owed is not None:
                    # a filed slot owed nothing more: take only what is already here (what the
                    # sorter commits meanwhile is counted by the book and drained again)
                    timeout = 20 if owed > 0 else 0
                elif n is None:
                    # a consumer has its queue's messages within ms of opening: an empty slot
                    # found at start-up costs no more than RECOVERED_WAIT_MS after that, and the
                    # slots opened ahead together share that wait
                    timeout = max(1, int(RECOVERED_WAIT_MS - (time.monotonic() - opened_at) * 1000))
                elif n >= SMALLEST_PAGE:
                    timeout = RECOVERED_WAIT_MS  # its commit may page in more
                elif (time.monotonic() - opened_at) * 1000 >= RECOVERED_WAIT_MS:
                    timeout = 1  # a slot found at start-up, dispatched long since: all of it is here
                else:
                    timeout = 20  # what was still on its way when the chunk was taken
                if slot in self._suspect:
                    batch = consumer.receive_batch(DRAIN_CHUNK, timeout)
                    if batch:
                        self._move(slot, batch)
                    n = len(batch)
                else:
                    n = self._move_plain(slot, consumer, timeout)
                if not n:
                    if owed is None or owed <= 0:
                        break
                    # waiting for owed messages: commit first, so that a consumer of this slot
                    # closed in this transaction really closes and hands back what it prefetched
                    self._commit_moves()
                    if time.monotonic() > deadline:
                        complete = False
                        break
                    continue
                if self._book.record_moved(slot, n) and (owed is not None or n >= SMALLEST_PAGE):
                    # the rest may wait for this transaction to free the broker's page (a slot
                    # found at start-up that came in less than a page is all here: its moves
                    # share the transaction of the slots after it, as a deliverer behind does)
                    self._commit_moves()
        finally:
            consumer.close()  # a provider closes it when the transaction ends (JMS)
        self._suspect.discard(slot)
        return complete

    def _move_plain(self, slot: int, consumer: JMSConsumer, timeout: int) -> int:
        """Moves a chunk of a slot in one transaction; returns how many messages it got.

        The shim moves the chunk itself when every message is plain: due (the slot has
        ended), unexpired, bound for a plain target (one Python found no rules for; the rules
        thread takes out a target that gains rules within about a second). Else the chunk
        comes back, in delivery-time order, and is handled here message by message; its
        targets without rules become plain.
        """
        ctx, due_mover = self._ctx, self._due_mover
        assert ctx is not None and due_mover is not None
        chunk = due_mover.move_due(
            consumer,
            DRAIN_CHUNK,
            timeout,
            self._plain.key_set(),
            self._plain.allowed_key_set(),
            f"delay processor slot {slot}",
        )
        messages = chunk.returned
        if messages:
            log_poison_notes(self._log)  # the chunk may have had poison too
            self._move(slot, messages)
            for m in messages:  # targets without rules: the shim may move their next ones
                try:
                    target = staging.staged_target(m)
                except JMSRuntimeException:
                    continue  # dead-lettered by the Mover
                if target.key not in self._plain and not has_rules(
                    ctx.provider.target_attributes(ctx, target)
                ):
                    self._plain.add(target.key)
            return len(messages)
        n = chunk.moved
        if n:
            self._uncommitted.append((slot, n))  # committed by _drain or _deliver_next
            # delivery time minus put time, of those not quarantined
            early_by = chunk.early_by_ms
            if chunk.quarantined:
                log_poison_notes(self._log)
            self._stats.delivered += len(early_by)
            self._stats.early += sum(1 for d in early_by if d > 0)
            if self._record_lateness:
                self._stats.lateness_ms.extend(-d for d in early_by)
        return n

    def _move(self, slot: int, messages: list[Message]) -> None:
        """Puts a chunk of a slot to its targets, in delivery-time order, in one transaction."""
        mover = self._mover
        assert mover is not None
        messages.sort(key=lambda m: m.get_long_property(staging.DELIVERY_TIME))
        if slot not in self._suspect:
            for m in messages:
                mover.deliver(m)
            self._commit(lambda: self._suspect.add(slot))
        else:
            # a put refused only at commit (providers send asynchronously in a transaction):
            # one move per transaction finds the message; its next attempt dead-letters it
            for m in messages:
                wire_id = m.get_message_token()
                if wire_id in self._poison:
                    mover.fail(
                        m,
                        staging.staged_target(m),
                        JMSRuntimeException("the put to the target failed at commit"),
                    )
                else:
                    mover.deliver(m)
                self._commit(lambda: self._poison.add(wire_id))
