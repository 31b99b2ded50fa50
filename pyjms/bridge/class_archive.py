"""A class-data archive (JDK 17's dynamic AppCDS) of the classes a pyjms JVM loads.

Most of a new process's time to its first message is the JVM loading and verifying the
broker's and client's classes (an embedded ActiveMQ broker: about 0.6 s). An archive of those
classes, mapped at start instead, cut the median time to the first message by about a quarter
(bench/bench_throughput.py's cold start). `pyjms providers fetch` writes it once per
classpath and Java: a child process runs an embedded broker and a round trip under
``-XX:ArchiveClassesAtExit``, and the archive is renamed into place only when complete. Every
later JVM of pyjms with that exact classpath maps it; another classpath (extra jars, a new
provider resolved) or Java finds no archive of its own and starts as before. A stale or damaged
archive is ignored by the JVM (``-Xshare:auto``). On by default; ``PYJMS_CLASS_ARCHIVE=0``
turns it off (see enabled()).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pyjms.bridge import maven

#: what the child does while its classes are recorded: the first minute of most programs
WARM_UP = """
import pyjms
with pyjms.ConnectionFactory().create_context() as ctx:
    q = ctx.create_queue("PYJMS.CLASS.ARCHIVE")
    ctx.create_producer().send(q, "warm")
    assert ctx.create_consumer(q).receive(30000).get_text() == "warm"
"""


def enabled() -> bool:
    """On unless PYJMS_CLASS_ARCHIVE=0 (or off, false, no)."""
    return os.environ.get("PYJMS_CLASS_ARCHIVE", "1").strip().lower() not in ("0", "off", "false", "no")


def archive_for(classpath: Sequence[str], java: str) -> Path:
    """Where the archive for this classpath and this Java lives (whether or not it exists).
    ``classpath`` is the JVM's whole classpath, JPype's own jar included: the JVM maps an
    archive only where the classpath it was written with is the one it runs with."""
    digest = hashlib.sha256()
    for entry in (java, *classpath):
        try:
            st = os.stat(entry)
            digest.update(f"{entry}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{entry}\0missing\n".encode())
    return Path(maven.default_cache_dir()) / "class-archives" / f"{digest.hexdigest()[:20]}.jsa"


def jvm_options(classpath: Sequence[str], java: str) -> list[str]:
    """The options that map the archive, or none when there is none for this classpath."""
    if not enabled():  # no key to compute (a stat of every jar) at each start
        return []
    archive = archive_for(classpath, java)
    if not archive.is_file():
        return []
    # the JVM's own notes on classes it could not archive or map are noise to a user
    return [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]


def write(classpath: Sequence[str], java: str) -> str:
    """Writes the archive for this classpath if it is missing; says what it did, in one line."""
    if not enabled():
        return "class-data archive: off (PYJMS_CLASS_ARCHIVE=0)"
    archive = archive_for(classpath, java)
    if archive.is_file():
        return f"class-data archive: ready ({archive})"
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_name(f"{archive.stem}.{os.getpid()}.partial")
    env = dict(os.environ)
    env["PYJMS_CLASS_ARCHIVE"] = "0"  # the child records; it must not map an older archive
    env["PYJMS_JVM_OPTIONS"] = f"{env.get('PYJMS_JVM_OPTIONS', '')} -XX:ArchiveClassesAtExit={partial}"
    env.pop("PYJMS_URL", None)  # the warm-up runs on its own embedded broker
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", WARM_UP], env=env, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"class-data archive: not written (the warm-up exited {done.returncode}: {last})"
    os.replace(partial, archive)  # atomic: a JVM never maps a half-written archive
    size_mb = archive.stat().st_size / 1e6
    return f"class-data archive: written in {time.monotonic() - started:.1f} s ({size_mb:.0f} MB, {archive})"
