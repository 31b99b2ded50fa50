"""Stopping on a signal (pyjms.bridge.signals): the stop comes however often a signal lands while
the main thread waits on the event it sets. A handler that set the event itself hung the
process when a signal landed inside ``Event.wait`` (the lock the handler needs is its own
thread's): a dlq-handler that never ended after Ctrl-C in a whole-suite run, and a few hundred
signals into a loop that waits 50 µs at a time; at the second signal in the busy loop below."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap

SIGNALS = 300

# the main thread waits on the stop event all the time, as a service's main loop does
CHILD = textwrap.dedent(
    """
    import signal, sys, threading
    from pyjms.bridge.signals import stop_on_signals

    stop = threading.Event()
    stopped_by = stop_on_signals(stop.set, (signal.SIGUSR1,))
    print("ready", flush=True)
    while True:
        if stop.wait(0):  # (holding the lock as long as it can)
            stop.clear()
            print(len(stopped_by), flush=True)
    """
)


def test_every_signal_stops_the_waiting_main_thread_and_is_noted() -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready"
        for sent in range(1, SIGNALS + 1):
            os.kill(child.pid, signal.SIGUSR1)
            ready, _, _ = select.select([child.stdout], [], [], 20)
            assert ready, f"no stop after signal #{sent}: the process hangs in its signal handler"
            assert child.stdout.readline().strip() == str(sent)  # each noted, in order
    finally:
        child.kill()
        child.wait()
