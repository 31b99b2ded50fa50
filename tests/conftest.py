"""Shared fixtures: a real embedded broker (vm://) and a real standalone broker process (tcp://).

Every integration test that takes ``url`` runs twice, once per transport, against a real
ActiveMQ broker; nothing is mocked.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
_names = itertools.count(1)


class BrokerProcess:
    """``python -m pyjms broker`` in its own process, as a user would run it."""

    def __init__(self, *extra: str) -> None:
        self.args = [sys.executable, "-m", "pyjms", "broker", "--port", "0", "--stomp-port", "0", *extra]
        self.proc = subprocess.Popen(
            self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
        )
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if "ready:" in line or not line:
                break
        if "ready:" not in line:
            self.proc.kill()
            raise RuntimeError(f"standalone broker did not start: {line!r} {self.proc.stderr.read()}")
        self.uris = line.split("ready:", 1)[1].split()
        self.tcp_url = next(u for u in self.uris if u.startswith("tcp://"))
        self.stomp_port = int(re.search(r":(\d+)$", next(u for u in self.uris if u.startswith("stomp://"))).group(1))

    def stop(self, sig: int | None = None) -> int:
        if self.proc.poll() is None:
            if sig is None:
                self.proc.terminate()
            else:
                self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture(scope="session")
def tcp_broker() -> Iterator[BrokerProcess]:
    broker = BrokerProcess()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def embedded_broker():
    from pyjms.broker import default_broker

    return default_broker()


@pytest.fixture(params=["vm", "tcp"])
def url(request: pytest.FixtureRequest) -> str:
    if request.param == "vm":
        return request.getfixturevalue("embedded_broker").vm_url
    return request.getfixturevalue("tcp_broker").tcp_url


@pytest.fixture
def factory(url: str):
    import pyjms

    return pyjms.ConnectionFactory(url)


@pytest.fixture
def ctx(factory):
    with factory.create_context() as c:
        yield c


@pytest.fixture
def qname(request: pytest.FixtureRequest) -> str:
    """A queue name no other test uses."""
    base = re.sub(r"[^A-Za-z0-9]+", "_", request.node.name)[:60]
    return f"T.{base}.{next(_names)}.{uuid.uuid4().hex[:6]}"


def drain(consumer, timeout_ms: int = 300) -> list:
    out = []
    while (m := consumer.receive(timeout_ms)) is not None:
        out.append(m)
    return out
