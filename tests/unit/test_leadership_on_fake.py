"""Leader election through the broker (pyjms.api.leadership) on the fake broker, whose
PYJMS.LEADER.* queues have exclusive consumers as pyjms brokers make them: one candidate of a
role leads, and when it steps down or its connection ends the next one leads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from pyjms import ConnectionFactory
from pyjms.api.leadership import Leadership, leader_queue
from tests.fakes.channel import FakeBroker
from tests.fakes.waiting import wait_for


class Candidate:
    """A Leadership and what its callbacks saw."""

    def __init__(self, factory: ConnectionFactory, role: str) -> None:
        self.events: list[str] = []
        self.working = threading.Event()
        self.leadership = Leadership(factory, role, self._elected, self._deposed)

    def _elected(self) -> None:
        self.events.append("elected")
        self.working.set()

    def _deposed(self) -> None:
        self.working.clear()
        self.events.append("deposed")


@pytest.fixture
def candidates(factory: ConnectionFactory) -> Iterator[list[Candidate]]:
    made: list[Candidate] = []
    yield made
    for candidate in made:
        candidate.leadership.stop(2)


def stand(factory: ConnectionFactory, candidates: list[Candidate], role: str = "svc") -> Candidate:
    candidate = Candidate(factory, role)
    candidates.append(candidate)
    candidate.leadership.start()
    return candidate


def test_one_candidate_leads_and_the_next_takes_over_when_it_steps_down(
    factory: ConnectionFactory, candidates: list[Candidate]
) -> None:
    first = stand(factory, candidates)
    assert first.leadership.wait_until_leading(5)
    second = stand(factory, candidates)
    time.sleep(0.3)  # a second candidate gets no token while the first leads
    assert not second.leadership.leading and second.events == []
    first.leadership.stop(5)
    assert first.events == ["elected", "deposed"] and not first.working.is_set()
    assert second.leadership.wait_until_leading(5)
    assert second.events == ["elected"] and second.leadership.terms == 1


def test_the_election_queue_holds_one_token_while_a_leader_leads(
    factory: ConnectionFactory, broker: FakeBroker, candidates: list[Candidate]
) -> None:
    leader = stand(factory, candidates, "tokens")
    assert leader.leadership.wait_until_leading(5)
    stand(factory, candidates, "tokens")
    stand(factory, candidates, "tokens")
    queue = leader_queue("tokens")
    # the leader holds its token in a transaction never committed; each later candidate's waits
    assert wait_for(lambda: len(broker.queue(queue.name)) == 2)
    assert queue.name == "PYJMS.LEADER.tokens"


def test_roles_are_elected_apart(factory: ConnectionFactory, candidates: list[Candidate]) -> None:
    a, b = stand(factory, candidates, "a"), stand(factory, candidates, "b")
    assert a.leadership.wait_until_leading(5) and b.leadership.wait_until_leading(5)
