"""How producers find out that a delay processor serves a staging queue: it answers pings on
``PYJMS.CONTROL.<staging>`` (the staging delay mechanism is chosen only if one answers)."""

from __future__ import annotations

import threading

from pyjms.api.context import ConnectionFactory, JMSContext
from pyjms.api.destination import Queue
from pyjms.api.requests import ServiceClient, ServiceUnavailable, serve
from pyjms.bridge.contract import CONTROL_PREFIX


def control_queue(staging_queue: str) -> Queue:
    return Queue(CONTROL_PREFIX + staging_queue)


class PingResponder:
    """The ping thread: answers each ping on the control queue (pyjms.api.requests)."""

    def __init__(self, factory: ConnectionFactory, staging: str, stop: threading.Event) -> None:
        self._factory = factory
        self._queue = control_queue(staging)
        self._stop = stop

    def run(self) -> None:
        serve(
            self._factory,
            self._queue,
            lambda request, sender: {"ok": True, "serves": self._queue.name},
            self._stop,
            answer_ttl_ms=10_000,
        )


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
