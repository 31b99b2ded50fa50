"""The delay processor's slot book: the time slots the sorter filed and the deliverer drains.

A time slot ``n`` holds the messages due in ``[n*slot_ms, (n+1)*slot_ms)`` on the queue
``PYJMS.SLOT.<n>.<staging>``. Each slot is also recorded by a marker ``"<n>/<slot_ms>"`` on
``PYJMS.SLOTS.<staging>``, so that a restarted processor finds every slot again.

The book is the one state the sorter and the deliverer share; every read and change of it
holds its lock, and nothing else of either thread is shared.
"""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Callable
from typing import cast

from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.expiry import now_ms
from pyjms.api.message import Message, TextMessage
from pyjms.api.property_types import T_STRING
from pyjms.api.quietlog import QuietLog
from pyjms.bridge import contract
from pyjms.delay.processor_log import processor_log
from pyjms.dlq import header as dlh
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException

_log = logging.getLogger("pyjms.delay")

#: slot queues are PYJMS.SLOT.<n>.<staging queue>, so one broker policy covers them all
SLOT_PREFIX = "PYJMS.SLOT."
#: how long a time slot is. A message waits at most this long after it is due before its slot
#: is moved: 20 ms gave a p99 lateness about 35 ms lower than 50 ms, and 10 ms p50 11 ms and
#: p99 45-53 ms against 17-18 and 51-73 for 20 ms (bench/bench_delay.py, staging, alternate runs)
SLOT_MS = 10
#: a slot queue found without a marker is taken as one of this processor's slots when its
#: number, under this processor's slot length, means a time this close to now (ten years):
#: under another length the same number means a time decades away
PLAUSIBLE_MS = 10 * 365 * 24 * 3600 * 1000
#: the slot length of slot markers written without one (pyjms before slots carried their length)
LEGACY_SLOT_MS = 50
#: markers a compaction looks at between checks whether a slot is due (and so waits for it)
COMPACT_BATCH = 100


def marker_text(m: Message) -> str | None:
    """A slot marker's text (pyjms puts every marker as a TextMessage with text); None for
    anything else, which anyone who may write the marker queue can put there."""
    return m.get_text() if isinstance(m, TextMessage) else None


def parse_marker(text: str | None) -> tuple[int, int]:
    """A slot marker's slot number and slot length: "<slot>/<ms>", or "<slot>" for 50 ms.
    InvalidArgumentRuntimeException (a ValueError) for anything else."""
    slot, _, length = (text or "").partition("/")
    if not slot.isdigit() or not (length.isdigit() if length else True):
        raise InvalidArgumentRuntimeException(
            f"slot marker {_shown(text)} is not '<slot>/<ms>' (two decimal numbers)"
        )
    ms = int(length) if length else LEGACY_SLOT_MS
    if not 1 <= ms <= 1000:
        raise InvalidArgumentRuntimeException(
            f"slot marker {_shown(text)}: the slot length must be 1..1000 ms"
        )
    return int(slot), ms


def _shown(text: str | None) -> str:
    if text is None:
        return "(not a text message)"
    return repr(text if len(text) <= 80 else text[:77] + "...")


