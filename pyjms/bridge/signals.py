"""Stopping on SIGINT or SIGTERM without a deadlock, for a process that runs the JVM (started
with -Xrs, pyjms.bridge.jvm: those signals stay Python's).

Python runs a signal handler on the main thread between two bytecodes, and that may be while the
main thread is inside ``threading.Event.wait`` holding the event's lock. A handler that calls
``Event.set()`` then waits for that lock, which its own thread holds: the process never stops (a
service's main loop waits on its stop event all the time; one run in a few hundred signals hung
so). So the handler here only notes the signal and puts it on a ``queue.SimpleQueue``, which is
reentrant and documented safe in a signal handler, and a daemon thread takes it from there and
calls the stop.
"""

from __future__ import annotations

import queue
import signal
import threading
from collections.abc import Callable, Iterable
from types import FrameType

#: the signals a service stops on: Ctrl-C and a supervisor's stop
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: the exit status of a command ended by Ctrl-C (128 + SIGINT), as shells report it
EXIT_INTERRUPTED = 128 + signal.SIGINT


def stop_on_signals(stop: Callable[[], None], signals: Iterable[int] = STOP_SIGNALS) -> list[int]:
    """Calls ``stop`` on a thread of its own for each of ``signals`` that arrives; returns the
    list the signals are noted in as they arrive, in order (the first says what stopped it).
    Call from the main thread, after the JVM started."""
    stopped_by: list[int] = []
    arrived: queue.SimpleQueue[int] = queue.SimpleQueue()

    def relay() -> None:
        while True:
            arrived.get()
            stop()

    threading.Thread(target=relay, name="pyjms-signals", daemon=True).start()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stopped_by.append(signum)  # no lock taken here: see the module
        arrived.put(signum)

    for sig in signals:
        signal.signal(sig, on_signal)
    return stopped_by


def exit_status(stopped_by: list[int]) -> int:
    """130 after Ctrl-C, as for every command; 0 after SIGTERM, a supervisor's stop, or none."""
    return EXIT_INTERRUPTED if stopped_by[:1] == [signal.SIGINT] else 0
