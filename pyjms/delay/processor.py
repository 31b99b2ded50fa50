"""The delay processor: puts each staged message to its target when it is due (D03).

Two threads, each with its own transacted context, do the moving:

* the **sorter** takes messages off the staging queue and files each under its time slot:
  a queue ``PYJMS.SLOT.<n>.<staging>`` holding the messages due in ``[n*slot_ms, (n+1)*slot_ms)``.
  Messages due within two slots are held by the sorter itself and put to their target when
  due.
  The first message of a new slot also records the slot on ``PYJMS.SLOTS.<staging>``, in the same
  transaction, so a restarted processor finds every slot again. Messages already due go
  straight to their target.
* the **deliverer** keeps the known slots in a heap (O(log n) per slot), opens a slot's
  consumer a few slots before its end, and at the end drains it in chunks, one transaction
  each, each what the broker has dispatched (a transaction gets at most a broker page of a
  queue): orders each chunk by delivery time and puts each message to its target, or
  discards it with an expiration report if it expired while staged (D18). When it is behind
  (the next slot has ended too) one transaction takes the last chunks of several slots. The
  shim moves plain chunks itself (Receiver.deliverDue); Python keeps the policy. Lateness is
  at most a slot (SLOT_MS, 20 ms by default) plus the work. Slot markers carry
  the slot length; slots of another length are filed again by the sorter at start-up.

Every move (get from one queue, put to the next) commits in one transaction on the broker,
so a processor killed at any point loses nothing and duplicates nothing: what was not
committed is redelivered to the next processor. Slot queues are JMS queues on the same
broker, so this works on any provider. A third thread answers pings on
``PYJMS.CONTROL.<staging>``, which is how producers detect that staging delay is available;
a fourth re-reads the rules of the targets the shim moves to (DelayProcessor._rules), and
the staging queue's: PUT(DISABLED) on it stops the moving until it is PUT(ENABLED) again, which
is how IBM MQ has an administrator stop and restart its delay processor (D19).
"""

from __future__ import annotations

import heapq
import logging
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.consumer import JMSConsumer
from pyjms.api.context import ConnectionFactory, JMSContext
from pyjms.api.destination import Destination, Queue, from_key
from pyjms.api.message import KEEP, Message
from pyjms.bridge import codec as C
from pyjms.bridge import jvm
from pyjms.bridge.errors import translate
from pyjms.delay import staging
from pyjms.dlq import header as dlh
from pyjms.dlq.forward import handler_factory
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException
from pyjms.rules.delivery import check_target_accepts
from pyjms.rules.expiry import now_ms

_log = logging.getLogger("pyjms.delay")

#: report options, as IBM MQ's JMS classes name them (message properties)
REPORT_EXPIRATION = "JMS_IBM_Report_Expiration"
REPORT_EXCEPTION = "JMS_IBM_Report_Exception"
REPORT_DISCARD = "JMS_IBM_Report_Discard_Msg"
FEEDBACK = "JMS_IBM_Feedback"
MQFB_EXPIRATION = 258
DEFAULT_DEAD_LETTER_QUEUE = "SYSTEM.DEAD.LETTER.QUEUE"
#: slot queues are PYJMS.SLOT.<n>.<staging queue>, so one broker policy covers them all
SLOT_PREFIX = "PYJMS.SLOT."
#: most moves per transaction when a slot is drained. A chunk is what the broker has dispatched
#: (never waited for beyond the first message), so a broker page bounds it too: ActiveMQ's
#: maxPageSize, 200 by default, 2,000 for slot queues on pyjms brokers (see DelayProcessor._drain)
DRAIN_CHUNK = 1000
#: the deliverer opens a slot's consumer this many slots before the slot ends
OPEN_AHEAD = 4
#: most slot consumers open ahead at once (a deliverer that is behind, as after a restart,
#: opens the next ended slots together, so that the broker dispatches them all meanwhile)
OPEN_AHEAD_MAX = 16
#: how long a consumer of a slot found at start-up waits for its first message after opening:
#: that slot's count is unknown, so it is read until this passes with nothing more
RECOVERED_WAIT_MS = 200
#: ActiveMQ's default page: a chunk this big may have more behind it, paged in at its commit
SMALLEST_PAGE = 200
#: how long a time slot is. A message waits at most this long after it is due before its slot
#: is moved: 20 ms gave a p99 lateness about 35 ms lower than 50 ms (bench/bench_delay.py)
SLOT_MS = 20
#: the slot length of slot markers written without one (pyjms before slots carried their length)
LEGACY_SLOT_MS = 50


