"""A ``pyjms broker`` process that can be SIGKILLed and started again on the same port and data.

Clients with ``failover:(tcp://127.0.0.1:PORT)`` reconnect to the restarted broker, because it
listens where the killed one did, and a persistent (KahaDB) broker keeps what it had committed.
The broker's output goes to a log file (a pipe nobody reads would fill up and block it).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


class RestartableBroker:
    """``python -m pyjms broker --port PORT --data DIR`` (ActiveMQ Classic, KahaDB)."""

    def __init__(self, work_dir: Path, *, start_timeout_s: float = 180.0) -> None:
        self.data_dir = work_dir / "data"
        self.log = work_dir / "broker.log"
        self.log.touch()
        self.port = free_port()
        self.tcp_url = f"tcp://127.0.0.1:{self.port}"
        self.start_timeout_s = start_timeout_s
        self.starts = 0
        self.proc: subprocess.Popen[str] | None = None
        self.start()

    def failover_url(self, **options: int) -> str:
        """``failover:(tcp://127.0.0.1:PORT)`` with quick reconnects, and the given options."""
        settings = {"initialReconnectDelay": 100, "maxReconnectDelay": 1000, **options}
        return f"failover:({self.tcp_url})?" + "&".join(f"{k}={v}" for k, v in settings.items())

    def start(self) -> None:
        """Starts the broker on its port and data directory and waits for its ready line. The
        port may still be held for a moment after a kill, so a start that fails is tried again."""
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            offset = self.log.stat().st_size
            with open(self.log, "a") as out:
                self.proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "pyjms",
                        "broker",
                        "--port",
                        str(self.port),
                        "--data",
                        str(self.data_dir),
                        "--no-delay-processor",
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=ROOT,
                    text=True,
                )
            while time.monotonic() < deadline and self.proc.poll() is None:
                if re.search(r"ready:", self._log_since(offset)):
                    self.starts += 1
                    return
                time.sleep(0.1)
            self.kill()
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"the broker did not start on port {self.port}: {self._log_since(offset)[-3000:]}"
                )
            time.sleep(1.0)  # the port or the store's lock was still held: again

    def _log_since(self, offset: int) -> str:
        with open(self.log, errors="replace") as f:
            f.seek(offset)
            return f.read()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no checkpoint; the OS releases the port and the store's lock."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()

    def restart_after_kill(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
