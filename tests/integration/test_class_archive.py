"""The class-data archive `pyjms providers fetch` writes (pyjms.bridge.class_archive): a new
process's JVM maps the broker's and client's classes from it by default, and with
PYJMS_CLASS_ARCHIVE=0 it does not. What it saves is measured by
bench/bench_throughput.py's cold start, never here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

ROUND_TRIP = """
import pyjms
with pyjms.ConnectionFactory().create_context() as ctx:
    q = ctx.create_queue("ARCHIVED")
    ctx.create_producer().send(q, "x")
    assert ctx.create_consumer(q).receive(30000).get_text() == "x"
"""


def loaded_classes(tmp_path: Path, **env: str) -> dict[str, str]:
    """Each class a new pyjms process loaded for a round trip, and where it came from."""
    log = tmp_path / "class-load.txt"
    child_env = {k: v for k, v in os.environ.items() if k not in ("PYJMS_URL", "PYJMS_CLASS_ARCHIVE")}
    child_env["PYJMS_JVM_OPTIONS"] = f"-Xlog:class+load=info:file={log}"
    child_env.update(env)
    subprocess.run([sys.executable, "-c", ROUND_TRIP], cwd=ROOT, env=child_env, check=True, timeout=120)
    found = {}
    for line in log.read_text().splitlines():
        # [0.304s][info][class,load] org.apache.activemq.broker.BrokerService source: shared objects file (top)
        name, _, source = line.split("] ", 1)[-1].partition(" source: ")
        found[name] = source
    return found


def test_providers_fetch_writes_an_archive_that_new_processes_map(tmp_path):
    fetched = subprocess.run(
        [sys.executable, "-m", "pyjms", "providers", "fetch", "activemq"],
        env={k: v for k, v in os.environ.items() if k != "PYJMS_CLASS_ARCHIVE"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    assert "class-data archive: ready" in fetched or "class-data archive: written" in fetched, fetched
    classes = loaded_classes(tmp_path)
    for name in ("org.apache.activemq.broker.BrokerService", "org.apache.activemq.ActiveMQConnection"):
        assert classes[name].startswith("shared objects file"), (name, classes[name])


def test_with_the_archive_turned_off_a_process_starts_without_it(tmp_path):
    classes = loaded_classes(tmp_path, PYJMS_CLASS_ARCHIVE="0")
    assert not classes["org.apache.activemq.broker.BrokerService"].startswith("shared objects file")
