"""How producers find out that a delay processor serves a staging queue: it answers pings on
``PYJMS.CONTROL.<staging>`` (the staging delay mechanism is chosen only if one answers)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pyjms.api.access import WriteCheck
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.factory import ConnectionFactory
from pyjms.api.requests import ServiceClient, ServiceUnavailable, serve
from pyjms.bridge.contract import CONTROL_PREFIX


def control_queue(staging_queue: str) -> Queue:
    return Queue(CONTROL_PREFIX + staging_queue)


class PingResponder:
    """The ping thread: answers each ping on the control queue (pyjms.api.requests), with the
    processor's status: ``{"active": bool, "healthy": bool, "problem": str, ...}``. Every
    processor answers, the active one and those standing by; only where the sender may write
    (``may_write``, the processor's check for replies and reports)."""

    def __init__(
        self,
        factory: ConnectionFactory,
        staging: str,
        stop: threading.Event,
        status: Callable[[], dict[str, Any]],
        may_write: WriteCheck,
    ) -> None:
        self._factory = factory
        self._queue = control_queue(staging)
        self._stop = stop
        self._status = status
        self._may_write = may_write

    def run(self) -> None:
        serve(
            self._factory,
            self._queue,
            lambda request, sender: {"ok": True, "serves": self._queue.name, **self._status()},
            self._stop,
            answer_ttl_ms=10_000,
            may_write=self._may_write,
        )


def processor_status(ctx: JMSContext, timeout_ms: int = 1000) -> dict[str, Any] | None:
    """The status one delay processor of this factory's staging queue answers a ping with
    (whichever answers first), or None when none answers."""
    with ServiceClient(
        ctx, control_queue(ctx.factory.staging_queue), timeout_ms=timeout_ms, serves="a delay processor"
    ) as processor:
        try:
            return processor.call("ping")
        except ServiceUnavailable:
            return None


def processor_answers(ctx: JMSContext, timeout_ms: int = 1000) -> bool:
    """Whether a delay processor serves this factory's staging queue (it answers a ping)."""
    with ServiceClient(
        ctx, control_queue(ctx.factory.staging_queue), timeout_ms=timeout_ms, serves="a delay processor"
    ) as processor:
        try:
            processor.call("ping")
            return True
        except ServiceUnavailable:
            return False
