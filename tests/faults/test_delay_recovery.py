"""Issue 15, finding 3: the delay processor after a SIGKILL of the broker that hosts it.

A quick run of tests/faults/delay_recovery.py: 500 persistent delayed messages, one SIGKILL
in their window, the broker started again on its data. Nothing is lost, duplicated, delivered
early or left on the staging and slot queues. ``make soak`` runs the long version
(bench/soak_delay_recovery.py: 10 runs of 5,000, random kill points).
"""

from __future__ import annotations

import random

import pytest

from tests.faults.delay_recovery import run_once

pytestmark = pytest.mark.slow


def test_broker_sigkill_loses_duplicates_and_strands_nothing(tmp_path):
    kill_at = random.uniform(0.2, 0.8)
    result = run_once(500, window_s=4.0, kill_at=kill_at, seed=random.randrange(1 << 30), work_dir=tmp_path)
    assert (result.lost, result.duplicated, result.early, result.stranded) == (0, 0, 0, 0), result
    assert result.received == 500, result


@pytest.mark.soak
def test_soak_ten_broker_sigkills_under_5000_delayed_messages(tmp_path):
    """The long version (``make soak`` or ``-m soak``): 10 runs of 5,000, random kill points."""
    rng = random.Random()
    for run in range(10):
        work = tmp_path / f"run{run}"
        work.mkdir()
        result = run_once(5000, window_s=10.0, kill_at=rng.uniform(0.05, 0.95), seed=rng.randrange(1 << 30),
                          settle_s=120.0, work_dir=work)
        print(result)
        assert (result.lost, result.duplicated, result.early, result.stranded) == (0, 0, 0, 0), result
