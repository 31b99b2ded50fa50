"""``pyjms conformance`` over AMQP 1.0: every rule of IBM MQ's restrictions list passes, with the
mechanism ``auto`` chooses (AmqpPeer.auto_delay: native where the peer offers DELAYED_DELIVERY,
but staging on ActiveMQ Classic, whose DELAYED_DELIVERY is its scheduler) and with staging."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.amqp.conftest import AmqpPeer
from tests.conftest import ROOT


def _conformance(url: str, *modes: str) -> subprocess.CompletedProcess[str]:
    args = [a for mode in modes for a in ("--mode", mode)]
    return subprocess.run(
        [sys.executable, "-m", "pyjms", "conformance", "--url", url, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def _tables(stdout: str) -> dict[str, str]:
    """The printed tables by mode."""
    parts = re.split(r"(?m)^pyjms conformance: delay mode ", stdout)
    return {p.split()[0]: p for p in parts if p.strip()}


def test_conformance_over_amqp_passes_every_row_with_auto_and_staging(amqp_peer: AmqpPeer) -> None:
    modes = ["auto", "staging"] if amqp_peer.staging else ["auto"]
    out = _conformance(amqp_peer.url, *modes)
    assert out.returncode == 0, out.stdout + out.stderr
    tables = _tables(out.stdout)
    assert set(tables) == set(modes)
    expected = amqp_peer.auto_delay if amqp_peer.delayed_delivery else "staging"
    assert f"(mechanism {expected})" in tables["auto"]
    for table in tables.values():
        rows = [line for line in table.splitlines()[2:] if re.match(r"^[EDBQ]\d\d ", line)]
        assert rows and all(line.endswith(" pass") for line in rows), table
        # a delay really happened under this mechanism: D01, D10 and D17 were tried, not skipped
        assert {line.split()[0] for line in rows} >= {"D01", "D04", "D06", "D10", "D17", "D22", "D23"}, table
        assert re.search(r"\d+ passed, 0 failed, 0 skipped", table), table
