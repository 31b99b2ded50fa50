"""Waiting in tests for what the threads pyjms runs (listener dispatch, elections, services) do."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    """Whether ``condition()`` came true within ``seconds`` (polled every 5 ms)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
