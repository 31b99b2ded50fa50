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

A service answers any body: one that is not a JSON object with an ``op`` text, is larger than
``max_chars`` (64 KiB unless the service says otherwise), nests deeper than MAX_REQUEST_DEPTH or
holds more than MAX_REQUEST_VALUES values, gets an error answer (MQRC_FORMAT_ERROR 2110, or
MQRC_MSG_TOO_BIG_FOR_Q 2030 for the size), and the service goes on. It answers only where the
sender (the broker-stamped ``JMSXUserID``) may write (pyjms.api.access): it never writes for a
user where that user could not.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from pyjms.api.access import WriteCheck, temporary_only
from pyjms.api.checks import is_int
from pyjms.api.destination import Queue
from pyjms.api.message import TextMessage
from pyjms.api.quietlog import QuietLog
from pyjms.bridge import jvm
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    JMSSecurityRuntimeException,
)
from pyjms.reasons import MQRC

if TYPE_CHECKING:
    from pyjms.api.consumer import JMSConsumer
    from pyjms.api.context import JMSContext
    from pyjms.api.factory import ConnectionFactory
    from pyjms.api.message import Message

__all__ = [
    "MAX_REQUEST_CHARS",
    "ServiceClient",
    "ServiceUnavailable",
    "answer_for_error",
    "brief",
    "error_from_answer",
    "parse_request",
    "serve",
]

_log = logging.getLogger("pyjms.requests")

#: error kinds an answer may name, and the pyjms error each becomes at the asker
_KINDS: dict[str, type[JMSRuntimeException]] = {
    "security": JMSSecurityRuntimeException,
    "state": IllegalStateRuntimeException,
    "argument": InvalidArgumentRuntimeException,
    "destination": InvalidDestinationRuntimeException,
}

#: a notice nobody serves must not pile up on the service's queue
NOTICE_TTL_MS = 60_000
#: the largest request a service reads, in characters of JSON text (a service may allow more)
MAX_REQUEST_CHARS = 64 * 1024
#: how deeply a request may nest (pyjms's own requests nest 3 deep)
MAX_REQUEST_DEPTH = 8
#: how many values (objects, lists and what they hold) one request may hold in all
MAX_REQUEST_VALUES = 20_000
#: the longest wait a request may ask for (ms): JMS's int range
MOST_TIMEOUT_MS = 2**31 - 1
#: a service whose session broke serves again after this, doubling up to MOST_BACKOFF_S
FIRST_BACKOFF_S = 0.25
MOST_BACKOFF_S = 5.0


class ServiceUnavailable(JMSRuntimeException):
    """No service answered within the wait."""


def answer_for_error(error: Exception) -> dict[str, Any]:
    """The answer that reports ``error`` to the asker (its kind and IBM MQ reason as data)."""
    kind = next((k for k, cls in _KINDS.items() if isinstance(error, cls)), "argument")
    # the bare message: the asker's error adds the reason's name itself (error_from_answer)
    text = error.message if isinstance(error, JMSRuntimeException) else str(error)
    return {"ok": False, "error": text, "kind": kind, "reason": getattr(error, "reason", None)}


def error_from_answer(answer: dict[str, Any], what: str) -> JMSRuntimeException:
    """The pyjms error an ``{"ok": false}`` answer stands for."""
    cls = _KINDS.get(str(answer.get("kind")), InvalidArgumentRuntimeException)
    reason = answer.get("reason")
    return cls(
        f"{what}: {answer.get('error', 'refused')}", reason=int(reason) if reason is not None else None
    )


def _answer_data(answer: Message, op: str, queue: Queue) -> dict[str, Any]:
    """The JSON object an answer carries (a service answers with one in a text message)."""
    try:
        data = json.loads(cast(TextMessage, answer).get_text() or "{}")
    except (AttributeError, ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise IllegalStateRuntimeException(f"the answer to {op!r} on {queue.name} is not a JSON object")
    return data


class ServiceClient:
    """Requests to one service queue, on a session of its own (the caller's may be transacted).

    ``serves``: what serves the queue, for the error when nothing answers ("a pyjms broker, or
    `pyjms mark-service --url URL` beside another broker").
    """

    def __init__(self, parent: JMSContext, queue: Queue, *, timeout_ms: int, serves: str) -> None:
        if not is_int(timeout_ms) or not 1 <= timeout_ms <= MOST_TIMEOUT_MS:
            raise InvalidArgumentRuntimeException(
                f"timeout_ms {timeout_ms!r} for requests on {queue.name} must be an int of "
                f"milliseconds, 1..{MOST_TIMEOUT_MS:,}",
                values={"timeout_ms": timeout_ms},
            )
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
        data = _answer_data(answer, op, self.queue)
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
    may_write: WriteCheck = temporary_only,
    max_chars: int = MAX_REQUEST_CHARS,
) -> None:
    """Serves ``queue`` until ``stop`` is set: each request goes to ``handle(request, sender)``
    (sender: the JMSXUserID a broker with users stamps), and its answer, or the error it raised,
    goes to the request's reply-to if ``may_write(sender, reply_to)``. ``each_round`` runs after
    every receive (housekeeping).

    No request stops it: a body that is not a JSON object within the limits (``max_chars``,
    MAX_REQUEST_DEPTH, MAX_REQUEST_VALUES) is answered with an error, and so is a handler that
    fails (an "internal error", logged). A session that breaks is opened again, with backoff."""
    quiet = QuietLog(_log)
    backoff = FIRST_BACKOFF_S
    while not stop.is_set():
        try:
            with factory.create_context() as ctx:
                consumer = ctx.create_consumer(queue)
                producer = ctx.create_producer().set_delivery_mode(1).set_time_to_live(answer_ttl_ms)
                if ready is not None:
                    ready.set()
                backoff = FIRST_BACKOFF_S
                while not stop.is_set():
                    requests = (
                        consumer.receive_batch(batch, 100) if batch > 1 else _one(consumer.receive(200))
                    )
                    for m in requests:
                        _answer(m, handle, producer, queue, may_write, max_chars, quiet)
                    if each_round is not None:
                        each_round()
            return
        except Exception as e:  # a broken session, or a bug: serve again, never end silently
            if stop.is_set() or jvm.shutting_down():
                return
            quiet.error(
                f"loop:{type(e).__name__}",
                "serving %s failed, serving again in %.2f s: %s",
                queue.name,
                backoff,
                e,
                exc_info=not isinstance(e, JMSRuntimeException),
            )
        stop.wait(backoff)
        backoff = min(backoff * 2, MOST_BACKOFF_S)


