"""The sends of one asyncio context, coalesced: aiokafka's accumulator and nats.py's pending
buffer, on a JMS session.

A producer's send is queued at the call (pyjms.aio.producer). Sends queued one after another,
with no other call of the context between them, join one job on the context's worker
(Worker.add_to_batch): the loop adds to it until it yields, and the worker takes it as a whole.
There the sends go out in call order:

* a str or bytes send that no send policy takes part in goes as a routed entry
  (JMSProducer.routed_entry): consecutive NON_PERSISTENT ones cross to the JVM together, in
  one SendPath.send_routed call; a PERSISTENT one crosses alone, so that an error the broker
  reports for it (a refused write, a full queue) fails that send only;
* a NON_PERSISTENT send_batch's bodies (JMSProducer.routed_bodies) are packed here, on the
  worker, not on the loop: as routed entries joining the routed sends before them in their
  crossing, else as a batch (SendPath.send_batch), with the send_batch calls after it to the same
  destination with the same options (a routed entry's destination and options in every
  record cost the crossing about 0.3 µs a message on Artemis: docs/asyncio-measurements.md);
* any other send (a Message or dict body, send_batch, send_reply, send_async) is a call of the
  synchronous producer, in its turn.

Each send's destination passes SendPath.key before its crossing, so a send to a destination the
session refuses fails alone and the sends after it still go. The outcomes of the whole job reach
the loop with one wake-up (pyjms.aio.worker.LoopInbox), which settles every send's future.

**Completed at the call.** A NON_PERSISTENT send that goes as a routed entry, to a destination
an earlier send of the context passed, is one the provider makes without waiting for the broker
(ActiveMQ's, Artemis's and Qpid's clients send such messages asynchronously, and report no
broker error to the sender). Its ``await`` returns at once, without a round trip to the worker;
an error the crossing meets all the same (the connection broke, the session closed) is raised by
the context's next send or commit, and logged when the context closes first. To keep the loop
responsive, a send's await yields to the loop once (``asyncio.sleep(0)``) when the loop has
completed sends at their call for EARLY_RUN_S without yielding; to keep the queue bounded, a
send waits for its crossing like any other while EARLY_PENDING of them wait for theirs.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from typing import Any

from pyjms.aio.worker import BatchJob, Worker
from pyjms.api.context import JMSContext as SyncContext
from pyjms.api.destination import Destination
from pyjms.api.producer import RoutedBodies
from pyjms.api.sending import SendOptions

_log = logging.getLogger("pyjms")

#: how long the loop may complete sends at their call without yielding (seconds)
EARLY_RUN_S = 0.004
#: how many messages sent by sends completed at their call may wait for their crossing at once
EARLY_PENDING = 8192

#: a send's outcome on the worker: (the send, its result, its error)
Outcome = tuple["Outgoing", Any, "BaseException | None"]


class Outgoing:
    """One queued send: a routed entry, or a send_batch's bodies to pack as routed entries, with
    its ``flags``, or a ``call`` of the synchronous producer; ``future`` is None for a send completed at its
    call."""

    __slots__ = ("destination", "entry", "flags", "together", "call", "context", "future")

    def __init__(
        self,
        destination: Any,
        entry: bytes | RoutedBodies | None,
        flags: int,
        together: bool,
        call: Callable[[], Any] | None,
        future: asyncio.Future[Any] | None,
    ) -> None:
        self.destination = destination
        self.entry = entry
        self.flags = flags
        self.together = together  # may cross with its neighbours (NON_PERSISTENT)
        self.call = call
        self.context = contextvars.copy_context() if call is not None else None
        self.future = future


class SendBatch(BatchJob[list[Outcome]]):
    """The sends queued one after another: one job, settled on the loop in one call."""

    __slots__ = ("outbox",)

    def __init__(self, outbox: Outbox, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(lambda: outbox.run(self.items), loop)
        self.outbox = outbox

    def settle(self, result: Any, error: BaseException | None) -> None:
        """On the loop: every send's outcome (``error``: the job failed before any send)."""
        outcomes: list[Outcome] = (
            [(item, None, error) for item in self.items] if error is not None else result
        )
        for item, value, failed in outcomes:
            future = item.future
            if future is None:
                if error is not None:  # the job failed as a whole (the worker noted the rest)
                    self.outbox.failed_after_completion(error)
            elif not future.done():
                if failed is None:
                    future.set_result(value)
                else:
                    future.set_exception(failed)


