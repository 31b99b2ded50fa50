"""The delay processor's sorter: files each staged message under its time slot (D03).

The shim files the messages (org.pyjms.shim.delay.SlotFiler), so that they never cross into
Python. The first message of a new slot also records the slot on the slot book's marker queue,
in the same transaction. Messages due within two slots (the horizon: a slot that close may
already be draining) come back to Python and are put to their target by the sorter itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyjms.api.bulk import SlotFiler
from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.consumer import JMSConsumer
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.expiry import now_ms
from pyjms.api.factory import ConnectionFactory
from pyjms.api.quietlog import QuietLog
from pyjms.delay import staging
from pyjms.delay.processor_log import log_poison_notes
from pyjms.delay.processor_moves import MOST_ATTEMPTS, Mover, ProcessorStats
from pyjms.delay.processor_slots import SLOT_PREFIX, SlotBook

if TYPE_CHECKING:
    from pyjms.api.producer import JMSProducer

_log = logging.getLogger("pyjms.delay")

#: most messages taken off a queue per transaction
FILE_BATCH = 1000


class Sorter:
    """The sorter thread. It owns its context and what is made on it; it shares only the slot
    book (and the stats) with the deliverer."""

    def __init__(
        self,
        factory: ConnectionFactory,
        book: SlotBook,
        stats: ProcessorStats,
        new_mover: Callable[[JMSContext], Mover],
        stop: threading.Event,
        suspended: threading.Event,
        log: QuietLog,
    ) -> None:
        self._factory = factory
        self._log = log
        self._book = book
        self._stats = stats
        self._new_mover = new_mover
        self._stop = stop
        self._suspended = suspended
        # made again on each run's context
        self._ctx: JMSContext | None = None
        self._mover: Mover | None = None
        self._markers: JMSProducer | None = None
        self._filer: SlotFiler | None = None

    def run(self) -> None:
        book = self._book
        with self._factory.create_context(SESSION_TRANSACTED) as ctx:
            consumer = ctx.create_consumer(Queue(book.staging))
            self._ctx = ctx
            self._mover = self._new_mover(ctx)
            self._markers = ctx.create_producer()
            self._filer = SlotFiler(
                ctx, SLOT_PREFIX, book.staging, book.slot_ms, 2 * book.slot_ms, MOST_ATTEMPTS
            )
            while not self._stop.is_set():
                if self._suspended.is_set():
                    self._stop.wait(0.1)
                    continue
                self._file_foreign()
                self._file_batch(consumer)

    def _file_foreign(self) -> None:
        """Files the messages of slot queues of another slot length again, under this
        processor's slots, as if they were staged now (each has its delivery time)."""
        assert self._ctx is not None
        for queue in self._book.foreign_queues():
            consumer = self._ctx.create_consumer(Queue(queue))
            try:
                while self._file_batch(consumer, timeout_ms=50):
                    pass
            finally:
                consumer.close()
            self._ctx.commit()
            self._book.forget_foreign(queue)
            _log.info("delay processor: filed %s again under %d ms slots", queue, self._book.slot_ms)

    def _file_batch(self, consumer: JMSConsumer, timeout_ms: int = 200) -> int:
        """Takes up to FILE_BATCH messages off a queue and files each under its slot, in one
        transaction; returns how many it took."""
        ctx, mover, markers, book = self._ctx, self._mover, self._markers, self._book
        assert ctx is not None and mover is not None and markers is not None and self._filer is not None
        filing = self._filer.file(consumer, FILE_BATCH, timeout_ms)
        filed, soon, quarantined = filing.filed, filing.soon, filing.quarantined
        if quarantined:
            log_poison_notes(self._log)
        if not filed and not soon:
            if quarantined:
                ctx.commit()  # the poison's moves to the dead-letter queue
            return quarantined
        new_slots = book.unknown(list(filed))
        for slot in new_slots:
            markers.send(book.slots_queue, book.marker(slot))
        # messages due within the horizon are put by the sorter itself, in this same
        # transaction: committing before they are put would lose them in a crash
        for m in sorted(soon, key=lambda m: m.get_long_property(staging.DELIVERY_TIME)):
            wait = m.get_long_property(staging.DELIVERY_TIME) - now_ms()
            if wait > 0:
                time.sleep(wait / 1000)
            mover.deliver(m)
        mover.flush()
        ctx.commit()
        taken = sum(filed.values()) + len(soon)
        self._stats.staged += taken
        # a slot the deliverer finished before this commit gets drained again
        late = book.record_filed(filed, new_slots)
        for slot in late:
            markers.send(book.slots_queue, book.marker(slot))
        if late:
            ctx.commit()
        for slot in [*new_slots, *late]:
            book.add(slot)
        return taken
