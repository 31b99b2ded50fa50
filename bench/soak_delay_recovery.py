"""Soak: the delay processor after SIGKILLs of the broker that hosts it (issue 15, finding 3).

Each run (tests/faults/delay_recovery.py): a ``pyjms broker --data DIR`` process, N persistent
messages sent through the staging queue with delays spread over a window, the broker
SIGKILLed at a random point of the window and started again on its data, then everything
waited for. Prints one row per run and the totals: sent, received, lost, duplicated, early,
stranded (left on the staging or slot queues), slot markers left, dead letters, and the time
from the restarted broker's "ready" to the first and the last delivery after it. Exits 1 if
any run lost, duplicated, stranded or delivered early.

    python bench/soak_delay_recovery.py [--runs 10] [--messages 5000] [--window-s 10] [--seed N]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.faults.delay_recovery import RunResult, run_once  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--window-s", type=float, default=10.0)
    parser.add_argument("--settle-s", type=float, default=120.0, help="how long to wait after the window")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print(
        f"soak: {args.runs} runs of {args.messages} persistent delayed messages over {args.window_s:g} s, "
        f"one broker SIGKILL each at a random point; seed {seed}",
        flush=True,
    )
    columns = ["run", *RunResult.ROW]
    print(" | ".join(columns), flush=True)
    results: list[RunResult] = []
    started = time.monotonic()
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="pyjms-soak-") as work:
            result = run_once(
                args.messages,
                args.window_s,
                rng.uniform(0.05, 0.95),
                seed=rng.randrange(1 << 30),
                settle_s=args.settle_s,
                work_dir=Path(work),
            )
        results.append(result)
        print(" | ".join([str(run), *(_shown(getattr(result, c)) for c in RunResult.ROW)]), flush=True)
    total = {c: sum(getattr(r, c) for r in results) for c in RunResult.COUNTS}
    firsts = [r.first_after_restart_s for r in results if r.first_after_restart_s is not None]
    lasts = [r.last_after_restart_s for r in results if r.last_after_restart_s is not None]
    print(
        "total: "
        + ", ".join(f"{k} {v}" for k, v in total.items())
        + f"; first delivery after restart: max {max(firsts, default=0):.2f} s; "
        f"last: max {max(lasts, default=0):.2f} s; {time.monotonic() - started:.0f} s in all",
        flush=True,
    )
    bad = total["lost"] or total["duplicated"] or total["early"] or total["stranded"]
    return 1 if bad else 0


def _shown(value: object) -> str:
    return "-" if value is None else str(value)


if __name__ == "__main__":
    sys.exit(main())
