"""The pyjms command as a user runs it: ``python -m pyjms ...`` in its own process, against a
``pyjms broker`` process (tests/conftest.py's tcp_broker)."""

from __future__ import annotations

import os
import subprocess
import sys

import pyjms
from tests.conftest import ROOT


def cli_env(url: str | None = None) -> dict[str, str]:
    """The environment without PYJMS_URL, or with it set to url."""
    env = {k: v for k, v in os.environ.items() if k != "PYJMS_URL"}
    if url is not None:
        env["PYJMS_URL"] = url
    return env


def run_cli(
    *args: str, stdin: str | bytes | None = None, url: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Runs the command to its end; stdout and stderr as text."""
    done = subprocess.run(
        [sys.executable, "-m", "pyjms", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=timeout,
        env=cli_env(url),
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def start_cli(*args: str, url: str | None = None, stdin: int | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "pyjms", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=cli_env(url),
    )


def drain_texts(url: str, queue: str, wait_ms: int = 1000) -> list[str]:
    """The bodies left on a queue, taken."""
    out = []
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(queue))
        while (m := consumer.receive(wait_ms)) is not None:
            out.append(m.get_body())
    return out
