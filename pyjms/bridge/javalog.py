"""Java's log output in Python's ``logging``.

The provider's Java code (ActiveMQ's broker and client, Artemis, Qpid JMS, through SLF4J and
log4j2) logs through log4j2, configured by ``log4j2.properties`` beside this module (WARN and
above). When the JVM starts, an appender of the shim (org.pyjms.shim.LogBridge) replaces
log4j2's console: it queues each event, and a pyjms thread, ``pyjms-java-log``, hands them
to Python's logging as records of the logger ``pyjms.java.<Java logger>`` (for example
``pyjms.java.org.apache.activemq.broker.BrokerService``), levels mapped (:data:`LEVELS`), the
Java thread in ``record.java_thread``, a Java exception's stack trace as the record's
exception text. Java never calls Python, and a Java thread never waits on Python: with more
than :data:`CAPACITY` events waiting, events are dropped, and a warning says how many.

Java filters before Python does: at WARN, unless the logger ``pyjms.java`` has a level of its
own when the JVM starts (``logging.getLogger("pyjms.java").setLevel(logging.INFO)``): then at
that level. ``PYJMS_JAVA_LOG=stderr`` leaves log4j2's console as it was (docs/logging.md).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
from typing import Protocol, cast

#: every Java logger's records go to the Python logger of this name plus "." and its name
LOGGER_PREFIX = "pyjms.java"
#: events at most waiting for the Python thread; more are dropped (and counted)
CAPACITY = 10_000
#: a level below DEBUG for log4j2's TRACE (Python's logging has none)
TRACE = 5
#: log4j2's int levels (FATAL 100 ... TRACE 600) to Python's: the first bound not below
LEVELS: tuple[tuple[int, int], ...] = (
    (100, logging.CRITICAL),
    (200, logging.ERROR),
    (300, logging.WARNING),
    (400, logging.INFO),
    (500, logging.DEBUG),
)
_JAVA_LEVEL_NAMES = (
    (logging.ERROR, "ERROR"),
    (logging.WARNING, "WARN"),
    (logging.INFO, "INFO"),
    (logging.DEBUG, "DEBUG"),
)
_POLL_MS = 200
_BATCH = 500
_FIELDS = 6


class _JavaLogBridge(Protocol):
    def poll(self, max: int, timeoutMs: int) -> list[str]: ...

    def takeDropped(self) -> int: ...


class _JavaLogBridgeClass(Protocol):
    def install(self, capacity: int, level: str | None) -> _JavaLogBridge: ...


class _Shim(Protocol):
    """What of pyjms.bridge.jvm's shim this module uses."""

    def jclass(self, name: str) -> object: ...


class _Attach(Protocol):
    def attachAsDaemon(self) -> None: ...

    def detach(self) -> None: ...


def python_level(log4j_level: int) -> int:
    """The Python level of a log4j2 int level (TRACE and finer: :data:`TRACE`)."""
    for bound, level in LEVELS:
        if log4j_level <= bound:
            return level
    return TRACE


def java_level() -> str | None:
    """The log4j2 level Java filters at: that of the logger ``pyjms.java`` if it has one of
    its own, else None (log4j2.properties' WARN)."""
    level = logging.getLogger(LOGGER_PREFIX).level
    if level == logging.NOTSET:
        return None
    for bound, name in _JAVA_LEVEL_NAMES:
        if level >= bound:
            return name
    return "TRACE"


class _Drain:
    def __init__(self, bridge: _JavaLogBridge, thread_class: _Attach) -> None:
        self._bridge = bridge
        self._thread_class = thread_class
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pyjms-java-log", daemon=True)

    def start(self) -> None:
        self._thread.start()
        # registered after JPype's exit hook and before pyjms.bridge.jvm's: at exit it runs
        # after pyjms has closed its contexts and brokers (whose logs it hands on) and
        # before the JVM stops
        atexit.register(self.stop)

    def _run(self) -> None:
        self._thread_class.attachAsDaemon()
        try:
            while not self._stop.is_set():
                self.drain(_POLL_MS)
        finally:
            with contextlib.suppress(Exception):
                self._thread_class.detach()

    def drain(self, wait_ms: int) -> int:
        """Hands on what is queued (waiting up to ``wait_ms`` for a first event)."""
        try:
            flat = [str(s) for s in self._bridge.poll(_BATCH, wait_ms)]
            dropped = int(self._bridge.takeDropped())
        except Exception:  # the JVM is stopping
            self._stop.set()
            return 0
        for i in range(0, len(flat), _FIELDS):
            emit(*flat[i : i + _FIELDS])
        if dropped:
            logging.getLogger(LOGGER_PREFIX).warning(
                "%d Java log records were dropped: more than %d were waiting for Python", dropped, CAPACITY
            )
        return len(flat) // _FIELDS

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2 * _POLL_MS / 1000 + 1)
        while self.drain(0):  # what the last closes logged
            pass


def emit(level: str, logger: str, message: str, thrown: str, thread: str, millis: str) -> None:
    """One Java event as a record of ``pyjms.java.<logger>``."""
    target = logging.getLogger(f"{LOGGER_PREFIX}.{logger}" if logger else LOGGER_PREFIX)
    py_level = python_level(int(level))
    if not target.isEnabledFor(py_level):
        return
    record = target.makeRecord(
        target.name, py_level, "(java)", 0, message, (), None, extra={"java_thread": thread}
    )
    record.created = int(millis) / 1000
    record.msecs = int(millis) % 1000
    if thrown:
        record.exc_text = thrown.rstrip("\n")
    target.handle(record)


_drain: _Drain | None = None


def install(shim: _Shim, thread_class: _Attach) -> None:
    """Sends Java's log output to Python's logging from now on (pyjms.bridge.jvm.start calls
    it once the JVM runs), unless PYJMS_JAVA_LOG=stderr."""
    global _drain
    if os.environ.get("PYJMS_JAVA_LOG", "").strip().lower() == "stderr" or _drain is not None:
        return
    try:
        bridge_class = cast(_JavaLogBridgeClass, shim.jclass("org.pyjms.shim.LogBridge"))
        bridge = bridge_class.install(CAPACITY, java_level())
    except Exception as e:  # a classpath without log4j-core (PYJMS_CLASSPATH): Java logs as configured
        logging.getLogger(LOGGER_PREFIX).debug("Java's log output stays on log4j2's console: %s", e)
        return
    _drain = _Drain(bridge, thread_class)
    _drain.start()
