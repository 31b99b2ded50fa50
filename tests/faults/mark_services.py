"""``pyjms mark-service`` processes for the takeover test and bench: started, their stdout lines
timed as they come, SIGKILLed."""

from __future__ import annotations

import queue as queues
import subprocess
import sys
import tempfile
import threading
import time

from tests.conftest import ROOT

#: a short lease: a new active service restores marks for one lease before it grants claims
MARK_LEASE_MS = 1500


class MarkServiceProcess:
    """``pyjms mark-service`` in its own process; its stdout lines, timed as they come."""

    def __init__(self, url: str) -> None:
        self.log = tempfile.NamedTemporaryFile("w+", prefix="pyjms-marks-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pyjms", "mark-service", "--url", url, "--mark-lease", str(MARK_LEASE_MS)],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            cwd=ROOT,
        )
        self.lines: queues.Queue[tuple[float, str]] = queues.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.first = self.next_line(60)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line.strip()))

    def next_line(self, timeout: float) -> str:
        try:
            return self.lines.get(timeout=timeout)[1]
        except queues.Empty:
            raise AssertionError(
                f"no line from the mark service: {open(self.log.name).read()[-3000:]}"
            ) from None

    def active_at(self, timeout: float) -> float | None:
        """When this process said it became active (monotonic), or None within timeout."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                at, line = self.lines.get(timeout=left)
            except queues.Empty:
                return None
            if "active (epoch" in line:
                return at
        return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
