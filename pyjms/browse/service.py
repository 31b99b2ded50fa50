"""The mark service: one MarkTable per broker, answering cooperating browse handles over JMS.

Marks must outlive any dispatcher and be seen by dispatchers in other processes and hosts, so
they live with the broker: a pyjms broker runs this service in its process (as IBM MQ keeps
marks in the queue manager), and ``pyjms mark-service --url URL`` runs it beside any other
broker. Requests are small JSON text messages on PYJMS.MARKS; the ones that need an answer
carry a reply-to queue.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from pyjms.api.destination import Queue
from pyjms.api.requests import serve
from pyjms.bridge import jvm
from pyjms.bridge.contract import MARK_QUEUE
from pyjms.browse.marks import MarkTable
from pyjms.browse.options import DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS, check_interval, check_lease
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import ConnectionFactory


class MarkService:
    """Serves a MarkTable on PYJMS.MARKS from one thread, which owns the table."""

    SWEEP_EVERY_S = 0.1

    def __init__(
        self,
        factory: ConnectionFactory,
        mark_browse_interval: int = DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS,
        lease_ms: int = 10_000,
    ) -> None:
        check_interval(mark_browse_interval)
        check_lease(lease_ms)
        self.factory = factory
        self.table = MarkTable(interval_ms=mark_browse_interval, lease_ms=lease_ms)
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.requests = 0

    # ------------------------------------------------------------------ requests

    def handle(self, request: dict[str, Any], sender: str | None = None) -> dict[str, Any]:
        """One request; the answer (sent only if the request has a reply-to). A claim by a handle
        whose lease ran out raises LostHandle, which reaches the asker as an IllegalStateRuntimeException."""
        t = self.table
        op = request.get("op")
        handle: Any = request.get("handle")  # JSON, as the other fields
        queue = request.get("queue", "")
        ids = request.get("ids", [])
        if op == "claim":
            granted, checked = t.claim_some(handle, queue, ids, request.get("limit"))
            return {"ok": True, "granted": granted, "checked": checked, "interval_ms": t.interval_ms}
        if op == "marked":
            return {"ok": True, "marked": t.marked(queue, ids)}
        if op == "unmark":
            return {"ok": True, "unmarked": t.unmark(queue, ids, handle)}
        if op == "consumed":
            t.consumed(queue, ids)
            return {"ok": True}
        if op == "renew":
            return {"ok": True, "lost": [h for h in request.get("handles", []) if not t.renew(h)]}
        if op == "open":
            t.open(handle)
            return {"ok": True, **self.config()}
        if op == "close":
            return {"ok": True, "released": t.close(handle)}
        if op == "config":
            if request.get("interval_ms") is not None:
                t.interval_ms = check_interval(request["interval_ms"])
            return {"ok": True, **self.config()}
        raise InvalidArgumentRuntimeException(f"unknown mark service operation {op!r}")

    def config(self) -> dict[str, Any]:
        t = self.table
        return {
            "interval_ms": t.interval_ms,
            "lease_ms": t.lease_ms,
            "marks": t.count(),
            "handles": t.live_handles(),
        }

    # ------------------------------------------------------------------ loop

    def start(self) -> MarkService:
        self._thread = threading.Thread(target=self._serve, name="pyjms-marks", daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise JMSRuntimeException(f"the mark service on {self.factory.url} did not start within 30 s")
        return self

    def _serve(self) -> None:
        swept = time.monotonic()

        def sweep() -> None:
            nonlocal swept
            now = time.monotonic()
            if now - swept >= self.SWEEP_EVERY_S:
                self.table.sweep()
                swept = now

        with jvm.java_thread():
            serve(
                self.factory,
                Queue(MARK_QUEUE),
                self.handle,
                self._stop,
                ready=self._ready,
                batch=256,
                each_round=sweep,
            )

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