def control_queue(staging_queue: str) -> Queue:
    return Queue(f"PYJMS.CONTROL.{staging_queue}")


@dataclass
class ProcessorStats:
    staged: int = 0  # taken off the staging queue
    delivered: int = 0
    expired: int = 0
    failed: int = 0  # could not be put to the target
    early: int = 0  # delivered before their delivery time: must stay 0
    lateness_ms: list[int] = field(default_factory=list)  # per delivery, when recording


class DelayProcessor:
    """Runs the sorter, the deliverer and the ping responder for one staging queue."""

    def __init__(
        self,
        factory: ConnectionFactory,
        *,
        staging_queue: str | None = None,
        slot_ms: int = SLOT_MS,
        dead_letter_queue: str = DEFAULT_DEAD_LETTER_QUEUE,
        record_lateness: bool = False,
    ) -> None:
        # its own rollbacks must never turn a staged message into provider "poison"
        self.factory = handler_factory(factory)
        self.staging = staging_queue or factory.staging_queue
        if isinstance(slot_ms, bool) or not isinstance(slot_ms, int) or not 1 <= slot_ms <= 1000:
            raise InvalidArgumentRuntimeException(f"slot_ms {slot_ms!r} must be an int of 1..1000 ms")
        self.slot_ms = slot_ms
        self.dead_letter_queue = dead_letter_queue
        self.stats = ProcessorStats()
        self._record_lateness = record_lateness
        self._slots: list[int] = []  # heap of pending slot numbers
        self._known: set[int] = set()
        self._dead_markers = 0  # markers of drained slots, removed in bulk (amortized O(1))
        # per slot: messages the sorter committed, and messages the deliverer moved on; their
        # difference is what a drain waits for (the two threads race, so never below zero)
        self._filed: dict[int, int] = {}
        self._moved: dict[int, int] = {}
        self._suspect: set[int] = set()  # slots whose batch commit failed: moved one by one
        self._poison: set[str] = set()  # staged copies whose own move failed at commit
        # slots found at start-up: a killed processor's transaction may still hold some of their
        # messages until the broker notices its connection is gone, so they are read again later
        self._rechecks: list[tuple[float, int, int]] = []  # (monotonic time, slot, checks left)
        self._drained: set[int] = set()  # slots drained whose markers are not compacted yet
        self._rebrowse_at = [2.0, 5.0, 10.0, 20.0]  # seconds after start
        # slot queues of another slot length (found at start-up, see _recover_slots): the sorter
        # files their messages again under this processor's slots, then their markers go
        self._foreign: dict[str, str] = {}  # slot queue -> its marker text, still to file again
        # targets without rules (the deliverer's, a java.util.Set for the shim), and when found
        self._plain: Any = None
        self._plain_keys: set[str] = set()
        self._opened: dict[int, tuple[Any, float]] = {}  # slot -> (its consumer, monotonic time opened)
        self._slot_names: tuple[Any, Any] = ()  # the sorter's (prefix, suffix) of slot queue names, as Java strings
        self._uncommitted: list[tuple[int, int]] = []  # (slot, moves) the shim made, not committed yet
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._suspended = threading.Event()  # the staging queue is PUT(DISABLED): no moves (D19)
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException] = []

    # ------------------------------------------------------------------ lifecycle

    def slot_queue(self, slot: int) -> Queue:
        return Queue(f"{SLOT_PREFIX}{slot}.{self.staging}")

    @property
    def slots_queue(self) -> Queue:
        return Queue(f"PYJMS.SLOTS.{self.staging}")

    @property
    def control_queue(self) -> Queue:
        return control_queue(self.staging)

    def start(self) -> DelayProcessor:
        self._started = time.monotonic()
        self._recover_slots()
        for name, target in (("sorter", self._sorter), ("deliverer", self._deliverer), ("ping", self._ping),
                             ("rules", self._rules)):
            t = threading.Thread(target=self._guard(target), name=f"pyjms-delay-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self, timeout: float = 10) -> None:
        self._stop.set()
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
        return self._suspended.is_set()

    @property
    def pending_slots(self) -> int:
        with self._lock:
            return len(self._slots)

    def _guard(self, loop: Callable[[], None]) -> Callable[[], None]:
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
                        _log.warning("delay processor %s failed, restarting: %s", loop.__name__, e)
                        self._stop.wait(1.0)

        return run

    def _recover_slots(self, ctx: JMSContext | None = None) -> None:
        """Finds the slots a previous processor filed (browse, no consume). Repeated for a while
        after start: markers a dead processor was compacting reappear only when the broker
        drops its connection."""
        if ctx is None:
            with self.factory.create_context() as own:
                return self._recover_slots(own)
        with ctx.create_browser(self.slots_queue) as browser:
            for m in browser:
                text = m.get_text()
                slot, length = parse_marker(text)
                if length != self.slot_ms:
                    # its number means another time: never drained as one of ours (that would
                    # deliver early or late); the sorter files its messages again instead (at
                    # each look, as for our own slots: a dead processor may still hold some)
                    with self._lock:
                        self._foreign[self.slot_queue(slot).name] = text
                elif slot not in self._drained and self._add_slot(slot):
                    self._rechecks.append((time.monotonic() + 2.0, slot, 3))

    def _marker(self, slot: int) -> str:
        return f"{slot}/{self.slot_ms}"

    def _add_slot(self, slot: int) -> bool:
        with self._lock:
            if slot in self._known:
                return False
            self._known.add(slot)
            heapq.heappush(self._slots, slot)
            return True

    # ------------------------------------------------------------------ sorter

    def _sorter(self) -> None:
        with self.factory.create_context(SESSION_TRANSACTED) as ctx:
            consumer = ctx.create_consumer(Queue(self.staging))
            put = _Putter(ctx)
            markers = ctx.create_producer()
            # the shim's slot queue names (Java strings made once, not per batch)
            self._slot_names = (ctx._s.String(SLOT_PREFIX), ctx._s.String(self.staging))
            while not self._stop.is_set():
                if self._suspended.is_set():
                    self._stop.wait(0.1)
                    continue
                self._file_foreign(ctx, put, markers)
                self._file_batch(ctx, consumer, put, markers)

    def _file_foreign(self, ctx: JMSContext, put: _Putter, markers: Any) -> None:
        """Files the messages of slot queues of another slot length again, under this
        processor's slots, as if they were staged now (each has its delivery time)."""
        with self._lock:
            pending = list(self._foreign)
        for queue in pending:
            consumer = ctx.create_consumer(Queue(queue))
            try:
                while self._file_batch(ctx, consumer, put, markers, timeout_ms=50):
                    pass
            finally:
                consumer.close()
            ctx.commit()
            with self._lock:
                self._foreign.pop(queue, None)  # its marker goes at the next compaction
            _log.info("delay processor: filed %s again under %d ms slots", queue, self.slot_ms)

    def _file_batch(self, ctx: JMSContext, consumer: Any, put: _Putter, markers: Any, timeout_ms: int = 200) -> int:
        """Takes up to 1,000 messages off a queue and files each under its slot, in one
        transaction; returns how many it took."""
        horizon = 2 * self.slot_ms  # closer than this, a slot may already be draining
        # the shim files each message under its slot without it crossing into Python
        raw = bytes(consumer._receiver().fileBySlot(1000, timeout_ms, self.slot_ms, horizon, *self._slot_names))
        filed, soon = _read_filing(raw)
        if not filed and not soon:
            return 0
        with self._lock:
            new_slots = [slot for slot in filed if slot not in self._known]
        for slot in new_slots:
            markers.send(self.slots_queue, self._marker(slot))
        # messages due within the horizon are put by the sorter itself, in this same
        # transaction: committing before they are put would lose them in a crash
        for m in sorted(soon, key=lambda m: m.get_long_property(staging.DELIVERY_TIME)):
            wait = m.get_long_property(staging.DELIVERY_TIME) - now_ms()
            if wait > 0:
                time.sleep(wait / 1000)
            self._deliver(ctx, put, m)
        put.flush()
        ctx.commit()
        taken = sum(filed.values()) + len(soon)
        self.stats.staged += taken
        with self._lock:
            for slot, count in filed.items():
                self._filed[slot] = self._filed.get(slot, 0) + count
            # a slot the deliverer drained before this commit gets drained again
            late = [slot for slot in filed if slot not in self._known and slot not in new_slots]
        for slot in late:
            markers.send(self.slots_queue, self._marker(slot))
        if late:
            ctx.commit()
        for slot in [*new_slots, *late]:
            self._add_slot(slot)
        return taken

    # ------------------------------------------------------------------ deliverer

    def _deliverer(self) -> None:
        with self.factory.create_context(SESSION_TRANSACTED) as ctx:
            put = _Putter(ctx)
            self._plain = None  # a Java object of the previous JVM session is not reused
            self._opened = {}  # slot -> its consumer and when opened, ahead of its end
            self._uncommitted = []
            try:
                while not self._stop.is_set():
                    self._deliver_next(ctx, put)
                self._commit_moves(ctx, put)
            except BaseException:
                self._requeue_uncommitted()  # rolled back when the context closes
                raise

    def _deliver_next(self, ctx: JMSContext, put: _Putter) -> None:
        """One step of the deliverer: waits for the first slot's end, or drains it.

        A drained slot's last chunk is committed at once unless the next slot is due too (the
        deliverer is behind): then one transaction takes the last chunks of several slots, up
        to DRAIN_CHUNK moves, so a deliverer that fell behind catches up with fewer commits.
        """
        if self._suspended.is_set():
            self._commit_moves(ctx, put)
            self._stop.wait(0.1)
            return
        self._recheck(ctx, put)
        with self._lock:
            slot = self._slots[0] if self._slots else None
        if slot is None:
            self._commit_moves(ctx, put)
            self._stop.wait(0.02)
            return
        wait_ms = (slot + 1) * self.slot_ms - now_ms()  # the slot's end: all of it is due
        if wait_ms > 0:
            self._commit_moves(ctx, put)
            self._open_ahead(ctx, OPEN_AHEAD)
        elif slot not in self._filed:
            # found at start-up, so ended long ago, like those after it: open them together,
            # so that they share RECOVERED_WAIT_MS (a slot this processor filed is opened
            # ahead only while it is on time: more consumers at once slowed a busy broker)
            self._open_ahead(ctx, OPEN_AHEAD_MAX)
        if wait_ms > 0:
            self._stop.wait(min(wait_ms, 20) / 1000)  # re-check: an earlier slot may appear
            return
        complete = self._drain(ctx, put, slot)
        with self._lock:
            if complete and self._filed.get(slot, 0) > self._moved.get(slot, 0):
                return  # the sorter committed more to it while it drained: again
            heapq.heappop(self._slots)
            self._known.discard(slot)
            self._drained.add(slot)
            self._dead_markers += 1
            compact = self._dead_markers > max(64, len(self._known))
            following = self._slots[0] if self._slots else None
        if not complete:  # owed messages did not come: read the slot again later
            _log.warning("slot %s: %d filed messages did not arrive in time; reading it again later",
                         slot, self._filed.get(slot, 0) - self._moved.get(slot, 0))
            self._rechecks.append((time.monotonic() + 2.0, slot, 15))  # every 2 s for 30 s
        behind = following is not None and (following + 1) * self.slot_ms <= now_ms()
        if compact or not behind or sum(n for _, n in self._uncommitted) >= DRAIN_CHUNK:
            self._commit_moves(ctx, put)
        if compact:
            self._compact_markers(ctx)

    def _open_ahead(self, ctx: JMSContext, most: int) -> None:
        """Opens the consumers of the first ``most`` slots that end within OPEN_AHEAD slots, so
        the broker has dispatched their messages when they end (nothing is got before then): a
        consumer opened one slot ahead often held a few of its slot's messages at the end, and
        the rest took more transactions."""
        horizon = now_ms() + OPEN_AHEAD * self.slot_ms
        with self._lock:
            first = heapq.nsmallest(most, self._slots) if len(self._opened) < most else []
        for slot in first:
            if (slot + 1) * self.slot_ms > horizon:
                break
            if slot not in self._opened:
                self._opened[slot] = (self._slot_consumer(ctx, slot), time.monotonic())

    def _slot_consumer(self, ctx: JMSContext, slot: int) -> Any:
        """A consumer of a slot queue that takes its messages from the broker at once.

        JMSContext.create_consumer parks a queue consumer until its first receive (so that one
        kept for receive_by_token hoards nothing), so the consumers opened ahead prefetched
        nothing and each drain made its consumer again; a slot's consumer must have its slot
        dispatched to it when the slot ends. It is not registered with the context either (the
        context's list of consumers only grows; the deliverer makes one per slot).
        """
        queue = self.slot_queue(slot)
        receiver = ctx.channel.consumer(queue.key, None, False, f"create_consumer({queue})")
        return JMSConsumer(ctx, receiver, queue, None)  # closed by _drain, or with the session

    def _commit_moves(self, ctx: JMSContext, put: _Putter) -> None:
        """Commits the moves the shim made and left uncommitted (_uncommitted), if any."""
        if self._uncommitted:
            self._commit(ctx, put, lambda: self._suspect.update(slot for slot, _ in self._uncommitted))

    def _requeue_uncommitted(self) -> None:
        """The deliverer failed with moves uncommitted: they are rolled back, so their slots are
        drained again (as known slots, whatever the heap said)."""
        pending, self._uncommitted = self._uncommitted, []
        for slot, n in pending:
            with self._lock:
                self._moved[slot] = self._moved.get(slot, 0) - n
                self._drained.discard(slot)
            self.stats.delivered -= n
            self._add_slot(slot)

    def _recheck(self, ctx: JMSContext, put: _Putter) -> None:
        """Reads slots again every 2 s: recovered ones 3 times (what a dead processor's
        transaction held comes back only when the broker drops its connection), and ones whose
        filed messages did not arrive 15 times."""
        now = time.monotonic()
        if self._rebrowse_at and now - self._started >= self._rebrowse_at[0]:
            self._rebrowse_at.pop(0)
            self._recover_slots(ctx)
        due = [r for r in self._rechecks if r[0] <= now]
        if not due:
            return
        self._rechecks = [r for r in self._rechecks if r[0] > now]
        for _, slot, left in due:
            not_over_ms = (slot + 1) * self.slot_ms - now_ms()
            if not_over_ms > 0:  # a slot still to come is read when it has ended, never early
                self._rechecks.append((now + not_over_ms / 1000, slot, left))
                continue
            self._drain(ctx, put, slot, patience_s=0.5)
            if left > 1:
                self._rechecks.append((now + 2.0, slot, left - 1))

    def _drain(self, ctx: JMSContext, put: _Putter, slot: int, patience_s: float = 10) -> bool:
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
        consumer, opened_at = self._opened.pop(slot, None) or (self._slot_consumer(ctx, slot), time.monotonic())
        deadline = time.monotonic() + patience_s
        complete = True
        n = None  # the last chunk's size
        try:
            while True:
                with self._lock:
                    known_count = slot in self._filed
                    owed = self._filed.get(slot, 0) - self._moved.get(slot, 0) if known_count else 0
                if known_count:
                    # a filed slot owed nothing more: take only what is already here (what the
                    # sorter commits meanwhile is counted in _filed and drained again by _deliverer)
                    timeout = 20 if owed > 0 else 0
                elif n is None:
                    # a consumer has its queue's messages within ms of opening: an empty slot
                    # found at start-up costs no more than RECOVERED_WAIT_MS after that, and the
                    # slots opened ahead together share that wait
                    timeout = max(1, int(RECOVERED_WAIT_MS - (time.monotonic() - opened_at) * 1000))
                elif n >= SMALLEST_PAGE:
                    timeout = RECOVERED_WAIT_MS  # its commit may page in more
                else:
                    timeout = 20  # what was still on its way when the chunk was taken
                if slot in self._suspect:
                    batch = consumer.receive_batch(DRAIN_CHUNK, timeout)
                    if batch:
                        self._move(ctx, put, slot, batch)
                    n = len(batch)
                else:
                    n = self._move_plain(ctx, put, slot, consumer, timeout)
                if not n:
                    if owed <= 0:
                        break
                    # waiting for owed messages: commit first, so that a consumer of this slot
                    # closed in this transaction really closes and hands back what it prefetched
                    self._commit_moves(ctx, put)
                    if time.monotonic() > deadline:
                        complete = False
                        break
                    continue
                with self._lock:
                    self._moved[slot] = self._moved.get(slot, 0) + n
                    more = not known_count or self._filed.get(slot, 0) > self._moved[slot]
                if more:  # the rest may wait for this transaction to free the broker's page
                    self._commit_moves(ctx, put)
        finally:
            consumer.close()  # a provider closes it when the transaction ends (JMS)
        self._suspect.discard(slot)
        return complete

    def _move_plain(self, ctx: JMSContext, put: _Putter, slot: int, consumer: Any, timeout: int) -> int:
        """Moves a chunk of a slot in one transaction; returns how many messages it got.

        The shim moves the chunk itself when every message is plain: due (the slot has
        ended), unexpired, bound for a target Python found no rules for (``_plain``, built
        here; the rules thread takes out a target that gains rules within about a second). Else the chunk
        comes back, in delivery-time order, and is handled here message by message.
        """
        if self._plain is None:
            # shared with the rules thread, which takes out targets that gained rules
            self._plain = ctx._s.jclass("java.util.concurrent.ConcurrentHashMap").newKeySet()
            with self._lock:
                self._plain_keys = set()
        try:
            raw = bytes(consumer._receiver().deliverDue(DRAIN_CHUNK, timeout, self._plain))
        except ctx._s.JException as e:
            raise translate(e, f"delay processor slot {slot}") from None
        (n,) = struct.unpack_from(">i", raw, 0)
        if n < 0:
            messages = [Message._received(rec, None) for rec in C.iter_batch(struct.pack(">i", -n) + raw[4:])]
            self._move(ctx, put, slot, messages)
            for m in messages:  # targets without rules: the shim may move their next ones
                target = from_key(m.get_string_property(staging.TARGET))
                attrs = ctx._target_attributes(target)
                if target.key not in self._plain_keys and (attrs is None or not hasattr(attrs, "put_enabled")):
                    with self._lock:
                        self._plain_keys.add(target.key)
                    self._plain.add(target.key)
            return -n
        if n:
            self._uncommitted.append((slot, n))  # committed by _drain or _deliver_next
            early_by = struct.unpack_from(f">{n}i", raw, 4)  # delivery time minus put time
            self.stats.delivered += n
            self.stats.early += sum(1 for d in early_by if d > 0)
            if self._record_lateness:
                self.stats.lateness_ms.extend(-d for d in early_by)
        return n

    def _move(self, ctx: JMSContext, put: _Putter, slot: int, messages: list[Message]) -> None:
        """Puts a chunk of a slot to its targets, in delivery-time order, in one transaction."""
        messages.sort(key=lambda m: m.get_long_property(staging.DELIVERY_TIME))
        if slot not in self._suspect:
            for m in messages:
                self._deliver(ctx, put, m)
            self._commit(ctx, put, lambda: self._suspect.add(slot))
        else:
            # a put refused only at commit (providers send asynchronously in a transaction):
            # one move per transaction finds the message; its next attempt dead-letters it
            for m in messages:
                wire_id = m._headers()["message_id"]
                if wire_id in self._poison:
                    self._failed(ctx, put, m, from_key(m.get_string_property(staging.TARGET)),
                                 JMSRuntimeException("the put to the target failed at commit"))
                else:
                    self._deliver(ctx, put, m)
                self._commit(ctx, put, lambda: self._poison.add(wire_id))

    def _commit(self, ctx: JMSContext, put: _Putter, on_failure: Callable[[], None]) -> None:
        """Commits the moves (with any the shim left uncommitted); a failed commit marks what to
        isolate and restarts the loop on a new connection (the provider may hold the messages of
        a failed commit until then)."""
        try:
            put.flush()
            ctx.commit()
        except JMSRuntimeException:
            on_failure()
            if self._uncommitted:
                self._suspect.update(slot for slot, _ in self._uncommitted)
            raise
        self._uncommitted = []

    def _compact_markers(self, ctx: JMSContext) -> None:
        """Drops the markers of drained slots: rewrites the live ones in one transaction."""
        consumer = ctx.create_consumer(self.slots_queue)
        producer = ctx.create_producer()
        with self._lock:
            live = set(self._known) | {slot for _, slot, _ in self._rechecks}  # rechecked slots keep theirs
            foreign = set(self._foreign.values())  # not filed again yet
        seen: set[str] = set()
        while batch := consumer.receive_batch(1000, 50):
            for m in batch:
                text = m.get_text()
                slot, length = parse_marker(text)
                keep = text in foreign or (length == self.slot_ms and slot in live)
                if keep and text not in seen:
                    producer.send(self.slots_queue, text)
                    seen.add(text)
        ctx.commit()
        consumer.close()
        with self._lock:
            self._dead_markers = 0
            self._drained.clear()  # their markers are gone now
            for slot in [n for n, moved in self._moved.items() if n not in self._known and moved >= self._filed.get(n, 0)]:
                self._moved.pop(slot, None)
                self._filed.pop(slot, None)

    # ------------------------------------------------------------------ one message

    def _deliver(self, ctx: JMSContext, put: _Putter, m: Message) -> None:
        """Puts a due message to its target, or expires it (inside the caller's transaction)."""
        now = now_ms()
        due = m.get_long_property(staging.DELIVERY_TIME)
        if now < due:
            self.stats.early += 1
        expiration = m.get_long_property(staging.STAGED_EXPIRATION) if m.property_exists(staging.STAGED_EXPIRATION) else 0
        if expiration and now >= expiration:
            self._expire(put, m)
            return
        target = from_key(m.get_string_property(staging.TARGET))
        try:
            # the target as it is now (D15: resolved again at delivery), so a refused put is
            # known before the commit
            check_target_accepts(target.key, ctx._target_attributes(target))
            put.deliver(target, m, expiration, now)
        except JMSRuntimeException as e:
            self._failed(ctx, put, m, target, e)
            return
        self.stats.delivered += 1
        if self._record_lateness:
            self.stats.lateness_ms.append(now - due)

    def _expire(self, put: _Putter, m: Message) -> None:
        """D18: discard, with an expiration report for the original message if it asked for one."""
        self.stats.expired += 1
        reply_to = m.get_jms_reply_to()
        if m.property_exists(REPORT_EXPIRATION) and reply_to is not None:
            put.report(reply_to, m, MQFB_EXPIRATION)

    def _failed(self, ctx: JMSContext, put: _Putter, m: Message, target: Destination, error: JMSRuntimeException) -> None:
        """D20: discard if the message asked for it, else the dead-letter queue (and an exception report)."""
        self.stats.failed += 1
        _log.warning("delayed message %s could not be put to %s: %s", m.get_jms_message_id(), target, error)
        if m.property_exists(REPORT_DISCARD):
            return
        put.dead_letter(Queue(self.dead_letter_queue), m, target, error)
        reply_to = m.get_jms_reply_to()
        if m.property_exists(REPORT_EXCEPTION) and reply_to is not None:
            put.report(reply_to, m, error.reason or 0)

    # ------------------------------------------------------------------ rules

    def _rules(self) -> None:
        """Keeps the shim's set of targets without rules current, off the deliverer's path.

        About twice per AttributeCache.TTL_S it reads each such target's attributes again (on
        its own context: a broker query never delays a slot); a target that gained rules
        (put-inhibited, MAXDEPTH...) leaves the set, so its next chunk goes through Python.
        Forgetting the whole set every second instead sent one chunk per target and second
        through Python, a query and a Python move on the drain's path.
        """
        with self.factory.create_context() as ctx:
            while not self._stop.wait(ctx.provider.attributes_max_age_s / 2):
                self._check_staging_queue(ctx)
                plain = self._plain
                with self._lock:
                    keys = list(self._plain_keys)
                for key in keys:
                    attrs = ctx._target_attributes(from_key(key))
                    if attrs is not None and hasattr(attrs, "put_enabled"):
                        if plain is not None:
                            plain.remove(key)
                        with self._lock:
                            self._plain_keys.discard(key)

    def _check_staging_queue(self, ctx: JMSContext) -> None:
        """D19: the staging queue PUT(DISABLED) stops the moves, PUT(ENABLED) starts them again."""
        attrs = ctx._target_attributes(Queue(self.staging))
        disabled = attrs is not None and getattr(attrs, "put_enabled", True) is False
        if disabled and not self._suspended.is_set():
            _log.warning("staging queue %s is PUT(DISABLED): the delay processor stops until it is enabled",
                         self.staging)
            self._suspended.set()
        elif not disabled and self._suspended.is_set():
            _log.warning("staging queue %s is PUT(ENABLED): the delay processor starts again", self.staging)
            self._suspended.clear()

    # ------------------------------------------------------------------ ping

    def _ping(self) -> None:
        with self.factory.create_context() as ctx:
            consumer = ctx.create_consumer(self.control_queue)
            producer = ctx.create_producer().set_delivery_mode(1).set_time_to_live(10_000)
            while not self._stop.is_set():
                m = consumer.receive(200)
                if m is not None and m.get_jms_reply_to() is not None:
                    producer.set_jms_correlation_id(m.get_jms_message_id()).send(m.get_jms_reply_to(), "pyjms delay processor")


class _Putter:
    """Moves messages unchanged (body, properties, headers) within one transacted context."""

    BATCH = 500

    def __init__(self, ctx: JMSContext) -> None:
        self.ctx = ctx
        self._pending: list[bytes] = []

    def deliver(self, target: Destination, m: Message, expiration: int, now: int) -> None:
        """To the target: without the staging header, with the sender's correlation id back,
        and with the exact expiration receivers enforce (the TTL lets the broker expire it too).
        Batched: a put the provider refuses in a transaction only fails at commit anyway."""
        own = m.get_string_property(staging.ORIGINAL_CORRELATION_ID)
        extra = {staging.EXPIRATION: (C.T_LONG, expiration)} if expiration else None
        record = m._pack(correlation_id=own, drop_properties=staging.STAGING_HEADER, extra_properties=extra)
        self._add_record(target, m, expiration - now if expiration else 0, record)

    def dead_letter(self, dlq: Destination, m: Message, target: Destination, error: JMSRuntimeException) -> None:
        extra = dlh.DeadLetterHeader.for_failure(
            target, error, message=m, put_appl_name="pyjms delay processor"
        ).typed_properties()
        own = m.get_string_property(staging.ORIGINAL_CORRELATION_ID)
        record = m._pack(correlation_id=own, drop_properties=staging.STAGING_HEADER, extra_properties=extra)
        self._add_record(dlq, m, 0, record)

    def report(self, reply_to: Destination, m: Message, feedback: int) -> None:
        """A report for the original message: its id as correlation id, unlimited lifetime (E15)."""
        record = m._pack(
            correlation_id=m.get_jms_message_id(), reply_to=None,
            drop_properties=staging.STAGING_HEADER + staging.ORIGINAL_MESSAGE + (REPORT_EXPIRATION, REPORT_EXCEPTION),
            extra_properties={FEEDBACK: (C.T_INT, feedback)},
        )
        self._add_record(reply_to, m, 0, record)

    def _add_record(self, destination: Destination, m: Message, ttl: int, record: bytes) -> None:
        self._pending.append(C.pack_routed(destination.key, m.get_jms_delivery_mode(), m.get_jms_priority(), ttl, 0, record))
        if len(self._pending) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        ctx = self.ctx
        batch, self._pending = self._pending, []
        try:
            ctx._ch.sendRouted(C.pack_batch(batch, len(batch)), 0)
        except ctx._s.JException as e:
            raise translate(e, "delay processor batch") from None


def parse_marker(text: str) -> tuple[int, int]:
    """A slot marker's slot number and slot length: "<slot>/<ms>", or "<slot>" for 50 ms."""
    slot, _, length = text.partition("/")
    return int(slot), int(length) if length else LEGACY_SLOT_MS


def _read_filing(raw: bytes) -> tuple[dict[int, int], list[Message]]:
    """Decodes Receiver.fileBySlot's answer: messages filed per slot, and those due soon."""
    (n,) = struct.unpack_from(">i", raw, 0)
    pos = 4
    filed: dict[int, int] = {}
    for _ in range(n):
        slot, count = struct.unpack_from(">qi", raw, pos)
        filed[slot] = count
        pos += 12
    (m,) = struct.unpack_from(">i", raw, pos)
    pos += 4
    soon = []
    for _ in range(m):
        rec = C.IncomingRecord(raw, pos)
        pos = rec.end
        soon.append(Message._received(rec, None))
    return filed, soon


def processor_answers(ctx: JMSContext, timeout_ms: int = 1000) -> bool:
    """Whether a delay processor serves this factory's staging queue (it answers a ping)."""
    with ctx.create_context() as probe:
        reply = probe.create_temporary_queue()
        consumer = probe.create_consumer(reply)
        probe.create_producer().set_jms_reply_to(reply).set_time_to_live(timeout_ms).set_delivery_mode(1).send(
            control_queue(ctx._factory.staging_queue), "ping"
        )
        return consumer.receive(timeout_ms) is not None
