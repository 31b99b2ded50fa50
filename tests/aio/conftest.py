"""Helpers for the asyncio API's tests: plain pytest tests that run a coroutine with
asyncio.run (pytest-asyncio is not a dependency), against the real brokers of tests/conftest.py."""

from __future__ import annotations

import asyncio
import cProfile
import gc
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

import pyjms
import pyjms.aio as aio
import pyjms.bridge

T = TypeVar("T")

#: the longest a callback of the event loop may run: pyjms.aio must never block the loop longer
SLOW_CALLBACK_S = 0.020


def run(main: Callable[[], Awaitable[T]]) -> T:
    """Runs ``main()`` on a new event loop."""
    return asyncio.run(main())  # type: ignore[arg-type]


class SlowCallbacks(logging.Handler):
    """Collects asyncio's debug-mode reports of callbacks that held the loop too long
    ("Executing <Handle ...> took 0.012 seconds")."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.reports: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Executing "):
            self.reports.append(message)


#: the modules through which every Java call of pyjms passes: the wire layer's channel, its
#: receivers and bulk classes, its Java log bridge, and the JVM
#: (test_the_detector_watches_every_module_of_the_wire_that_calls_java)
JAVA_CROSSINGS = tuple(
    str(Path(pyjms.bridge.__file__).parent / name)
    for name in ("channel.py", "receivers.py", "bulk.py", "javalog.py", "jvm.py")
)

#: how long a test waits for a message it knows is on its way: the machine is shared (2 cores,
#: often load 5 and more), so a broker's dispatch may take seconds; only a failing test waits
#: that long
ARRIVES_MS = 20_000


async def received(consumer: aio.JMSConsumer, count: int) -> list[pyjms.Message]:
    """The next ``count`` messages of ``consumer``, each waited for up to ARRIVES_MS (a message
    that does not come fails the test)."""
    got: list[pyjms.Message] = []
    while len(got) < count:
        message = await consumer.receive(ARRIVES_MS)
        assert message is not None, f"message {len(got) + 1} of {count} did not arrive"
        got.append(message)
    return got


async def holding_a_batch(consumer: aio.JMSConsumer, bodies: list[str], at_least: int = 1) -> list[str]:
    """Receives ``bodies`` (sent to the consumer's queue, in order) until the consumer holds at
    least ``at_least`` messages taken ahead (pyjms.aio.consumer READ_AHEAD), and returns the
    bodies received. How many messages the provider has delivered to the client when a receive
    takes its batch depends on the machine's pace, so receives go on until one took enough,
    each after the first waiting a little first, for what the broker dispatches meanwhile; at
    least one more than ``at_least`` of ``bodies`` must be left when one does."""
    got: list[str] = []
    while consumer.kept_count() < at_least:
        assert len(got) < len(bodies) - at_least - 1, f"no receive took {at_least} more than its own"
        if got:
            await asyncio.sleep(0.2)
        message = await consumer.receive(ARRIVES_MS)
        assert message is not None, f"message {len(got) + 1} of {len(bodies)} did not arrive"
        got.append(message.get_text())
    assert got == bodies[: len(got)]
    return got


async def each_once_after_a_cancel(consumer: aio.JMSConsumer, bodies: list[str]) -> None:
    """After a receive was cancelled once the worker took its message: the next receive gets
    that message, a batch is then held for the receives after it, a receive cancelled before
    it ran takes nothing (not even from what is held), and every one of ``bodies`` comes once,
    in order, and then nothing."""
    got = [(await consumer.receive(ARRIVES_MS)).get_text()]
    got += await holding_a_batch(consumer, bodies[1:])  # a batch is held for the next receives
    held = asyncio.create_task(consumer.receive(ARRIVES_MS))
    held.cancel()  # before it ran: it takes nothing, not even from what is held
    with pytest.raises(asyncio.CancelledError):
        await held
    got += [m.get_text() for m in await received(consumer, len(bodies) - len(got))]
    assert got == bodies
    assert await consumer.receive(300) is None


async def listened_to(consumer: aio.JMSConsumer, count: int) -> list[str]:
    """The bodies a listener set on ``consumer`` now gets, once it got ``count`` of them (and
    nothing more came in the 0.3 s after); the listener is then taken off."""
    got: list[str] = []
    done = asyncio.Event()

    def listener(m: pyjms.Message) -> None:
        got.append(m.get_text())
        if len(got) == count:
            done.set()

    await consumer.set_message_listener(listener)
    await asyncio.wait_for(done.wait(), ARRIVES_MS / 1000)
    await asyncio.sleep(0.3)  # a message delivered twice would come meanwhile
    await consumer.set_message_listener(None)
    return got


@dataclass
class Watch:
    """What the loop did while watched."""

    #: asyncio's own reports of callbacks that took 20 ms or more (wall-clock time)
    reports: list[str] = field(default_factory=list)
    #: those callbacks, with how the loop's thread spent the time: (callback, wall, on a CPU,
    #: waiting for a CPU, blocked), in seconds (Linux's /proc/thread-self/schedstat)
    timed: list[tuple[str, float, float, float, float]] = field(default_factory=list)
    #: the callbacks in which the loop's thread called into Java: (callback, pyjms function)
    java_calls: list[tuple[str, str]] = field(default_factory=list)

    def blocking(self) -> list[str]:
        """The callbacks that blocked the loop: those that called Java (a Java call on the loop
        blocks it for as long as Java takes: a receive, a round trip to the broker), and those
        that spent 20 ms or more on a CPU (Python work on the loop: the bound issue 34 sets).

        A callback that took 20 ms of wall time otherwise waited: for a CPU (the machine is
        shared: load 40 on 2 cores here) or for the GIL, which another thread held (while the
        scheduler had it off its CPU, too); asyncio's report of it stays in ``reports``."""
        java = [f"{what} called Java: {function}" for what, function in self.java_calls]
        return java + [
            f"{what} took {wall * 1000:.1f} ms: {cpu * 1000:.1f} ms on a CPU, {blocked * 1000:.1f} ms blocked"
            for what, wall, cpu, _, blocked in self.timed
            if cpu >= SLOW_CALLBACK_S
        ]


def _schedstat() -> tuple[float, float]:
    """The calling thread's time on a CPU and waiting for one, in seconds, since it started."""
    with open("/proc/thread-self/schedstat", "rb") as f:
        on_cpu, waiting = f.read().split()[:2]
    return int(on_cpu) / 1e9, int(waiting) / 1e9


def run_watched(main: Callable[[], Awaitable[T]]) -> tuple[T, Watch]:
    """Runs ``main()`` on a new loop in a new thread, in asyncio debug mode with a 20 ms
    slow-callback threshold, and returns its result and what the loop did (Watch).

    asyncio's reports measure wall time; the watch splits each slow callback's time into time
    on a CPU, waiting for a CPU, and blocked, and a profiler (cProfile) on each callback notes
    every call into pyjms's Java crossings (JAVA_CROSSINGS). Python's cyclic garbage collector is
    paused meanwhile: JPype follows a collection with a Java one, in whichever thread collected."""
    watch = Watch()
    slow = SlowCallbacks()
    log = logging.getLogger("asyncio")
    original_run = asyncio.events.Handle._run
    outcome: dict[str, Any] = {}
    running: list[str] = ["(no callback)"]

    def timed_run(handle: asyncio.Handle) -> None:
        task = getattr(handle._callback, "__self__", None)
        running[0] = repr(task if isinstance(task, asyncio.Task) else handle)[:300]
        # cProfile notes the functions the callback called. Its own cost counts against the
        # 20 ms, but less than a profiler written in Python (sys.setprofile) did: a loop of
        # 200,000 calls took 15 ms alone, 51 ms under cProfile, 76 ms under such a hook
        calls = cProfile.Profile(builtins=False)
        wall = time.monotonic()
        cpu, runnable = _schedstat()
        calls.enable()
        try:
            original_run(handle)
        finally:
            calls.disable()
            wall = time.monotonic() - wall
            cpu_after, runnable_after = _schedstat()
            cpu, runnable = cpu_after - cpu, runnable_after - runnable
            if wall >= SLOW_CALLBACK_S:
                watch.timed.append((running[0], wall, cpu, runnable, max(0.0, wall - cpu - runnable)))
            for entry in calls.getstats():
                code = entry.code
                if not isinstance(code, str) and code.co_filename in JAVA_CROSSINGS:
                    watch.java_calls.append((running[0], f"{code.co_filename}:{code.co_name}"))

    async def watched() -> T:
        loop = asyncio.get_running_loop()
        loop.slow_callback_duration = SLOW_CALLBACK_S
        return await main()

    def loop_thread() -> None:
        try:
            outcome["result"] = asyncio.run(watched(), debug=True)
        except BaseException as e:  # handed to the test's thread
            outcome["error"] = e

    log.addHandler(slow)
    asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]
    gc.collect()
    gc.disable()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)  # a thread wanting the GIL waits for at most this per holder
    try:
        thread = threading.Thread(target=loop_thread, name="watched-loop")
        thread.start()
        thread.join()
    finally:
        gc.enable()
        sys.setswitchinterval(interval)
        asyncio.events.Handle._run = original_run  # type: ignore[method-assign]
        log.removeHandler(slow)
    watch.reports = slow.reports
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"], watch


@pytest.fixture
def afactory(url: str) -> aio.ConnectionFactory:
    return aio.ConnectionFactory(url)
