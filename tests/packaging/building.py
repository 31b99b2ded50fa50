"""The sdist and the wheel of this checkout, built once per test run: the packaging tests read
and install the same two files. The packaging tests run in different pytest workers, so the
first to ask builds them into the run's own temporary directory (shared by its workers, new for
each run: never a build of an older checkout) and the others wait for it and take that build;
two builds of one source tree at once would write its egg-info and staged jars together."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_LOCK = Path(tempfile.gettempdir()) / "pyjms-build.lock"
#: written last into a build's directory: the build there is whole
_COMPLETE = ".complete"


def _build(dist: Path) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, f"python -m build\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def built_once(dist: Path) -> Path:
    """``dist`` holding the sdist and the wheel: built there by the first caller, taken as they
    are by the others (a build left half done is thrown away and made again)."""
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (dist / _COMPLETE).exists():
            shutil.rmtree(dist, ignore_errors=True)
            _build(dist)
            (dist / _COMPLETE).touch()
    return dist
