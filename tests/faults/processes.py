"""A ``python -m pyjms ...`` command (or another module) in its own process, its stdout lines kept with when they
came (monotonic), for the takeover tests and bench: leaders and standbys say "active" and
"standing by" on a line of their own, and a test times the takeover by those lines."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: the line a service prints when the broker elects it ("active", "... : active (epoch ...)")
ACTIVE = re.compile(r"^active\b|: active\b|\bactive \(epoch")


class PyjmsProcess:
    """``python -m pyjms *args`` (``module``: another module): stdout lines read as they come,
    stderr kept in a file."""

    def __init__(self, *args: str, module: str = "pyjms", env: dict[str, str] | None = None) -> None:
        self.args = args
        self.log = tempfile.NamedTemporaryFile("w+", prefix="pyjms-process-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            cwd=ROOT,
            env=env,
        )
        self.lines: list[tuple[float, str]] = []
        self._came = threading.Condition()
        self._ended = False  # its stdout is read to the end
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._came:
                self.lines.append((time.monotonic(), line.strip()))
                self._came.notify_all()
        with self._came:
            self._ended = True
            self._came.notify_all()

    def line_at(self, matches: Callable[[str], bool], after: float = 0.0) -> float | None:
        """When the first line since ``after`` (monotonic) that ``matches`` came, or None."""
        with self._came:
            return next((t for t, line in self.lines if t >= after and matches(line)), None)

    def wait_line(self, matches: Callable[[str], bool], timeout: float, after: float = 0.0) -> float | None:
        """As line_at, waiting up to ``timeout`` seconds for it."""
        deadline = time.monotonic() + timeout
        with self._came:
            while (at := self.line_at(matches, after)) is None:
                left = deadline - time.monotonic()
                if left <= 0 or self._ended:
                    return None
                self._came.wait(min(left, 0.5))
            return at

    def first_line(self, timeout: float) -> str:
        """The first line it printed, waiting up to ``timeout``; fails with its stderr if none."""
        if self.wait_line(lambda _: True, timeout) is None:
            raise AssertionError(f"no line from pyjms {' '.join(self.args[:1])}: {self.stderr()[-3000:]}")
        return self.lines[0][1]

    def active_at(self, timeout: float, after: float = 0.0) -> float | None:
        """When it said it became active since ``after``, waiting up to ``timeout``."""
        return self.wait_line(lambda line: bool(ACTIVE.search(line)), timeout, after)

    def said(self, text: str) -> bool:
        return self.line_at(lambda line: text in line) is not None

    def stderr(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: the process ends with no chance to say goodbye."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        """SIGINT, as Ctrl-C: the process ends cleanly (killed after 30 s)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


class ProcessorProcess(PyjmsProcess):
    """``pyjms delay-processor`` in its own process: it prints its state on a line of its own."""

    def __init__(self, url: str) -> None:
        super().__init__("delay-processor", "--url", url, "--report-every", "60")

    def wait_for(self, state: str, timeout: float) -> float | None:
        """When this process printed ``state`` (as its whole line), or None after timeout."""
        return self.wait_line(lambda line: line == state, timeout)

    @property
    def states(self) -> list[str]:
        return [line for _, line in self.lines]
