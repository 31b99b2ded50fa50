"""One JVM per process, started on first use, shut down cleanly.

Everything that touches Java goes through here: the classpath (bridge.classpath), the shim
jar (bridge.shim), the thread rules and the shutdown order. pyjms never calls Python from a
Java thread: listeners and async sends run on Python threads that attach to the JVM as
daemons and detach when they end, so a long run does not leak attachments and a JVM shutdown
never waits on them.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pyjms.bridge import class_archive as _class_archive
from pyjms.bridge import classpath as _classpath
from pyjms.bridge import javahome as _javahome
from pyjms.bridge import javalog as _javalog
from pyjms.bridge import shim as _shim_module
from pyjms.bridge.java_types import (
    JavaChannelClass,
    JavaCodecClass,
    JavaDirectBuffer,
    JavaHashMapClass,
    JavaProvidersClass,
    JavaStringClass,
    JavaThreadClass,
)
from pyjms.bridge.javahome import JavaChoice
from pyjms.bridge.shim import shim_jar
from pyjms.errors import SetupError

if TYPE_CHECKING:
    from pyjms.bridge.java_types import JavaException

_lock = threading.RLock()
_started = False
_closers: weakref.WeakKeyDictionary[Any, Callable[[], None]] = weakref.WeakKeyDictionary()
_first_closers: weakref.WeakKeyDictionary[Any, Callable[[], None]] = weakref.WeakKeyDictionary()
_shutting_down = False
_LOG_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"

# For the long-running service commands (pyjms broker, pyjms delay-processor), which hold
# delayed messages for seconds to days and must hand each on within milliseconds of its due
# time. Measured with bench/bench_delay.py and -Xlog:gc: JPype answered Python's garbage
# collections with System.gc(), a full collection that paused the broker 60-110 ms (now also
# undone for every program: unlink_garbage_collectors); and G1
# copied the long-lived staged messages between survivor spaces at each young collection
# (pauses up to 140 ms); promoting survivors at once avoids the copies. Staging p99 over five
# runs: 82 ms without, 59 ms with (medians). A service holds its messages in memory, and G1
# grew the heap to 0.5-1 GB while 100,000 messages were staged in 4 s (live: about 150 MB): it
# starts small (-Xms32m instead of 1/64 of RAM) and may spend up to 20% of its time in GC
# before it grows (GCTimeRatio=4; G1's default 12 allows 8%): peak RSS 547-665 MB against
# 731-862 MB, p99 no worse. Library users keep the JVM defaults; PYJMS_JVM_OPTIONS, applied
# last, overrides either way (e.g. -XX:-DisableExplicitGC).
SERVICE_JVM_OPTIONS = (
    "-XX:+DisableExplicitGC",
    "-XX:MaxTenuringThreshold=0",
    "-Xms32m",
    "-XX:GCTimeRatio=4",
)

#: For the commands that live seconds (pyjms send, queues, admin...): C1 only, no C2 compiles,
#: which such a JVM never lives long enough to use. Against a pyjms broker, `pyjms send` and
#: `pyjms queues` took 2.3-2.6 s of CPU each instead of 3.1-3.8, and 2.1-2.5 s of wall time
#: instead of 2.2-2.8 (3 interleaved rounds on a 2-core machine). The services keep the default.
COMMAND_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)
#: the options a start() without its own uses (set_default_options)
_default_options: tuple[str, ...] = ()


def set_default_options(options: Sequence[str]) -> None:
    """Options for a JVM started later without options of its own (the CLI's short commands set
    COMMAND_JVM_OPTIONS before their ConnectionFactory starts it); PYJMS_JVM_OPTIONS still
    comes last. No effect on a JVM already running."""
    global _default_options
    _default_options = tuple(options)


class _Shim:
    """The shim's Java classes, looked up once (typed by pyjms.bridge.java_types)."""

    def __init__(self) -> None:
        import jpype
        import jpype.nio

        j = jpype.JClass
        self.Channel = cast(JavaChannelClass, j("org.pyjms.shim.Channel"))
        self.Providers = cast(JavaProvidersClass, j("org.pyjms.shim.Providers"))
        self.Codec = cast(JavaCodecClass, j("org.pyjms.shim.Codec"))
        self.HashMap = cast(JavaHashMapClass, j("java.util.HashMap"))
        self.String = cast(JavaStringClass, j("java.lang.String"))
        self.Thread = cast(JavaThreadClass, j("java.lang.Thread"))
        self.JException = cast("type[JavaException]", jpype.JException)
        self._direct_buffer = jpype.nio.convertToDirectBuffer

    def direct_buffer(self, memory: bytearray) -> JavaDirectBuffer:
        """A java.nio.ByteBuffer over ``memory``; the caller keeps ``memory`` alive as long as
        Java may touch the buffer (pyjms passes it only as an argument of a call)."""
        return cast(JavaDirectBuffer, self._direct_buffer(memory))

    def jclass(self, name: str) -> object:
        """Another Java class: the caller casts it to the Protocol of the methods it calls."""
        import jpype

        return jpype.JClass(name)