class SlotBook:
    """The slots still to drain, what was filed to and moved from each, and their markers."""

    def __init__(
        self,
        staging: str,
        slot_ms: int,
        log: QuietLog | None = None,
        dead_letter_queue: str = contract.DEAD_LETTER_QUEUE,
    ) -> None:
        self.staging = staging
        self.slot_ms = slot_ms
        # a malformed marker is logged (within the limit) when read, and dead-lettered when a
        # compaction takes it off the marker queue
        self._log = log or processor_log()
        self._dead_letter_queue = Queue(dead_letter_queue)
        self._lock = threading.Lock()
        self._pending: list[int] = []  # heap of the slots still to drain (O(log n) per slot)
        self._known: set[int] = set()  # the same slots, for lookups
        # pending slots kept out of the heap: slots recover() found after they ended, which the
        # deliverer reads in spare time (Deliverer._read_later: most were drained already)
        self._aside: set[int] = set()
        # per slot: messages the sorter committed, and messages the deliverer moved on; their
        # difference is what a drain waits for (the two threads race, so never below zero)
        self._filed: dict[int, int] = {}
        self._moved: dict[int, int] = {}
        self._drained: set[int] = set()  # slots drained whose markers are not compacted yet
        self._dead_markers = 0  # markers of drained slots, removed in bulk (amortized O(1))
        # while recover() runs: the slots whose markers a compaction dropped, which the book
        # forgets (a slot filed, drained and compacted during a recover is no lost marker)
        self._forgotten: set[int] | None = None
        # slot queues of another slot length (found by recover): the sorter files their messages
        # again under this processor's slots, then their markers go
        self._foreign: dict[str, str] = {}  # slot queue -> its marker text, still to file again

    # ------------------------------------------------------------------ names

    def slot_queue(self, slot: int) -> Queue:
        return Queue(f"{SLOT_PREFIX}{slot}.{self.staging}")

    @property
    def slots_queue(self) -> Queue:
        return Queue(f"PYJMS.SLOTS.{self.staging}")

    def marker(self, slot: int) -> str:
        return f"{slot}/{self.slot_ms}"

    # ------------------------------------------------------------------ the sorter's side

    def unknown(self, slots: list[int]) -> list[int]:
        """Those of the slots that are not pending (they need a marker)."""
        with self._lock:
            return [slot for slot in slots if slot not in self._known]

    def record_filed(self, filed: dict[int, int], marked: list[int]) -> list[int]:
        """Counts messages the sorter committed to their slots. Returns the slots among them,
        not marked in this transaction, that the deliverer finished meanwhile: they are drained
        again, after a new marker."""
        with self._lock:
            for slot, count in filed.items():
                self._filed[slot] = self._filed.get(slot, 0) + count
            return [slot for slot in filed if slot not in self._known and slot not in marked]

    def add(self, slot: int, aside: bool = False) -> bool:
        """Makes a slot pending; False if it already was. ``aside``: kept out of first()'s
        heap (the deliverer reads it in spare time: Deliverer._read_later)."""
        with self._lock:
            if slot in self._known:
                return False
            self._known.add(slot)
            if aside:
                self._aside.add(slot)
            else:
                heapq.heappush(self._pending, slot)
            return True

    def foreign_queues(self) -> list[str]:
        with self._lock:
            return list(self._foreign)

    def forget_foreign(self, queue: str) -> None:
        """A foreign slot queue was filed again; its marker goes at the next compaction."""
        with self._lock:
            self._foreign.pop(queue, None)

    # ------------------------------------------------------------------ the deliverer's side

    def first(self, most: int = 1) -> list[int]:
        """The earliest pending slots, at most ``most``."""
        with self._lock:
            if most == 1:
                return self._pending[:1]
            return heapq.nsmallest(most, self._pending)

    def was_filed(self, slot: int) -> bool:
        """Whether this processor filed the slot (else its count is unknown: found at start-up)."""
        with self._lock:
            return slot in self._filed

    def owed(self, slot: int) -> int | None:
        """Messages filed to a slot and not moved yet; None if the slot's count is unknown."""
        with self._lock:
            if slot not in self._filed:
                return None
            return self._filed[slot] - self._moved.get(slot, 0)

    def record_moved(self, slot: int, n: int) -> bool:
        """Counts messages moved from a slot; returns whether more may be there."""
        with self._lock:
            self._moved[slot] = self._moved.get(slot, 0) + n
            return slot not in self._filed or self._filed[slot] > self._moved[slot]

    def unmove(self, slot: int, n: int) -> None:
        """Moves that were rolled back: the slot is pending again, whatever the heap said."""
        with self._lock:
            self._moved[slot] = self._moved.get(slot, 0) - n
            self._drained.discard(slot)
        self.add(slot)

    def finish(self, slot: int, complete: bool) -> tuple[bool, int | None] | None:
        """Takes a drained slot off the book. None if the sorter committed more to it while it
        drained (drain it again); else whether the markers are due for compaction, and the next
        pending slot."""
        with self._lock:
            if complete and self._filed.get(slot, 0) > self._moved.get(slot, 0):
                return None
            if slot in self._aside:
                self._aside.discard(slot)
            elif self._pending and self._pending[0] == slot:
                heapq.heappop(self._pending)
            elif slot in self._known:
                # the sorter made an earlier slot pending while this one drained: that one stays
                self._pending.remove(slot)
                heapq.heapify(self._pending)
            self._known.discard(slot)
            self._drained.add(slot)
            self._dead_markers += 1
            compact = self._dead_markers > max(64, len(self._known))
            return compact, self._pending[0] if self._pending else None

    def pending(self) -> int:
        with self._lock:
            return len(self._pending) + len(self._aside)

    def is_aside(self, slot: int) -> bool:
        with self._lock:
            return slot in self._aside

    def aside(self, most: int) -> list[int]:
        """The newest ``most`` of the slots set aside (found by recover() after they ended)."""
        with self._lock:
            return heapq.nlargest(most, self._aside)

    def dead_markers(self) -> int:
        """Markers of drained slots not compacted yet."""
        with self._lock:
            return self._dead_markers

    # ------------------------------------------------------------------ markers

    def recover(
        self,
        ctx: JMSContext,
        queue_names: list[str] | None = None,
        non_empty: Callable[[list[str]], list[str]] | None = None,
    ) -> list[int]:
        """Reads the markers (browse, no consume) and makes their slots pending again; returns
        the slots found that were not pending. Slots of another length are noted as foreign.
        Those that have ended are set aside (add): most of them were drained before (a marker
        goes only at a compaction), and the slots that end from now on go first.

        ``queue_names``: the slot queues the broker has (Channel.queue_names), when the provider
        can list them. Then a slot queue whose marker was lost is found too, if it holds a
        message (``non_empty`` says which do: a broker keeps drained slot queues a while): a slot
        whose number means a time within PLAUSIBLE_MS of now under this slot length is taken as
        one of ours, any other is filed again as foreign. A marker whose queue is gone is dropped
        at the next compaction instead of being drained."""
        with self._lock:
            self._forgotten = set()
        try:
            return self._recover(ctx, queue_names, non_empty)
        finally:
            with self._lock:
                self._forgotten = None

    def _recover(
        self,
        ctx: JMSContext,
        queue_names: list[str] | None,
        non_empty: Callable[[list[str]], list[str]] | None,
    ) -> list[int]:
        found = []
        existing = (
            None
            if queue_names is None
            else cast("set[int]", {self._slot_of(name) for name in queue_names} - {None})
        )
        marked: set[int] = set()
        ended = now_ms() // self.slot_ms  # the slots before it have ended
        for slot, length, text in self._markers(ctx):
            marked.add(slot)
            if existing is not None and slot not in existing:
                with self._lock:  # its slot queue is gone (drained, and collected by the broker)
                    if slot not in self._known and slot not in self._drained:
                        self._drained.add(slot)
                        self._dead_markers += 1
                continue
            if length != self.slot_ms:
                # its number means another time: never drained as one of ours (that would
                # deliver early or late); the sorter files its messages again instead (at
                # each look, as for our own slots: a dead processor may still hold some)
                with self._lock:
                    self._foreign[self.slot_queue(slot).name] = text
                continue
            with self._lock:
                drained = slot in self._drained
            if not drained and self.add(slot, aside=slot < ended):
                found.append(slot)
        now = now_ms()
        unmarked = sorted((existing or set()) - marked)
        if unmarked and non_empty is not None:
            held = set(non_empty([self.slot_queue(slot).name for slot in unmarked]))
            unmarked = [slot for slot in unmarked if self.slot_queue(slot).name in held]
        if unmarked:
            # the sorter commits a new slot's marker with its first messages: a slot it filed
            # between the browse above and the listing has both now, and is no lost marker
            marked_since = {slot for slot, _, _ in self._markers(ctx)}
            unmarked = [slot for slot in unmarked if slot not in marked_since]
        for slot in unmarked:
            if abs(slot * self.slot_ms - now) < PLAUSIBLE_MS:
                with self._lock:
                    forgotten = self._forgotten or set()
                    drained = slot in self._drained or slot in self._filed or slot in forgotten
                if not drained and self.add(slot, aside=slot < ended):
                    found.append(slot)
            else:
                with self._lock:  # another slot length's: its messages are filed again
                    self._foreign.setdefault(self.slot_queue(slot).name, "")
        return found

    def _markers(self, ctx: JMSContext) -> list[tuple[int, int, str]]:
        """The markers on the queue now (a browse): each slot number, slot length and text.
        Malformed ones are skipped (and logged): the next compaction dead-letters them."""
        with ctx.create_browser(self.slots_queue) as browser:
            texts = [marker_text(m) for m in browser]
        found = []
        for text in texts:
            try:
                found.append((*parse_marker(text), text or ""))
            except InvalidArgumentRuntimeException as e:
                self._log.line(_log, logging.WARNING, "delay processor: %s; skipped", e)
                with self._lock:
                    self._dead_markers += 1  # a compaction takes it off
        return found

    def _dead_letter(self, m: Message, error: InvalidArgumentRuntimeException) -> Message:
        """A malformed marker's copy for the dead-letter queue: MQRC_FORMAT_ERROR, and why."""
        header = dlh.DeadLetterHeader.create(
            contract.QUARANTINE_REASON, self.slots_queue.name, put_appl_name="pyjms delay processor"
        )
        extra = {**header.typed_properties(), contract.DLQ_DETAIL: (T_STRING, str(error))}
        try:
            return m.copy(add_properties=extra)
        except JMSRuntimeException:  # an object or stream body, which pyjms never decodes
            return TextMessage("").copy(add_properties=extra)

    def _slot_of(self, queue_name: str) -> int | None:
        """The slot number of one of this staging queue's slot queues, else None."""
        number, dot, staging = queue_name.removeprefix(SLOT_PREFIX).partition(".")
        if not dot or staging != self.staging or not number.isdigit():
            return None
        return int(number)

    def compact_markers(
        self, ctx: JMSContext, keep: set[int], give_way: Callable[[], bool] | None = None
    ) -> None:
        """Drops the markers of drained slots: rewrites the live ones (pending, in ``keep``, or
        foreign slots not filed again yet), in transactions of ctx. Between transactions it
        stops if ``give_way()`` says a delivery is waiting for the thread: each transaction
        left the queue whole, and the next compaction goes on where this one stopped (the
        markers it kept went to the back, and the book counts the dead markers until one
        compaction looked at them all)."""
        consumer = ctx.create_consumer(self.slots_queue)
        producer = ctx.create_producer()
        with self._lock:
            live = self._known | keep
            foreign = set(self._foreign.values())
        # a slot not ended yet keeps its marker whatever the book says: the sorter records a new
        # slot in the book only after committing its marker, and a compaction in between must
        # not drop it
        ending = now_ms() // self.slot_ms
        # a transaction gets at most a broker page of a queue (ActiveMQ: maxPageSize, 200), so
        # the markers are read in rounds, one transaction each, until the first one re-sent in
        # this compaction comes round again: then every marker was looked at. Between batches of
        # COMPACT_BATCH it asks give_way(): a compaction of 1,500 markers read 1,000 at a time,
        # and read them all twice, held every delivery for about 100 ms (bench/bench_delay.py)
        resent: set[str] = set()
        came_round = gave_way = False
        while not came_round and not gave_way:
            took = 0
            # the first receive of a round waits for the broker's dispatch; after that an empty
            # answer means the round reached the end of what is committed
            wait_ms = 50
            while (
                not came_round and not gave_way and (batch := consumer.receive_batch(COMPACT_BATCH, wait_ms))
            ):
                wait_ms = 5
                resend: list[str] = []
                for m in batch:
                    took += 1
                    text = marker_text(m)
                    if text in resent:  # judged live already: the rest of the queue was too
                        came_round = True
                        resend.append(text)
                        continue
                    try:
                        slot, length = parse_marker(text)
                    except InvalidArgumentRuntimeException as e:
                        producer.send(self._dead_letter_queue, self._dead_letter(m, e))
                        self._log.line(
                            _log, logging.WARNING, "delay processor: %s; dead-lettered (reason 2110)", e
                        )
                        continue
                    assert text is not None
                    ours = length == self.slot_ms and (slot in live or slot >= ending)
                    if text in foreign or ours:
                        resend.append(text)
                        resent.add(text)
                if resend:
                    producer.send_batch(self.slots_queue, resend)
                gave_way = not came_round and give_way is not None and give_way()
            ctx.commit()
            if not took:
                break
        consumer.close()
        if gave_way:
            return
        with self._lock:
            self._dead_markers = 0
            if self._forgotten is not None:
                self._forgotten |= self._drained
            self._drained.clear()  # their markers are gone now
            for slot in [
                n
                for n, moved in self._moved.items()
                if n not in self._known and moved >= self._filed.get(n, 0)
            ]:
                self._moved.pop(slot, None)
                self._filed.pop(slot, None)
                if self._forgotten is not None:
                    self._forgotten.add(slot)
