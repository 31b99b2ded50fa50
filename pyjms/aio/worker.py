"""The one thread that runs a context's JMS calls, and how its results reach the event loop.

A JMS session is single-threaded, so each pyjms.aio context owns one worker thread: every call
on the context, its producers, consumers and browsers becomes a job on that thread's queue and
runs there in submission order. The coroutine that submitted it awaits an asyncio future which
the worker settles through ``loop.call_soon_threadsafe``; the event loop itself never calls
Java.

A job that waits (a receive, a marking browser's get) runs in short slices and goes to the
back of the queue between them, so one idle receive neither holds up a send on the same context
for long nor keeps a cancelled or closed caller waiting.

Results reach the loop through the loop's inbox (LoopInbox): however many jobs the worker
finishes while the loop is busy, the loop is woken once (one ``call_soon_threadsafe``) and
settles them all. Sends queued one after another join one job (``add_to_batch``): the loop
keeps adding to it until it yields, or until it queues any other call, and the worker takes it
as a whole (pyjms.aio.outbox).

A cancelled job that has not started never runs. One that was running when its caller was
cancelled finishes, and its result goes to the job's ``orphan`` handler on the loop (a consumer
keeps a received message for its next receive: pyjms.aio.consumer).

The thread attaches to the JVM as a daemon on its first Java call (JPype attaches any thread
that calls Java, as a daemon) and, through pyjms.bridge.jvm.java_thread, detaches when the
context is closed; so a long program opening many contexts leaks no attachments and a JVM
shutdown never waits for a worker.
"""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pyjms.bridge import jvm

T = TypeVar("T")

#: a job's step returns this to be run again after the jobs queued behind it
AGAIN: Any = object()

#: set in a message listener's run on the loop (and what it starts): closing there must not
#: wait for the listener to finish
IN_LISTENER: contextvars.ContextVar[bool] = contextvars.ContextVar("pyjms_aio_in_listener", default=False)

_names = itertools.count(1)
_log = logging.getLogger("pyjms")


class Job(Generic[T]):
    """One call for the worker: ``step`` runs on the worker (maybe several times, until it
    returns something other than AGAIN), its result settles ``future`` on the loop. It runs in
    a copy of the submitting coroutine's context variables, as ``asyncio.to_thread`` would, so
    what the caller has current (an OpenTelemetry span, say) is current in the call."""

    __slots__ = ("step", "future", "loop", "orphan", "cancelled", "context", "taken", "detached")

    def __init__(
        self, step: Callable[[], T], loop: asyncio.AbstractEventLoop, orphan: Callable[[T], None] | None
    ) -> None:
        self.step = step
        self.loop = loop
        self.future: asyncio.Future[T] = loop.create_future()
        self.orphan = orphan
        self.cancelled = False  # set on the loop when the future is cancelled; read by the worker
        self.context = contextvars.copy_context()
        self.future.add_done_callback(self._done)
        self.taken = False  # set, under the worker's lock, when the thread takes the job
        #: what a job nobody awaits does (Worker.submit_detached): its outcome is not sent back
        self.detached: str | None = None

    def _done(self, future: asyncio.Future[T]) -> None:
        if future.cancelled():
            self.cancelled = True

    def settle(self, result: Any, error: BaseException | None) -> None:
        """On the loop: the outcome of a step that ran. A caller that went away meanwhile gets
        nothing; a result it would have had goes to the orphan handler."""
        if self.future.done():
            if error is None and self.orphan is not None:
                self.orphan(result)
            return
        if error is None:
            self.future.set_result(result)
        else:
            self.future.set_exception(error)