#: the type of shim()'s answer
Shim = _Shim
_shim: _Shim | None = None


def start(
    extra_classpath: Sequence[str] = (),
    jvm_options: Sequence[str] = (),
    providers: Sequence[str] = (_classpath.DEFAULT_PROVIDER,),
) -> _Shim:
    """Starts the JVM if it is not running; later calls return the running one's shim.
    The classpath holds ``providers``' jars and those of every provider already resolved."""
    global _started, _shim
    with _lock:
        if _shim is not None:
            return _shim
        try:
            import jpype
        except ImportError:  # pragma: no cover - jpype1 is a hard dependency
            raise SetupError("JPype is missing: pip install jpype1") from None
        cp = planned_classpath(extra_classpath, providers)
        if jpype.isJVMStarted():
            raise SetupError("a JVM was started outside pyjms; start it through pyjms.bridge.jvm.start()")
        jvm_path = java_runtime()
        options = [
            f"-Dlog4j2.configurationFile={_LOG_CONFIG}",
            # one logging context for every class loader, so that all of Java's log output
            # reaches the one bridge into Python's logging (pyjms.bridge.javalog)
            "-Dlog4j2.contextSelector=org.apache.logging.log4j.core.selector.BasicContextSelector",
            "-Dorg.apache.activemq.SERIALIZABLE_PACKAGES=",  # never deserialize object bodies
            "-Xshare:auto",
            "-Xrs",  # signals stay Python's: Ctrl-C and SIGTERM reach the program, not the JVM
            *_class_archive.jvm_options([*cp, jpype_support_jar()], jvm_path),
            *(jvm_options or _default_options),
            *filter(None, os.environ.get("PYJMS_JVM_OPTIONS", "").split()),
        ]
        jpype.startJVM(jvm_path, *options, classpath=cp, convertStrings=False)
        _started = True
        unlink_garbage_collectors()
        _shim = _Shim()
        _javalog.install(_shim, _shim.Thread)  # Java's log output into Python's logging
        # atexit runs last-registered first: ours closes contexts and brokers before
        # JPype's own hook shuts the JVM down.
        atexit.register(_shutdown)
        return _shim


def unlink_garbage_collectors() -> None:
    """Undoes JPype's linking of Python's garbage collector with Java's, both ways:

    * Java to Python: JPype keeps a phantom reference to an empty array as a sentinel; each
      Java collection that clears it (every young collection: under message load about one a
      second) makes JPype's reference-queue thread run a full Python collection, holding the
      GIL, so every Python thread (an event loop, a listener) stops for it: 6-7 ms on an idle
      2-core machine, up to 108 ms under load (22-30 of them in 200,000 asyncio messages:
      docs/performance.md).
      Pointing the queue's sentinel field at a reference that is never enqueued (a phantom
      reference without a queue) makes it treat the old sentinel, once cleared, as an ordinary
      reference without a cleanup (a no-op) and set no new one. (Not null: the queue compares
      each empty poll, null, with it.)
    * Python to Java: JPype's gc callback may answer a Python collection with System.gc(), a
      full Java collection (60-110 ms in a pyjms broker).

    What the linking is for, Java objects kept alive only by Python reference cycles, does not
    arise here: pyjms hands no Java object to Python code (messages cross as bytes), and
    Python's own collections still run. JPype's reference queue still releases the Python
    objects Java held. A JPype without these internals is left as it is."""
    import jpype

    try:
        collect = getattr(jpype._jpype, "_collect", None)
        gc.callbacks[:] = [c for c in gc.callbacks if c is not collect]
        queue = jpype.JClass("org.jpype.ref.JPypeReferenceQueue")
        sentinel = queue.class_.getDeclaredField("sentinel")
        sentinel.setAccessible(True)
        instance = queue.getInstance()
        sentinel.set(instance, jpype.JClass("java.lang.ref.PhantomReference")(instance, None))
    except Exception as e:  # another JPype: its linking stays, which costs pauses, not messages
        logging.getLogger("pyjms").debug("JPype's garbage collection linking left in place: %r", e)