def parse_request(m: Message, queue: Queue, max_chars: int = MAX_REQUEST_CHARS) -> dict[str, Any]:
    """The request a message carries: a JSON object with an ``op`` text, within the limits;
    else the InvalidArgumentRuntimeException that says which rule it broke."""
    if not isinstance(m, TextMessage):
        raise _malformed(
            f"a request on {queue.name} must be a text message of JSON, not a {type(m).__name__}"
        )
    text = m.get_text() or ""
    if len(text) > max_chars:
        raise InvalidArgumentRuntimeException(
            f"a request on {queue.name} of {len(text):,} characters is refused: "
            f"the most a request may be is {max_chars:,} ({max_chars // 1024} KiB)",
            reason=MQRC.MSG_TOO_BIG_FOR_Q,
        )
    try:
        request = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise _malformed(f"a request on {queue.name} nests deeper than {MAX_REQUEST_DEPTH} levels") from None
    except ValueError as e:  # not JSON, NaN or Infinity, an int of more than 4,300 digits
        raise _malformed(f"a request on {queue.name} is not JSON: {str(e)[:200]}") from None
    if not isinstance(request, dict):
        raise _malformed(
            f"a request on {queue.name} must be a JSON object, not a JSON {type(request).__name__}"
        )
    _check_shape(request, queue)
    op = request.get("op")
    if not isinstance(op, str):
        raise _malformed(f'a request on {queue.name} needs an "op" text, got {brief(op)}')
    return request


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a request may hold")


def _check_shape(request: dict[str, Any], queue: Queue) -> None:
    """Depth and size of a parsed request, walked without recursion."""
    values = 0
    todo: list[tuple[Any, int]] = [(request, 1)]
    while todo:
        value, depth = todo.pop()
        values += 1
        if values > MAX_REQUEST_VALUES:
            raise _malformed(f"a request on {queue.name} holds more than {MAX_REQUEST_VALUES:,} values")
        if isinstance(value, dict | list):
            if depth > MAX_REQUEST_DEPTH:
                raise _malformed(f"a request on {queue.name} nests deeper than {MAX_REQUEST_DEPTH} levels")
            todo.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))


def _malformed(text: str) -> InvalidArgumentRuntimeException:
    return InvalidArgumentRuntimeException(text, reason=MQRC.FORMAT_ERROR)


def brief(value: Any) -> str:
    """A value as an error line quotes it: its repr, cut at 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one(m: Message | None) -> list[Message]:
    return [] if m is None else [m]


def _sender(m: Message) -> str | None:
    """Who sent the request, as the broker stamped it (None: the broker names nobody)."""
    try:
        return m.get_string_property("JMSXUserID")
    except JMSRuntimeException:  # not a text: no broker stamped it
        return None


def _answer(
    m: Message,
    handle: Handler,
    producer: Any,
    queue: Queue,
    may_write: WriteCheck,
    max_chars: int,
    quiet: QuietLog,
) -> None:
    sender = _sender(m)
    answer: dict[str, Any]
    try:
        answer = handle(parse_request(m, queue, max_chars), sender)
    except JMSRuntimeException as e:
        answer = answer_for_error(e)
    except Exception as e:  # a handler's bug: this request fails, the service goes on
        quiet.error(
            f"bug:{type(e).__name__}",
            "a request on %s failed inside the service: %r",
            queue.name,
            e,
            exc_info=True,
        )
        answer = {
            "ok": False,
            "error": f"internal error in the service on {queue.name}",
            "kind": "state",
            "reason": None,
        }
    try:
        reply_to = m.get_jms_reply_to()
    except Exception:  # a reply-to nobody can name: nowhere to answer
        reply_to = None
    if reply_to is None:
        return
    try:
        allowed = may_write(sender, reply_to)
    except Exception:
        allowed = False
    if not allowed:
        # the service acts for the sender: it writes nowhere the sender may not
        quiet.warn(
            f"reply-to:{sender}",
            "no answer on %s to user %r: it may not write to its reply-to %s",
            queue.name,
            sender,
            reply_to,
        )
        return
    try:
        correlation = m.get_jms_correlation_id() or m.get_jms_message_id()
        producer.set_jms_correlation_id(correlation).send(reply_to, json.dumps(answer))
    except Exception as e:  # the asker went away, or named a reply-to that takes nothing
        quiet.warn(f"answer:{type(e).__name__}", "answer to %s on %s failed: %s", reply_to, queue.name, e)
