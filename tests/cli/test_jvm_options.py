"""The JVM options each kind of command starts with (docs/classpath.md, "The JVM"): a command
that lives seconds compiles with C1 only; a service keeps the JVM's full JIT; PYJMS_JVM_OPTIONS
comes last and overrides either. Read from the JVM itself (-XX:+PrintFlagsFinal)."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.cli.conftest import cli_env
from tests.conftest import ROOT


def tiered_stop_at_level(url: str, *args: str, options: str = "") -> int:
    """TieredStopAtLevel as the JVM of ``pyjms *args`` had it."""
    env = {**cli_env(url), "PYJMS_JVM_OPTIONS": f"-XX:+PrintFlagsFinal {options}".strip()}
    done = subprocess.run(
        [sys.executable, "-m", "pyjms", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r"\bTieredStopAtLevel\s+=\s+(\d)", done.stdout)
    assert found, done.stdout[-2000:]
    return int(found.group(1))


def test_a_short_command_compiles_with_c1_only_a_service_keeps_c2_and_pyjms_jvm_options_wins(
    tcp_broker,
) -> None:
    url = tcp_broker.tcp_url
    assert tiered_stop_at_level(url, "queues") == 1
    assert tiered_stop_at_level(url, "queues", options="-XX:TieredStopAtLevel=4") == 4
    # a service (its status question starts the JVM as the service does)
    assert tiered_stop_at_level(url, "delay-processor", "--status") == 4
