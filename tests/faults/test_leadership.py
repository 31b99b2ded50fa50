"""Leader election through the broker (pyjms.api.leadership; issue 32 item 5): any number of
candidates, one leader at a time, picked by the broker's exclusive consumer; when the leader
stops or its process is SIGKILLed, a standby leads within 5 s."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from pyjms.api.leadership import Leadership
from tests.faults.processes import PyjmsProcess

pytestmark = pytest.mark.providers("activemq", "artemis")

TAKEOVER_S = 5.0


class Candidates:
    """In-process candidates that record who leads, checking that never two lead at once."""

    def __init__(self, factory, role: str, n: int) -> None:
        self.lock = threading.Lock()
        self.leading: set[int] = set()
        self.overlaps = 0
        self.elections: list[int] = []
        self.all = [self._candidate(factory, role, i) for i in range(n)]

    def _candidate(self, factory, role, i):
        def elected():
            with self.lock:
                self.overlaps += bool(self.leading)
                self.leading.add(i)
                self.elections.append(i)

        def deposed():
            with self.lock:
                self.leading.discard(i)

        return Leadership(factory, role, elected, deposed).start()

    def leader(self, within_s: float = 10) -> int:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.leading) == 1:
                    return next(iter(self.leading))
            time.sleep(0.01)
        raise AssertionError(f"no single leader within {within_s} s: {self.leading}")

    def stop(self):
        for c in self.all:
            c.stop()


def test_one_candidate_leads_and_a_standby_takes_over_when_it_steps_down(factory):
    candidates = Candidates(factory, f"test-{uuid.uuid4().hex[:8]}", 3)
    try:
        first = candidates.leader()
        time.sleep(1.0)  # the others stand by: still one leader
        assert candidates.leading == {first}
        stopped = time.monotonic()
        candidates.all[first].stop()
        second = candidates.leader()
        assert second != first and time.monotonic() - stopped < TAKEOVER_S
        candidates.all[second].stop()
        third = candidates.leader()
        assert third not in (first, second)
        assert candidates.overlaps == 0 and candidates.elections == [first, second, third]
    finally:
        candidates.stop()


def test_the_lock_queue_holds_one_token_however_often_candidates_start(factory):
    role = f"test-{uuid.uuid4().hex[:8]}"
    candidates = Candidates(factory, role, 1)
    try:
        candidates.leader()
        for _ in range(5):  # candidates come and go while one leads
            extra = Leadership(factory, role, lambda: None, lambda: None).start()
            time.sleep(0.2)
            extra.stop()
        candidates.all[0].stop()
        # the leader's tokens are back on the queue: one, plus one per candidate that stood since
        with factory.create_context() as ctx:
            browsed = list(ctx.create_browser(ctx.create_queue(f"PYJMS.LEADER.{role}")))
        assert 1 <= len(browsed) <= 6
    finally:
        candidates.stop()


def _candidate_process(url: str, role: str, provider: str | None) -> PyjmsProcess:
    """tests.faults.leader_candidate: prints "elected" when the broker makes it the leader."""
    return PyjmsProcess(url, role, *([provider] if provider else []), module="tests.faults.leader_candidate")


def _elected(p: PyjmsProcess) -> bool:
    return p.said("elected")


@pytest.mark.parametrize("broker", ["tcp_broker", "artemis_tcp_broker"])
def test_a_standby_process_leads_within_5_s_of_the_leader_being_killed(request, broker):
    b = request.getfixturevalue(broker)
    provider = "artemis" if broker.startswith("artemis") else None
    role = f"test-{uuid.uuid4().hex[:8]}"
    procs = [_candidate_process(b.tcp_url, role, provider) for _ in range(2)]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(_elected(p) for p in procs):
            time.sleep(0.05)
        leaders = [p for p in procs if _elected(p)]
        assert len(leaders) == 1, [p.lines for p in procs]
        time.sleep(1.0)
        assert [p for p in procs if _elected(p)] == leaders
        killed = time.monotonic()
        leaders[0].kill()
        standby = next(p for p in procs if p is not leaders[0])
        elected_at = standby.wait_line(lambda line: line == "elected", 30)
        assert elected_at is not None, standby.lines
        assert elected_at - killed < TAKEOVER_S
    finally:
        for p in procs:
            p.kill()


class _FailsOnce:
    """A connection factory whose first context fails with an error that is not a JMS one (as
    a bug, or a broker library's own exception, would), then is the factory it wraps."""

    def __init__(self, factory) -> None:
        self._factory = factory
        self.failed = False

    def __getattr__(self, name):
        return getattr(self._factory, name)

    def create_context(self, *args, **kwargs):
        if not self.failed:
            self.failed = True
            raise RuntimeError("not a JMS error")
        return self._factory.create_context(*args, **kwargs)


def test_an_election_that_fails_with_any_error_stands_again_and_leads(factory, caplog):
    elected = threading.Event()
    leadership = Leadership(factory, f"test-{uuid.uuid4().hex[:8]}", elected.set, lambda: None)
    # the factory it elects through (a provider's service factory, made from the one given)
    leadership.factory = failing = _FailsOnce(leadership.factory)
    leadership.start()
    try:
        assert elected.wait(15), "the election thread died on a non-JMS error"
        assert failing.failed
        assert any("not a JMS error" in r.getMessage() for r in caplog.records)
    finally:
        leadership.stop()
