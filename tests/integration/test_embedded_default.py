"""The embedded default says what it is (issue 35): a factory with no URL and no PYJMS_URL
logs one warning (logger "pyjms") that it started an in-process, non-persistent broker;
choosing that broker on purpose (PYJMS_URL=embedded, ConnectionFactory.embedded()) is silent.
Each case runs in a new process, as an application would (the warning is once per process)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.conftest import ROOT

PROGRAM = textwrap.dedent("""
    import logging, sys
    logging.basicConfig(stream=sys.stderr, format="LOG %(levelname)s %(name)s: %(message)s")
    import pyjms

    def round_trip(factory, text):
        with factory.create_context() as ctx:
            q = ctx.create_queue("EMBEDDED.DEFAULT")
            ctx.create_producer().send(q, text)
            with ctx.create_consumer(q) as consumer:
                print(consumer.receive(10_000).get_text(), flush=True)
        print("MARK", flush=True, file=sys.stderr)

    round_trip(pyjms.ConnectionFactory.embedded(), "chosen")
    round_trip(pyjms.ConnectionFactory(), "default")
    round_trip(pyjms.ConnectionFactory(), "default again")
""")


def _run(env_url: str | None) -> tuple[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "PYJMS_URL"}
    if env_url is not None:
        env["PYJMS_URL"] = env_url
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    # the log lines between the marks: after each round trip
    parts = out.stderr.split("MARK\n")
    return out.stdout, [p for p in parts[:3]]


def test_no_url_warns_once_and_an_explicit_choice_is_silent() -> None:
    stdout, logs = _run(None)
    assert stdout.split("\n")[:3] == ["chosen", "default", "default again"]
    assert "LOG WARNING" not in logs[0], logs[0]  # ConnectionFactory.embedded(): chosen on purpose
    warnings = [line for line in logs[1].splitlines() if line.startswith("LOG WARNING pyjms:")]
    assert len(warnings) == 1, logs[1]
    assert "in-process, non-persistent" in warnings[0] and "PYJMS_URL=embedded" in warnings[0]
    assert "LOG WARNING" not in logs[2], logs[2]  # once per process


def test_pyjms_url_embedded_is_silent() -> None:
    stdout, logs = _run("embedded")
    assert stdout.split("\n")[:3] == ["chosen", "default", "default again"]
    assert not any("LOG WARNING" in log for log in logs), logs
