"""examples/asyncio_orders.py runs: a concurrent order pipeline with delivery delays, each order
confirmed exactly once and none delivered early; in-process on each broker, and as a program."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest

from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "asyncio_orders.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("asyncio_orders", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.providers("activemq", "artemis")
def test_the_order_pipeline(url: str) -> None:
    outcome = asyncio.run(_example().run(url, orders=40, producers=3, workers=2, max_delay_ms=600))
    assert len(outcome.sent) == 40
    assert outcome.ok, (
        sorted(outcome.sent - set(outcome.confirmed)),
        outcome.early,
        {k: n for k, n in outcome.confirmed.items() if n > 1},
    )
    assert sum(outcome.by_worker.values()) == 40


def test_the_example_as_a_program(tcp_broker) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--url",
            tcp_broker.tcp_url,
            "--orders",
            "20",
            "--max-delay-ms",
            "300",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every order confirmed exactly once" in done.stdout
