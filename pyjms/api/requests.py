"""One request/reply convention for pyjms's own services: the admin service, the mark service and
the delay processor's ping all speak it, through :class:`ServiceClient` and :func:`serve`.

- A **request** is a JSON text message ``{"op": ..., **fields}`` on the service's queue. One that
  needs an answer carries a reply-to (a temporary queue of the asker's) and a correlation id; a
  **notice** carries neither. Both are non-persistent with a time-to-live, so requests nobody
  serves never pile up.
- An **answer** is ``{"ok": true, ...}``, or ``{"ok": false, "error": text, "kind": kind,
  "reason": MQRC or null}``. ``kind`` names the pyjms error the asker raises (security, state,
  argument), so a refusal keeps its class and its IBM MQ reason across the wire as data.
- Silence is an error that names the queue, the wait and what serves that queue.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from pyjms.api.destination import Queue
from pyjms.bridge import jvm
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    JMSRuntimeException,
    JMSSecurityRuntimeException,
)

if TYPE_CHECKING:
    from pyjms.api.consumer import JMSConsumer
    from pyjms.api.context import ConnectionFactory, JMSContext
    from pyjms.api.message import Message, TextMessage

__all__ = ["ServiceClient", "ServiceUnavailable", "answer_for_error", "error_from_answer", "serve"]

_log = logging.getLogger("pyjms.requests")

#: error kinds an answer may name, and the pyjms error each becomes at the asker
_KINDS: dict[str, type[JMSRuntimeException]] = {
    "security": JMSSecurityRuntimeException,
    "state": IllegalStateRuntimeException,
    "argument": InvalidArgumentRuntimeException,
}

#: a notice nobody serves must not pile up on the service's queue
NOTICE_TTL_MS = 60_000


class ServiceUnavailable(JMSRuntimeException):
    """No service answered within the wait."""


def answer_for_error(error: Exception) -> dict[str, Any]:
    """The answer that reports ``error`` to the asker (its kind and IBM MQ reason as data)."""
    kind = next((k for k, cls in _KINDS.items() if isinstance(error, cls)), "argument")
    return {"ok": False, "error": str(error), "kind": kind, "reason": getattr(error, "reason", None)}


def error_from_answer(answer: dict[str, Any], what: str) -> JMSRuntimeException:
    """The pyjms error an ``{"ok": false}`` answer stands for."""
    cls = _KINDS.get(str(answer.get("kind")), InvalidArgumentRuntimeException)
    reason = answer.get("reason")
    return cls(
        f"{what}: {answer.get('error', 'refused')}", reason=int(reason) if reason is not None else None
    )


class ServiceClient:
    """Requests to one service queue, on a session of its own (the caller's may be transacted).

    ``serves``: what serves the queue, for the error when nothing answers ("a pyjms broker, or
    `pyjms mark-service --url URL` beside another broker").
    """

    def __init__(self, parent: JMSContext, queue: Queue, *, timeout_ms: int, serves: str) -> None:
        self.queue = queue
        self.timeout_ms = timeout_ms
        self.serves = serves
        self._ctx = parent.create_context()
        self._producer = self._ctx.create_producer().set_delivery_mode(1)
        self._answers: JMSConsumer | None = None  # made on the first request: notices need none
        self._reply: Queue | None = None
        self._prefix = f"pyjms-{uuid.uuid4().hex[:12]}-"
        self._ids = itertools.count(1)

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        """Sends one request and returns its ``{"ok": true}`` answer; raises the answer's error,
        or :class:`ServiceUnavailable` when nothing answers within ``timeout_ms``."""
        if self._answers is None:
            self._reply = self._ctx.create_temporary_queue()
            self._answers = self._ctx.create_consumer(self._reply)
        correlation = self._prefix + str(next(self._ids))
        (
            self._producer.set_jms_reply_to(self._reply)
            .set_jms_correlation_id(correlation)
            .set_time_to_live(self.timeout_ms)
            .send(self.queue, json.dumps({"op": op, **fields}))
        )
        while True:
            answer = self._answers.receive(self.timeout_ms)
            if answer is None:
                raise ServiceUnavailable(
                    f"nothing answered {op!r} on {self.queue.name} within {self.timeout_ms} ms: it is served by {self.serves}"
                )
            if answer.get_jms_correlation_id() == correlation:
                break
            # an answer to an earlier request that timed out: skip it
        # a service answers with text (a stray non-text answer would raise AttributeError)
        data: dict[str, Any] = json.loads(cast("TextMessage", answer).get_text() or "{}")
        if not data.get("ok"):
            raise error_from_answer(data, f"{op} refused by {self.queue.name}")
        return data

    def notify(self, op: str, **fields: Any) -> None:
        """A one-way notice: no answer, no wait."""
        (
            self._producer.set_jms_reply_to(None)
            .set_jms_correlation_id(None)
            .set_time_to_live(NOTICE_TTL_MS)
            .send(self.queue, json.dumps({"op": op, **fields}))
        )

    def close(self) -> None:
        self._ctx.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


Handler = Callable[[dict[str, Any], "str | None"], dict[str, Any]]


def serve(
    factory: ConnectionFactory,
    queue: Queue,
    handle: Handler,
    stop: threading.Event,
    *,
    ready: threading.Event | None = None,
    batch: int = 1,
    each_round: Callable[[], None] | None = None,
    answer_ttl_ms: int = 30_000,
) -> None:
    """Serves ``queue`` until ``stop`` is set: each request goes to ``handle(request, sender)``
    (sender: the JMSXUserID a broker with users stamps), and its answer, or the error it raised,
    goes to the request's reply-to. ``each_round`` runs after every receive (housekeeping)."""
    with factory.create_context() as ctx:
        consumer = ctx.create_consumer(queue)
        producer = ctx.create_producer().set_delivery_mode(1).set_time_to_live(answer_ttl_ms)
        if ready is not None:
            ready.set()
        while not stop.is_set():
            try:
                requests = consumer.receive_batch(batch, 100) if batch > 1 else _one(consumer.receive(200))
            except JMSRuntimeException:
                if stop.is_set() or jvm.shutting_down():
                    return
                raise
            for m in requests:
                _answer(m, handle, producer, queue)
            if each_round is not None:
                each_round()


def _one(m: Message | None) -> list[Message]:
    return [] if m is None else [m]


def _answer(m: Message, handle: Handler, producer: Any, queue: Queue) -> None:
    try:
        request = json.loads(cast("TextMessage", m).get_text() or "{}")  # else AttributeError: below
        if not isinstance(request, dict):
            raise InvalidArgumentRuntimeException(
                f"a request on {queue.name} must be a JSON object, not {request!r}"
            )
        answer = handle(request, m.get_string_property("JMSXUserID"))
    except JMSRuntimeException as e:
        answer = answer_for_error(e)
    except (KeyError, ValueError, TypeError, AttributeError) as e:  # a malformed request
        answer = answer_for_error(
            InvalidArgumentRuntimeException(f"malformed request on {queue.name}: {e!r}")
        )
    reply_to = m.get_jms_reply_to()
    if reply_to is None:
        return
    try:
        producer.set_jms_correlation_id(m.get_jms_correlation_id() or m.get_jms_message_id()).send(
            reply_to, json.dumps(answer)
        )
    except JMSRuntimeException as e:  # the asker went away: nothing to answer
        _log.info("answer to %s on %s failed: %s", reply_to, queue.name, e)
