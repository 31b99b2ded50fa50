"""How a browse handle or a consumer reaches the mark service: requests with answers, one-way
notices, and a lease kept alive by a heartbeat thread while the handle is open."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from pyjms.api.destination import Queue
from pyjms.api.requests import ServiceClient
from pyjms.bridge import jvm
from pyjms.bridge.contract import MARK_QUEUE
from pyjms.errors import JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext


class MarkClient(ServiceClient):
    """Requests and notices to PYJMS.MARKS (pyjms.api.requests), on a session of its own."""

    def __init__(self, parent: JMSContext, timeout_ms: int = 5000) -> None:
        super().__init__(
            parent,
            Queue(MARK_QUEUE),
            timeout_ms=timeout_ms,
            serves="a pyjms broker, or `pyjms mark-service --url URL` beside another broker "
            "(cooperative browsing needs one)",
        )


class Heartbeat:
    """Renews a handle's lease every lease/3 on a thread and session of its own."""

    def __init__(self, parent: JMSContext, handle: str, lease_ms: int) -> None:
        self._marks = MarkClient(parent)  # made here; used only by the thread from now on
        self._handle = handle
        self._every_s = max(lease_ms / 3000.0, 0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pyjms-mark-lease-{handle[:8]}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with jvm.java_thread():
            while not self._stop.wait(self._every_s):
                try:
                    self._marks.notify("renew", handles=[self._handle])
                except JMSRuntimeException:
                    if self._stop.is_set() or jvm.shutting_down():
                        return
                    raise
            self._marks.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
