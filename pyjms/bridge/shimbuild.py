"""Builds the Java shim jar with the JDK's javac and jar: no Gradle needed.

Used by setup.py at ``pip install`` time (the jar lands in pyjms/_shim/) and at run time
from a source checkout, where the jar is built into a cache keyed by the sources' hash, so
an edited shim is rebuilt on the next start. This module imports nothing from pyjms, so
setup.py can load it by path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

JAR_NAME = "pyjms-shim.jar"


class ShimBuildError(RuntimeError):
    pass


def jdk_tool(name: str) -> str:
    """javac or jar from PYJMS_JAVA_HOME or JAVA_HOME (as the JVM's choice, bridge.javahome),
    else from PATH. The pyjms-jakarta[jre] runtime has neither: it runs a built shim only."""
    for variable in ("PYJMS_JAVA_HOME", "JAVA_HOME"):
        home = os.environ.get(variable)
        candidate = Path(home) / "bin" / name if home else None
        if candidate is not None and candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if not found:
        raise ShimBuildError(
            f"'{name}' was not found: pyjms needs a JDK 17 or newer (not only a JRE) to build its shim; "
            "install one (Debian: apt-get install openjdk-17-jdk-headless) or set PYJMS_JAVA_HOME or JAVA_HOME"
        )
    return found


def sources(java_dir: Path) -> list[Path]:
    return sorted(java_dir.rglob("*.java"))


def source_hash(java_dir: Path, classpath: Sequence[str]) -> str:
    h = hashlib.sha256()
    for src in sources(java_dir):
        h.update(str(src.relative_to(java_dir)).encode())
        h.update(src.read_bytes())
    for jar in classpath:
        h.update(Path(jar).name.encode())
    return h.hexdigest()[:16]


def build(java_dir: Path, classpath: Sequence[str], out_jar: Path) -> Path:
    """Compiles every .java under java_dir against classpath into out_jar (atomically)."""
    srcs = sources(java_dir)
    if not srcs:
        raise ShimBuildError(f"no Java sources under {java_dir}")
    out_jar.parent.mkdir(parents=True, exist_ok=True)
    # a first run waits for javac for a while: say so, on stderr (stdout may be a program's data)
    print(f"compiling pyjms's Java shim (first run, {len(srcs)} sources)…", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="pyjms-shim-") as tmp:
        classes = Path(tmp) / "classes"
        classes.mkdir()
        cmd = [
            jdk_tool("javac"),
            "--release",
            "17",
            "-nowarn",
            "-encoding",
            "UTF-8",
            "-d",
            str(classes),
            "-cp",
            os.pathsep.join(classpath),
            *map(str, srcs),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise ShimBuildError(f"javac failed building the pyjms shim:\n{done.stderr}")
        staged = Path(tmp) / JAR_NAME
        done = subprocess.run(
            [jdk_tool("jar"), "cf", str(staged), "-C", str(classes), "."], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise ShimBuildError(f"jar failed packaging the pyjms shim:\n{done.stderr}")
        tmp_target = out_jar.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(staged, tmp_target)
        os.replace(tmp_target, out_jar)  # concurrent builders each land a whole jar
    return out_jar
