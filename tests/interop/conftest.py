"""Interop fixtures: pyjms and foreign clients meet on the standalone broker over TCP.

Every test here talks to the ``python -m pyjms broker`` process (``tcp_broker``), never to an
in-process broker, so what crosses is exactly what goes over the wire.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.conftest import BrokerProcess


def loopback_url(broker: BrokerProcess) -> str:
    """The broker's OpenWire URL pinned to 127.0.0.1, the address it binds, whatever host name
    it advertises (``localhost`` may resolve to ::1 first)."""
    return f"tcp://127.0.0.1:{urlsplit(broker.tcp_url).port}"


@pytest.fixture
def url(tcp_broker: BrokerProcess) -> str:
    """Overrides the vm/tcp pair of tests/conftest.py: interop is TCP only."""
    return loopback_url(tcp_broker)
