"""Starting a long-running command without a silent hang: the broker's data directory is
checked before the broker starts (a bad, unwritable or locked directory is one line naming
it), a service's broker is reached once before the service starts (an unreachable broker is
one line at once), and a start that waits in the JVM still ends on Ctrl-C."""

from __future__ import annotations

import errno
import fcntl
import os
import select
import signal
import socket
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pyjms.api.factory import ConnectionFactory
from pyjms.bridge import jvm
from pyjms.bridge.signals import EXIT_INTERRUPTED
from pyjms.cli.common import CommandError, note

T = TypeVar("T")

#: the lock files a broker holds in its data directory while it runs, per provider: ActiveMQ's
#: KahaDB and scheduler stores (fcntl locks, as Java's FileChannel.tryLock takes them), Artemis's
#: node manager (serverlock.1, which the serving broker holds). ActiveMQ's locker waits for a held lock for
#: ever, so pyjms looks first.
LOCK_FILES = {"activemq": ("kahadb/lock", "scheduler/lock"), "artemis": ("serverlock.1",)}


#: permission bits a broker's data directory must not have: messages are nobody else's to read
_SHARED_BITS = stat.S_IRWXG | stat.S_IRWXO


def check_data_dir(path: str, provider: str, shared: bool = False) -> Path:
    """The directory, made if missing (0700), or CommandError naming it and why a broker cannot
    use it. An existing directory of this user's that others may enter is tightened to 0700,
    with a note; one of another user's that others may write is refused. One whose store
    another broker holds is refused unless ``shared`` (the other of a failover pair: this one
    will wait as its standby)."""
    where = Path(path).expanduser()
    if where.exists() and not where.is_dir():
        raise CommandError(f"--data {path}: not a directory")
    try:
        if where.exists():
            _private(where, path)
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as e:
        raise CommandError(f"--data {path}: cannot write there: {e.strerror or e}") from None
    for name in LOCK_FILES.get(provider, ()):
        lock_file = where / name
        if not lock_file.exists():
            continue
        try:
            fd = os.open(lock_file, os.O_RDWR)
        except OSError as e:
            raise CommandError(
                f"--data {path}: cannot open its lock file {lock_file}: {e.strerror or e}"
            ) from None
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EAGAIN):
                if shared:
                    continue
                raise CommandError(
                    f"--data {path}: in use by another broker (its lock file {lock_file} is "
                    f"held); stop that broker, give another directory, or --shared-store to stand by for it"
                ) from None
            raise CommandError(f"--data {path}: cannot lock {lock_file}: {e.strerror or e}") from None
        finally:
            os.close(fd)  # closing releases the probe's lock at once
    return where


def _private(where: Path, path: str) -> None:
    """An existing data directory made 0700, or refused when it is not ours and others may write it."""
    st = where.stat()
    if not st.st_mode & _SHARED_BITS:
        return
    if st.st_uid == os.geteuid():
        os.chmod(where, stat.S_IMODE(st.st_mode) & ~_SHARED_BITS)
        note(f"--data {path}: was mode {stat.S_IMODE(st.st_mode):o}, others could enter it; now 700")
    elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CommandError(
            f"--data {path}: another user owns it and others may write it (mode {stat.S_IMODE(st.st_mode):o}); "
            "a broker keeps its messages only in a directory others cannot change"
        )


def interruptible(start: Callable[[], T], what: str) -> T:
    """start() in this (the main) thread, ended at once by Ctrl-C even while it waits in the JVM.

    Python runs its SIGINT handler only between bytecodes, so a call blocked in Java would hold
    it back. Python's C-level handler also writes the signal number to the wakeup fd, though: a
    watcher thread reads it there and ends the process, as a half-started JVM cannot be stopped
    cleanly. (start() stays in the main thread: threads the JVM makes inherit its creator's
    context class loader, which Artemis's services need to be JPype's.)"""
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if not select.select([reader], [], [], 0.2)[0]:
                continue
            if signal.SIGINT in reader.recv(64) and not done.is_set():
                note(f"interrupted while {what}")
                os._exit(EXIT_INTERRUPTED)

    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    watcher = threading.Thread(target=watch, name=f"pyjms interrupt watch: {what}", daemon=True)
    watcher.start()
    try:
        return start()
    finally:
        done.set()
        signal.set_wakeup_fd(previous)
        watcher.join(1)
        reader.close()
        writer.close()


def reach(factory: ConnectionFactory) -> None:
    """Connects once and closes: an unreachable broker fails here, as one line, before a service
    starts threads that would retry it."""
    jvm.start(factory.classpath)
    interruptible(lambda: factory.create_context().close(), f"connecting to {factory.url}")