def planned_classpath(
    extra_classpath: Sequence[str] = (), providers: Sequence[str] = (_classpath.DEFAULT_PROVIDER,)
) -> list[str]:
    """The classpath start() gives the JVM: the shim jar, then the providers' jars."""
    provider = _classpath.resolve(extra_classpath, providers)
    # air-gapped (PYJMS_CLASSPATH): the shim compiles against what the user gave
    # only a source checkout compiles the shim; a wheel's prebuilt shim needs no provider
    # resolved (nor Maven) beyond the one it uses
    checkout = _shim_module.SOURCE_DIR.is_dir()
    compile_cp = (
        _classpath.shim_compile_classpath()
        if checkout and not os.environ.get("PYJMS_CLASSPATH")
        else provider
    )
    return [shim_jar(compile_cp), *provider]


def java_runtime() -> str:
    """The JVM library JPype starts, chosen by bridge.javahome: PYJMS_JAVA_HOME or JAVA_HOME,
    then the pyjms-jakarta[jre] extra's runtime, then the system's Java."""
    return java_choice().libjvm


def java_choice() -> JavaChoice:
    """Which Java runtime pyjms starts, and why (bridge.javahome's order)."""
    return _javahome.choose()


def jpype_support_jar() -> str:
    """The jar JPype appends to every classpath it starts: part of the JVM's real classpath, so
    part of a class archive's key (each virtualenv has its own)."""
    import jpype

    return str(Path(jpype.__file__).resolve().parent.parent / "org.jpype.jar")


def write_class_archive() -> str:
    """Writes the class-data archive of start()'s classpath if missing (bridge.class_archive)."""
    return _class_archive.write([*planned_classpath(), jpype_support_jar()], java_runtime())


def shim() -> _Shim:
    return _shim if _shim is not None else start()


def is_started() -> bool:
    return _shim is not None


def on_shutdown(owner: Any, close: Callable[[], None], *, first: bool = False) -> None:
    """Runs close() before the JVM stops, unless owner was collected first. ``first``
    closers (brokers, which stop their own services cleanly) run before the others."""
    (_first_closers if first else _closers)[owner] = close


def forget(owner: Any) -> None:
    _closers.pop(owner, None)
    _first_closers.pop(owner, None)


def shutting_down() -> bool:
    return _shutting_down


def _shutdown() -> None:
    global _shutting_down
    _shutting_down = True
    for closers in (_first_closers, _closers):
        for _owner, close in list(closers.items()):
            with contextlib.suppress(Exception):
                close()
        closers.clear()


class _DetachAtExit:
    """Kept in a thread's thread-local storage: CPython drops it in that thread as the thread
    ends, and then it detaches the thread from the JVM. JPype attaches every Python thread
    that calls Java and never detaches it, so each ended thread that had used pyjms stayed a
    JVM thread (issue 15 finding 8: 7 -> 383 threads after 600 contexts)."""

    __slots__ = ("ident", "detach")

    def __init__(self, detach: Callable[[], None]) -> None:
        self.ident = threading.get_ident()
        self.detach = detach

    def __del__(self) -> None:
        if threading.get_ident() == self.ident and not _shutting_down:
            with contextlib.suppress(Exception):
                self.detach()


_thread_exit = threading.local()


def detach_when_thread_ends() -> None:
    """Called where a user's thread enters the JVM through pyjms (a new context, a send, any
    channel call): that thread detaches from the JVM when it ends. Cheap after the first call
    in a thread; the main thread stays attached (the JVM stops with it)."""
    if threading.get_ident() != threading.main_thread().ident and (
        getattr(_thread_exit, "detacher", None) is None
    ):
        _thread_exit.detacher = _DetachAtExit(shim().Thread.detach)


@contextlib.contextmanager
def java_thread() -> Iterator[None]:
    """For pyjms-owned Python threads that call Java: attach as daemon, always detach."""
    s = shim()
    s.Thread.attachAsDaemon()
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            s.Thread.detach()
