"""bench/bench_throughput.py runs at a tiny N and prints the asyncio rows beside the
synchronous ones, and the bulk-consumer recipe beside raw Java acknowledging the same way
(numbers are not checked: the machine is shared)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_the_throughput_bench_prints_the_asyncio_rows() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_throughput.py"),
            "--providers",
            "activemq",
            "--messages",
            "1000",
            "--rounds",
            "1",
            "--warmup",
            "0",
            "--cold-starts",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line[:34].strip(): line for line in done.stdout.splitlines()}
    assert "not measured" not in done.stdout, done.stdout
    for case in (
        "raw Java, sequential",
        "pyjms per message",
        "pyjms send_batch/receive_batch",
        "pyjms.aio per message",
        "pyjms.aio send_batch/receive_batch",
        "raw Java, CLIENT_ACK per 1,000",
        "pyjms batches, CLIENT_ACK each",
    ):
        assert case in rows, done.stdout
    assert "pyjms per message" in rows["pyjms.aio per message"][34:]  # compared with the sync row
    # the bulk-consumer recipe against raw Java acknowledging the same way, and that against
    # raw Java's per-message loop
    assert "raw Java, CLIENT_ACK per 1,000" in rows["pyjms batches, CLIENT_ACK each"][34:]
    assert "raw Java, sequential" in rows["raw Java, CLIENT_ACK per 1,000"][34:]
