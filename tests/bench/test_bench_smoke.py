"""Each benchmark script, run with a tiny N against real brokers, so none can rot. These check
that a bench runs and prints its ratios against its baseline; they time nothing (figures come
from `make bench`, never from the tests)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

RATIO = re.compile(r"\d+\.\d\dx")

SMOKE = {
    "bench_throughput.py": ["--providers", "activemq", "--messages", "200", "--rounds", "1", "--warmup", "0"],
    "bench_delay.py": ["--messages", "200", "--window-s", "2", "--modes", "staging", "--warmup", "0"],
    "bench_dlq.py": ["--messages", "200"],
    "bench_browse.py": ["--messages", "300", "--mark-messages", "100", "--rounds", "1"],
    "bench_spark.py": ["--rows", "200", "--rounds", "1"],
}


@pytest.mark.parametrize("script", list(SMOKE))
def test_bench_script_runs_and_prints_its_ratios(script: str) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / script), *SMOKE[script]], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert RATIO.search(out.stdout) or "lost 0" in out.stdout or " 0 lost" in out.stdout, out.stdout[-3000:]
