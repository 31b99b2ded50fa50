"""JMSContext.set_exception_listener: a listener told once when a connection fails.

The provider's client tells the shim's exception listener (org.pyjms.shim.Channel keeps what
it heard); Python is never called from a Java thread. One pyjms thread,
``pyjms-exception-listeners``, reads what each watched connection's shim kept every
:data:`POLL_S` seconds and calls that connection's listener, on that thread, with the pyjms
error (a ConnectionBrokenRuntimeException or BrokerUnavailableRuntimeException). The thread
runs only while some connection has a listener.

As in JMS, the listener belongs to the connection: contexts made by ``create_context`` share
their parent's, and setting it on any of them sets it for all.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyjms.bridge import jvm
from pyjms.bridge.channel import Channel
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext

_log = logging.getLogger("pyjms")

#: what a listener is called with: the connection's failure as a pyjms error
ExceptionListener = Callable[[JMSRuntimeException], None]
#: how often the watching thread reads each connection's failure, in seconds
POLL_S = 0.2


class ConnectionWatch:
    """One connection's exception listener, and the contexts that share the connection."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
        self._contexts: weakref.WeakSet[JMSContext] = weakref.WeakSet()
        self.listener: ExceptionListener | None = None
        self.told = False

    def add(self, ctx: JMSContext) -> None:
        self._contexts.add(ctx)

    def set_listener(self, listener: ExceptionListener | None) -> None:
        if listener is not None and not callable(listener):
            raise InvalidArgumentRuntimeException(
                f"an exception listener must be callable (it is called with the error), got {listener!r}"
            )
        self.listener = listener
        if listener is not None and not self.told:
            _watcher.watch(self)

    def check(self) -> bool:
        """Tells the listener if the connection failed; False when there is nothing left to
        watch (told, no listener, or every context closed)."""
        listener = self.listener
        if listener is None or self.told:
            return False
        if all(ctx.closed for ctx in list(self._contexts)):
            return False
        failure = self._channel.connection_failure()
        if failure is None:
            return True
        self.told = True
        try:
            listener(failure)
        except Exception:  # a listener's failure must not stop the others being told
            _log.exception("exception listener %r failed", listener)
        return False


class _Watcher:
    """The one thread that watches every connection with a listener."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watches: list[ConnectionWatch] = []
        self._thread: threading.Thread | None = None

    def watch(self, watch: ConnectionWatch) -> None:
        with self._lock:
            if watch not in self._watches:
                self._watches.append(watch)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="pyjms-exception-listeners", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        with jvm.java_thread():
            while not jvm.shutting_down():
                with self._lock:
                    watches = list(self._watches)
                done = [w for w in watches if not w.check()]
                with self._lock:
                    for w in done:
                        self._watches.remove(w)
                    if not self._watches:
                        self._thread = None
                        return
                time.sleep(POLL_S)


_watcher = _Watcher()
