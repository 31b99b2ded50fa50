"""One `python -m build` of the project at a time: the packaging tests run in different pytest
workers, and two builds of one source tree at once would write its egg-info and staged jars
together."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_LOCK = Path(tempfile.gettempdir()) / "pyjms-build.lock"


def build(dist: Path) -> subprocess.CompletedProcess[str]:
    """Builds the sdist and the wheel into ``dist``, waiting for any other build of this tree."""
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = subprocess.run(
            [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
            capture_output=True,
            text=True,
            timeout=900,
        )
    assert out.returncode == 0, f"python -m build\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out
