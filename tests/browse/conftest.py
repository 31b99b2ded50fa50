"""Fixtures for browse with mark: the brokers' mark services, and their interval set per test."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

import pyjms
from pyjms.browse import set_mark_browse_interval
from tests.conftest import BrokerProcess

#: a short lease, so that a killed dispatcher's marks go within seconds
LEASE_MS = 1500


@pytest.fixture
def interval(url: str) -> Iterator[Callable[[int], None]]:
    """Sets the broker's MsgMarkBrowseInterval for one test, and puts the default back."""
    factory = pyjms.ConnectionFactory(url)

    def set_to(ms: int) -> None:
        assert set_mark_browse_interval(factory, ms) == ms

    yield set_to
    set_mark_browse_interval(factory, 5000)


@pytest.fixture(scope="session")
def lease_brokers() -> Iterator[dict[str, str]]:
    """An embedded broker in this process and a standalone one, both with marks that never
    lapse and a 1.5 s handle lease: only a handle's end can release its marks."""
    from pyjms.broker import EmbeddedBroker

    embedded = EmbeddedBroker(port=0, mark_browse_interval=-1, mark_lease_ms=LEASE_MS)
    standalone = BrokerProcess("--mark-browse-interval", "-1", "--mark-lease", str(LEASE_MS))
    yield {"embedded": embedded.tcp_url, "standalone": standalone.tcp_url}
    with contextlib.suppress(Exception):
        standalone.stop(wait=False)  # the session waits for it (tests/conftest.py)
    embedded.stop()


@pytest.fixture(params=["embedded", "standalone"])
def lease_url(request: pytest.FixtureRequest, lease_brokers: dict[str, str]) -> str:
    return lease_brokers[request.param]
