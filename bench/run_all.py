"""`make bench`: every benchmark in one run, then one summary of each figure beside its
baseline and its target.

Each bench runs as its own process, on the defaults a user gets, and prints its full table as
it goes; the summary repeats the lines that carry a ratio against a baseline, a target or a
lateness row. ``--quick`` runs each with a tiny N (what tests/bench runs), which checks that
the benches work and measures nothing.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (name, script, full-run arguments, quick-run arguments)
BENCHES = [
    (
        "throughput",
        "bench_throughput.py",
        [],
        ["--providers", "activemq", "--messages", "200", "--rounds", "1", "--warmup", "0"],
    ),
    (
        "delay",
        "bench_delay.py",
        [],
        ["--messages", "200", "--window-s", "2", "--modes", "staging", "--warmup", "0"],
    ),
    (
        "browse",
        "bench_browse.py",
        ["--providers", "activemq,artemis"],
        ["--messages", "300", "--mark-messages", "100", "--rounds", "1", "--warmup", "0"],
    ),
    (
        "dlq",
        "bench_dlq.py",
        [],
        ["--messages", "200", "--rounds", "1", "--warmup", "0", "--match-iterations", "200"],
    ),
    ("spark", "bench_spark.py", [], ["--rows", "200", "--rounds", "1", "--warmup", "0"]),
    ("takeover", "bench_takeover.py", [], ["--kills", "1", "--providers", "activemq"]),
]

#: what the summary keeps: the baselines' rows (raw Java), ratios against them, targets, lateness
#: rows (delay), section headings (which broker, which provider), CPU per message (each side's),
#: rule matching (DLQ) and the cold start
KEEP = re.compile(
    r"^raw Java|\d+\.\d\dx|target|^(native|scheduler|staging)\S*\s+\d|^== |^\s+cpu of |rule matching|cold start"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny N: checks the benches run, measures nothing")
    ap.add_argument("--only", default=None, help="comma-separated bench names (default: all)")
    args = ap.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    summary: list[tuple[str, list[str], int, float]] = []
    for name, script, full, quick in BENCHES:
        if wanted is not None and name not in wanted:
            continue
        print(f"\n######## {name}: bench/{script}", flush=True)
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, str(HERE / script), *(quick if args.quick else full)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=HERE.parent,
        )
        kept: list[str] = []
        assert proc.stdout is not None
        for line in proc.stdout:
            print(line, end="", flush=True)
            if KEEP.search(line):
                kept.append(line.rstrip())
        summary.append((name, kept, proc.wait(), time.monotonic() - started))
    print("\n######## summary: each figure, its baseline and its target (full tables above)")
    failed = 0
    for name, kept, rc, seconds in summary:
        print(f"\n[{name}] {'ok' if rc == 0 else f'FAILED (exit {rc})'} in {seconds:.0f} s")
        for line in kept:
            print("  " + line)
        failed += rc != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
