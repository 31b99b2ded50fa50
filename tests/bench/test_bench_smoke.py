"""Each benchmark script, run with a tiny N against real brokers, so none can rot. These check
that a bench runs and prints its ratios against its baseline; they time nothing (figures come
from `make bench`, never from the tests)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.run_all import BENCHES, KEEP
from tests.conftest import ROOT

#: each bench script with the tiny N of `make bench`'s --quick (bench_throughput.py's smoke run
#: is tests/aio/test_bench.py, which also checks its asyncio rows)
SMOKE = {script: quick for _, script, _, quick in BENCHES if script != "bench_throughput.py"}
# fewer parts than --quick where each part is a broker or processes to start (CI's time): one
# broker kind and 1-2 handlers for the DLQ bench, 1-2 dispatchers for cooperative dispatch
SMOKE["bench_dlq.py"] = [*SMOKE["bench_dlq.py"], "--brokers", "in-memory", "--handlers", "1,2"]
SMOKE["bench_browse.py"] = [*SMOKE["bench_browse.py"], "--dispatchers", "1,2"]
#: what a bench must print at any N: its warm raw Java baselines' rows and its targets
PRINTS = {
    "bench_takeover.py": (
        "elected (standby says active)",
        "target <= 5 s",
        "lost 0 duplicated 0 early 0",
    ),
    "bench_browse.py": (
        "raw Java drain, 1 consumer",
        "raw Java drain, 2 consumers",
        "target >= 0.5x",
        "raw Java, browse + a get-by-id consumer per tx",
    ),
    "bench_dlq.py": (
        "in-memory broker: `pyjms broker`",
        "raw Java transacted move, 1 consumer",
        "raw Java transacted move, 2 consumers",
        "target >= 0.7x",
        "rule matching",
    ),
    "bench_spark.py": (
        "raw Java send",
        "raw Java receive",
        "target >= 0.8x",
        "target >= 0.7x",
        "no broker (Spark's own)",
        "removing at their end (raw Java doing what the read does)",
        "(Spark's own cost of a read that size)",
    ),
}


@pytest.mark.parametrize("script", list(SMOKE))
def test_bench_script_runs_and_prints_its_ratios(script: str) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *SMOKE[script]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    # the figures `make bench` summarizes: ratios against a baseline, targets, lateness rows
    assert any(KEEP.search(line) for line in out.stdout.splitlines()), out.stdout[-3000:]
    for wanted in PRINTS.get(script, ()):
        assert wanted in out.stdout, (wanted, out.stdout[-3000:])
