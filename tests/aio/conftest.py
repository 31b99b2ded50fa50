"""Helpers for the asyncio API's tests: plain pytest tests that run a coroutine with
asyncio.run (pytest-asyncio is not a dependency), against the real brokers of tests/conftest.py."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Awaitable, Callable, TypeVar

import pytest

import pyjms.aio as aio

T = TypeVar("T")

#: the longest a callback of the event loop may run: pyjms.aio must never block the loop longer
SLOW_CALLBACK_S = 0.010


def run(main: Callable[[], Awaitable[T]]) -> T:
    """Runs ``main()`` on a new event loop."""
    return asyncio.run(main())  # type: ignore[arg-type]


class SlowCallbacks(logging.Handler):
    """Collects asyncio's debug-mode reports of callbacks that held the loop too long
    ("Executing <Handle ...> took 0.012 seconds")."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.reports: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Executing "):
            self.reports.append(message)


def run_watched(main: Callable[[], Awaitable[T]]) -> tuple[T, list[str]]:
    """Runs ``main()`` in asyncio debug mode with a 10 ms slow-callback threshold; returns its
    result and every report of a callback that blocked the loop longer.

    The GIL's switch interval is lowered meanwhile: a callback's time includes waiting for the
    GIL, which the worker threads hold while they run Python between Java calls; at the default
    5 ms two such waits would count against the loop what the loop never did."""
    slow = SlowCallbacks()
    log = logging.getLogger("asyncio")
    log.addHandler(slow)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)

    async def watched() -> T:
        loop = asyncio.get_running_loop()
        loop.slow_callback_duration = SLOW_CALLBACK_S
        return await main()

    try:
        result = asyncio.run(watched(), debug=True)
    finally:
        sys.setswitchinterval(interval)
        log.removeHandler(slow)
    return result, slow.reports


@pytest.fixture
def afactory(url: str) -> aio.ConnectionFactory:
    return aio.ConnectionFactory(url)
