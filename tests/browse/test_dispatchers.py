"""Cooperative dispatcher processes (examples/cooperative_dispatch.py in --dispatcher mode) on
one queue, against an embedded broker in this process and standalone broker processes (ActiveMQ
and Artemis), all over tcp://127.0.0.1: exactly-once dispatch, backouts, and a dispatcher
killed with SIGKILL."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pyjms
from pyjms.browse import BROWSE_CO_OP
from tests.browse.conftest import LEASE_MS
from tests.conftest import ROOT

EXAMPLE = str(ROOT / "examples" / "cooperative_dispatch.py")
#: a script's own directory comes first on its sys.path, so the pyjms it imports is this
#: checkout's only if PYTHONPATH says so (else the one installed in the environment)
THIS_CHECKOUT = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
}


@pytest.fixture(scope="module")
def two_brokers(tcp_broker):
    """The standalone broker process, and an embedded broker in this process with a tcp port."""
    from pyjms.broker import EmbeddedBroker

    embedded = EmbeddedBroker(port=0)
    yield {"embedded": embedded.tcp_url, "standalone": tcp_broker.tcp_url}
    embedded.stop()


@pytest.fixture(params=["embedded", "standalone", "artemis"])
def broker_url(request: pytest.FixtureRequest, two_brokers: dict[str, str]) -> str:
    """ActiveMQ brokers (embedded with a TCP port, and standalone), and the standalone Artemis
    broker (pyjms broker --provider artemis): cooperative dispatch is the same on each."""
    if request.param == "artemis":
        return request.getfixturevalue("artemis_tcp_broker").tcp_url
    return two_brokers[request.param]


def fill(url: str, queue: str, n: int) -> None:
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        q = ctx.create_queue(queue)
        p = ctx.create_producer()
        batch = [f"order {i}" for i in range(n)]
        for start in range(0, n, 1000):
            p.send_batch(q, batch[start : start + 1000])


def run_dispatchers(tmp: Path, url: str, queue: str, n: int, *extra: str) -> dict[str, list[tuple[str, str]]]:
    """Runs n dispatcher processes until each has been idle 3 s; their event lines by kind."""
    outs = [tmp / f"{queue}.d{i}.out" for i in range(n)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                EXAMPLE,
                "--url",
                url,
                "--queue",
                queue,
                "--dispatcher",
                f"d{i}",
                "--idle",
                "3",
                *extra,
            ],
            stdout=out.open("w"),
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=THIS_CHECKOUT,
        )
        for i, out in enumerate(outs)  # files, not pipes: a pipe read later would fill and stop its writer
    ]
    events: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for p, out in zip(procs, outs, strict=True):
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-3000:]
        for line in out.read_text().splitlines():
            kind, name, *rest = line.split(" ", 3)
            if kind in ("dispatched", "handled", "gone", "backout"):
                events[kind].append((name, rest[0]))
    return events


#: enough that the three dispatchers claim from the set concurrently for seconds on any broker
B10_MESSAGES = 1_000


def test_B10_three_dispatcher_processes_dispatch_1000_messages_exactly_once(
    broker_url: str, qname: str, tmp_path: Path
) -> None:
    fill(broker_url, qname, B10_MESSAGES)
    events = run_dispatchers(tmp_path, broker_url, qname, 3)
    dispatched = collections.Counter(token for _, token in events["dispatched"])
    handled = collections.Counter(token for _, token in events["handled"])
    assert len(handled) == B10_MESSAGES, "none missed"
    assert max(handled.values()) == 1 and max(dispatched.values()) == 1, "none dispatched twice"
    assert not events["gone"]
    assert len({name for name, _ in events["handled"]}) == 3, "every dispatcher took part"


def test_B08_consumers_that_back_out_get_their_messages_dispatched_again(
    broker_url: str, qname: str, tmp_path: Path
) -> None:
    fill(broker_url, qname, 600)
    events = run_dispatchers(tmp_path, broker_url, qname, 3, "--fail-every", "4")
    handled = collections.Counter(token for _, token in events["handled"])
    backed_out = {token for _, token in events["backout"]}
    dispatched = collections.Counter(token for _, token in events["dispatched"])
    missing = {
        t: (dispatched[t], sum(1 for _, b in events["backout"] if b == t))
        for t in dispatched
        if t not in handled
    }
    assert len(handled) == 600 and max(handled.values()) == 1, (
        f"each message handled once in the end; missing {missing}"
    )
    assert len(backed_out) >= 100
    assert all(dispatched[t] >= 2 for t in backed_out), "a backed-out message was dispatched again"


HOLDER = """
import sys, time, pyjms
from pyjms.browse import BROWSE_CO_OP
url, queue, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctx = pyjms.ConnectionFactory(url).create_context()
h = ctx.create_marking_browser(ctx.create_queue(queue), cooperative=True, claim_batch=1)
for _ in range(n):
    h.get(BROWSE_CO_OP)
print("marked", flush=True)
time.sleep(600)
"""


def test_B06_a_dispatcher_killed_with_SIGKILL_has_its_marks_released(lease_url: str, qname: str) -> None:
    fill(lease_url, qname, 20)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, lease_url, qname, "15"], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert holder.stdout.readline().strip() == "marked"
        with pyjms.ConnectionFactory(lease_url).create_context() as ctx:
            other = ctx.create_marking_browser(ctx.create_queue(qname), cooperative=True)
            first = []
            while (m := other.get_or_none(BROWSE_CO_OP)) is not None:
                first.append(m)
            assert len(first) == 5, "the holder's 15 marks never lapse on this broker (interval -1)"
            holder.send_signal(signal.SIGKILL)
            holder.wait(30)
            killed_at = time.monotonic()
            rest = []
            while len(rest) < 15 and time.monotonic() - killed_at < 10:
                m = other.get_or_none(BROWSE_CO_OP, wait_ms=500)
                if m is not None:
                    rest.append(m)
            released_after = time.monotonic() - killed_at
            assert len(rest) == 15, "the dead dispatcher's marks were released"
            assert released_after < LEASE_MS / 1000 + 3
            other.close()
    finally:
        holder.kill()