class Outbox:
    """The coalesced sends of one context (see the module's docstring)."""

    def __init__(self, sync: SyncContext, worker: Worker) -> None:
        self._sync = sync
        self._worker = worker
        #: the keys of the destinations a send of this context passed (SendPath.key)
        self.passed: set[str] = set()
        #: what a send completed at its call met, for the context's next send to raise
        self.failure: BaseException | None = None
        self._run_since: float | None = None  # the loop completes sends at their call since
        self._early_queued = 0  # sends completed at their call (counted on the loop)
        self.early_crossed = 0  # ... and crossed or failed since (counted on the worker)

    # ------------------------------------------------------------------ on the loop

    def raise_failure(self) -> None:
        """Raises (once) what a send completed at its call met in its crossing."""
        failure, self.failure = self.failure, None
        if failure is not None:
            raise failure

    def failed_after_completion(self, error: BaseException) -> None:
        """A send completed at its call failed (on the worker, or on the loop): the first such
        error waits for the context's next send or commit."""
        if self.failure is None:
            self.failure = error

    def queue(
        self,
        destination: Any,
        routed: tuple[bytes | RoutedBodies, int] | None,
        persistent: bool,
        call: Callable[[], Any] | None = None,
    ) -> tuple[asyncio.Future[Any] | None, bool]:
        """Queues a send: a routed entry (or a batch's bodies) and its flags, or else
        ``call``. Returns the future of
        its outcome, or None if the send is complete at its call (see the module), and whether
        its await is to yield to the loop."""
        loop = asyncio.get_running_loop()
        early = (
            routed is not None
            and not persistent
            and isinstance(destination, Destination)
            and destination.key in self.passed
            and self._early_queued - self.early_crossed < EARLY_PENDING
        )
        pause = False
        if early:
            assert routed is not None
            self._early_queued += _count(routed[0])
            future = None
            now = loop.time()
            if self._run_since is None:
                self._run_since = now
                loop.call_soon(self._yielded)  # runs once the loop has yielded
            elif now - self._run_since > EARLY_RUN_S:
                pause = True
                self._run_since = None
        else:
            self._run_since = None
            future = loop.create_future()
        if routed is None:
            item = Outgoing(destination, None, 0, False, call, future)
        else:
            item = Outgoing(destination, routed[0], routed[1], not persistent, None, future)
        self._worker.add_to_batch(item, lambda: SendBatch(self, loop))
        return future, pause

    def _yielded(self) -> None:
        self._run_since = None

    # ------------------------------------------------------------------ on the worker

    def run(self, items: list[Outgoing]) -> list[Outcome]:
        """Makes the sends of one batch, in order; returns each one's outcome."""
        sends = self._sync.sends
        passed = self.passed
        done: list[Outcome] = []
        records: list[bytes] = []  # what the next crossing carries
        crossing: list[Outgoing] = []  # ... and whose sends they are
        # how it crosses: routed entries with their flags, or a batch to one destination key
        # with one set of options (send_batch's bodies: RoutedBodies)
        how: tuple[int] | tuple[Any, SendOptions] = (0,)

        def cross() -> None:
            if not records:
                return
            try:
                if len(how) == 1:
                    sends.send_routed(records, how[0])
                else:
                    what = f"send_batch of {len(records)} messages to {crossing[0].destination}"
                    sends.send_batch(how[0], records, how[1], what)
            except Exception as e:  # every send of the crossing fails with it
                done.extend((item, None, e) for item in crossing)
                if any(item.future is None for item in crossing):
                    self.failed_after_completion(e)  # now: a commit queued next sees it
            else:
                done.extend((item, None, None) for item in crossing)
            records.clear()
            crossing.clear()

        self.early_crossed += sum(_count(item.entry) for item in items if item.future is None)
        for item in items:
            future = item.future
            if future is not None and future.cancelled():
                continue  # cancelled before the worker got to it: never sent
            if item.entry is None:
                cross()
                try:
                    assert item.call is not None and item.context is not None
                    done.append((item, item.context.run(item.call), None))
                except Exception as e:
                    done.append((item, None, e))
                continue
            try:
                key = sends.key(item.destination)  # the session and the destination pass first
            except Exception as e:
                done.append((item, None, e))
                if item.future is None:
                    self.failed_after_completion(e)
                continue
            entry: bytes | list[bytes]
            item_how: tuple[int] | tuple[Any, SendOptions]
            if isinstance(item.entry, RoutedBodies):
                # a batch, unless it can join routed sends already on their way to the crossing
                joins = bool(records) and how == (item.flags,)
                try:
                    entry = item.entry.routed() if joins else item.entry.records()
                except Exception as e:  # (checked at the call: nothing should fail here)
                    done.append((item, None, e))
                    if item.future is None:
                        self.failed_after_completion(e)
                    continue
                item_how = how if joins else (key, item.entry.options)
            else:
                entry = item.entry
                item_how = (item.flags,)
            passed.add(item.destination.key)
            if not item.together or item_how != how:
                cross()
                how = item_how
            if isinstance(entry, list):
                records.extend(entry)
            else:
                records.append(entry)
            crossing.append(item)
            if not item.together:
                cross()
        cross()
        return done


def _count(entry: bytes | RoutedBodies | None) -> int:
    """How many messages a queued send's entry holds."""
    return len(entry) if isinstance(entry, RoutedBodies) else 1