class BatchJob(Job[T]):
    """A job that calls made one after another on the loop join (``Worker.add_to_batch``)
    until the worker takes it: ``items`` grows on the loop until then, and is the worker's
    alone from then on."""

    __slots__ = ("items", "queued")

    def __init__(self, step: Callable[[], T], loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(step, loop, None)
        self.items: list[Any] = []
        self.queued = False  # handed to the thread's queue


#: how long one run of a loop's inbox goes on before it lets the loop's other callbacks run
RUN_SLICE_S = 0.004


class LoopInbox:
    """Calls for one event loop from other threads, run in order, with one
    ``call_soon_threadsafe`` for as many as arrive before the loop gets to them: a loop that is
    busy, or a worker that finishes many jobs in a row, costs one wake-up, not one per call."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._calls: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._scheduled = False

    def post(self, fn: Callable[..., None], *args: Any) -> None:
        """From any thread: ``fn(*args)`` runs on the loop (dropped if the loop is closed)."""
        self._calls.append((fn, args))
        if not self._scheduled:
            self._scheduled = True
            try:
                self._loop.call_soon_threadsafe(self._run)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                self._calls.clear()

    def _run(self) -> None:
        self._scheduled = False  # before taking: what is posted from now on schedules again
        calls = self._calls
        # a slice of the loop's time at most, then the rest after the loop's other callbacks:
        # workers that finished many jobs while the loop was busy must not hold it for long
        until = time.perf_counter() + RUN_SLICE_S
        while calls:
            fn, args = calls.popleft()
            try:
                fn(*args)
            except Exception:  # one failing call must not keep the others from running
                _log.exception("pyjms.aio: a call from a worker failed on the loop")
            if calls and time.perf_counter() >= until:
                self._scheduled = True  # this run takes up what is posted meanwhile: no second one
                self._loop.call_soon(self._run)
                return


_inboxes: dict[asyncio.AbstractEventLoop, LoopInbox] = {}
_inboxes_lock = threading.Lock()


def inbox(loop: asyncio.AbstractEventLoop) -> LoopInbox:
    """The inbox of ``loop`` (made at its first use; dropped when the loop is closed)."""
    box = _inboxes.get(loop)
    if box is None:
        with _inboxes_lock:
            for old in [k for k in _inboxes if k.is_closed()]:
                del _inboxes[old]
            box = _inboxes.setdefault(loop, LoopInbox(loop))
    return box


class Worker:
    """A context's thread. ``submit`` is called on the loop; ``run_first`` opens the context
    on the thread (starting the JVM if it is the first) before it attaches for good."""

    def __init__(self) -> None:
        self._jobs: deque[Job[Any] | None] = deque()
        self._ready = threading.Condition()
        self._stopped = False
        self.name = f"pyjms-aio-{next(_names)}"
        #: runs on the thread before each step of a job (the context's owed acknowledgements);
        #: what it raises fails that step
        self.before_step: Callable[[], None] | None = None
        #: set when the thread has ended
        self.ended = threading.Event()
        self._batch: BatchJob[Any] | None = None  # the batch the next add_to_batch may join
        # threading.Thread.start() waits until the new thread runs, which on a loaded machine
        # holds the loop for as long as the thread waits for a CPU and the GIL: _thread does not
        _thread.start_new_thread(self._main, ())

    def submit(self, step: Callable[[], T], orphan: Callable[[T], None] | None = None) -> asyncio.Future[T]:
        """Queues ``step`` and returns the future the loop awaits for its result."""
        job = Job(step, asyncio.get_running_loop(), orphan)
        self._enqueue(job)
        return job.future

    def _enqueue(self, job: Job[Any]) -> None:
        with self._ready:
            if self._stopped:
                raise RuntimeError("the context's worker has stopped")
            self._queue_batch()  # the sends queued before this call go first
            self._batch = None  # and the sends after it go after it
            self._jobs.append(job)
            self._ready.notify()

    def add_to_batch(self, item: Any, make: Callable[[], BatchJob[Any]]) -> BatchJob[Any]:
        """On the loop: adds ``item`` to the batch the worker has not taken yet, if no other
        call was queued since it was made; else to a new one, ``make()``. A new batch goes to
        the thread when the loop next runs its callbacks (so what the loop queues meanwhile
        joins it), or before the next other call, whichever comes first."""
        with self._ready:
            if self._stopped:
                raise RuntimeError("the context's worker has stopped")
            batch = self._batch
            if batch is None or batch.taken:
                batch = self._batch = make()
                batch.loop.call_soon(self._hand_batch, batch)
            batch.items.append(item)
            return batch

    def _hand_batch(self, batch: BatchJob[Any]) -> None:
        with self._ready:
            if not batch.queued and not self._stopped:
                batch.queued = True
                self._jobs.append(batch)
                self._ready.notify()

    def _queue_batch(self) -> None:
        """Under the lock: a batch still on the loop goes to the thread's queue now."""
        batch = self._batch
        if batch is not None and not batch.queued:
            batch.queued = True
            self._jobs.append(batch)

    def submit_detached(self, step: Callable[[], Any], what: str) -> None:
        """Queues ``step`` that nobody awaits (the clean-up after a caller went away, the
        acknowledgement a hand-over owes): nothing of it comes back to the loop, which is not
        woken for it (one wake-up less per receive), and a failure is logged by the worker."""
        job: Job[Any] = Job(step, asyncio.get_running_loop(), None)
        job.detached = what
        self._enqueue(job)

    async def call(self, step: Callable[[], T], orphan: Callable[[T], None]) -> T:
        """Submits ``step`` and awaits its result. If the awaiting task is cancelled after the
        result was set but before the task resumed (asyncio then raises CancelledError in the
        task and the result is never seen), the result goes to ``orphan`` all the same."""
        queued = self.submit(step, orphan)
        try:
            return await queued
        except asyncio.CancelledError:
            if queued.done() and not queued.cancelled() and queued.exception() is None:
                orphan(queued.result())
            raise

    def backlog(self) -> int:
        """How many jobs wait behind the one running (a waiting job slices shorter then)."""
        batch = self._batch
        return len(self._jobs) + (batch is not None and not batch.queued)

    def linger(self, seconds: float) -> bool:
        """On the thread, in a step: waits up to ``seconds`` while no other job is queued (the
        loop's next call ends the wait at once). Returns whether the whole time passed idle."""
        with self._ready:
            if self.backlog():
                return False
            self._ready.wait(seconds)  # _enqueue, _hand_batch and stop notify
            return not self.backlog()

    def stop(self) -> None:
        """The worker ends after the jobs queued so far."""
        with self._ready:
            if not self._stopped:
                self._queue_batch()
                self._batch = None
                self._stopped = True
                self._jobs.append(None)
                self._ready.notify()

    def _next(self) -> Job[Any] | None:
        with self._ready:
            while not self._jobs:
                self._ready.wait()
            job = self._jobs.popleft()
            if job is not None:
                job.taken = True
            return job

    def _main(self) -> None:
        threading.current_thread().name = self.name
        try:
            self._run()
        finally:
            self.ended.set()

    def _run(self) -> None:
        # The first job opens the context, which may start the JVM with the factory's classpath:
        # only then may the thread attach explicitly (java_thread would start a default JVM).
        first = self._next()
        if first is None or first.cancelled or not self._execute(first):
            with self._ready:
                self._stopped = True  # no context: nothing will be submitted
            return
        with jvm.java_thread():
            while (job := self._next()) is not None:
                self._execute(job)

    def _execute(self, job: Job[Any]) -> bool:
        """Runs one step of a job; False if it failed."""
        cancelled = job.cancelled  # before it started (the loop may cancel it while it runs)
        try:
            # what a hand-over owes is settled before any job, a cancelled one too: the loop
            # may have left it to this one (HandOver.handed_over)
            if self.before_step is not None:
                self.before_step()
            if cancelled:
                return True  # never started: nothing happened
            result = job.context.run(job.step)
        except BaseException as e:  # every failure goes to the awaiting coroutine
            if cancelled:  # nobody awaits it: only the settling ran
                _log.warning("acknowledging received messages failed: %r", e)
            elif job.detached is not None:
                _log.warning("%s failed: %r", job.detached, e)
            else:
                self._settle(job, None, e)
            return False
        if result is AGAIN:
            with self._ready:
                self._jobs.append(job)
            return True
        if job.detached is None:
            self._settle(job, result, None)
        return True

    @staticmethod
    def _settle(job: Job[Any], result: Any, error: BaseException | None) -> None:
        inbox(job.loop).post(job.settle, result, error)
