"""How a browse handle or a consumer reaches the mark service: requests with answers, one-way
notices, and a lease kept alive by a heartbeat thread while the handle is open."""

from __future__ import annotations

import itertools
import json
import threading
from typing import TYPE_CHECKING, Any

from pyjms.api.destination import Queue
from pyjms.bridge import jvm
from pyjms.bridge.contract import MARK_QUEUE
from pyjms.errors import JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext

_NOTICE_TTL_MS = 60_000  # a notice nobody serves must not pile up on PYJMS.MARKS


class MarkClient:
    """Request/reply to PYJMS.MARKS on a session of its own (the caller's may be transacted)."""

    def __init__(self, parent: JMSContext, timeout_ms: int = 5000) -> None:
        self.timeout_ms = timeout_ms
        self._ctx = parent.create_context()
        self._queue = Queue(MARK_QUEUE)
        self._reply: Any = None  # made on the first request: notices need no answers
        self._answers: Any = None
        self._producer = self._ctx.create_producer().set_delivery_mode(1)
        self._ids = itertools.count(1)

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        if self._reply is None:
            self._reply = self._ctx.create_temporary_queue()
            self._answers = self._ctx.create_consumer(self._reply)
        correlation = f"pyjms-mark-{next(self._ids)}"
        body = json.dumps({"op": op, **fields})
        (self._producer.set_jms_reply_to(self._reply).set_jms_correlation_id(correlation)
         .set_time_to_live(self.timeout_ms).send(self._queue, body))
        remaining = self.timeout_ms
        while True:
            answer = self._answers.receive(remaining)
            if answer is None:
                raise JMSRuntimeException(
                    f"no pyjms mark service answered on {MARK_QUEUE} within {self.timeout_ms} ms: cooperative "
                    "browsing needs a pyjms broker, or `pyjms mark-service --url URL` beside another broker"
                )
            if answer.get_jms_correlation_id() == correlation:
                return json.loads(answer.get_text() or "{}")
            # an answer to an earlier request that timed out: skip it

    def notify(self, op: str, **fields: Any) -> None:
        (self._producer.set_jms_reply_to(None).set_jms_correlation_id(None)
         .set_time_to_live(_NOTICE_TTL_MS).send(self._queue, json.dumps({"op": op, **fields})))

    def close(self) -> None:
        self._ctx.close()


class Heartbeat:
    """Renews a handle's lease every lease/3 on a thread and session of its own."""

    def __init__(self, parent: JMSContext, handle: str, lease_ms: int) -> None:
        self._ctx = parent.create_context()  # made here; used only by the thread from now on
        self._handle = handle
        self._every_s = max(lease_ms / 3000.0, 0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pyjms-mark-lease-{handle[:8]}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with jvm.java_thread():
            producer = self._ctx.create_producer().set_delivery_mode(1).set_time_to_live(_NOTICE_TTL_MS)
            body = json.dumps({"op": "renew", "handles": [self._handle]})
            while not self._stop.wait(self._every_s):
                try:
                    producer.send(Queue(MARK_QUEUE), body)
                except JMSRuntimeException:
                    if self._stop.is_set() or jvm.shutting_down():
                        return
                    raise
            self._ctx.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
