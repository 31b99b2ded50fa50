"""pyjms's services survive any request (issue 32): thousands of generated bodies (seeded: deep
nesting, huge texts, random bytes, JSON of the wrong types, unknown ops and fields, non-text
messages, NaN and huge numbers, reply-tos the sender may not write) go to the admin service
(PYJMS.ADMIN), the mark service (PYJMS.MARKS) and the delay processor's ping queue; then each
service still answers a proper request, and no reply went where it must not."""

from __future__ import annotations

import json
import random
import time
import uuid
from collections import Counter
from typing import Any

import pytest

import pyjms
from pyjms.api.requests import MAX_REQUEST_CHARS
from pyjms.bridge.contract import ADMIN_QUEUE, MARK_QUEUE
from pyjms.broker.admin import Admin
from pyjms.browse import set_mark_browse_interval
from pyjms.delay.processor import control_queue, processor_answers

# ActiveMQ over TCP only: the services fuzzed are the same code in the embedded broker and in
# the broker process, and what they get is the same message over either transport
pytestmark = [pytest.mark.providers("activemq", "artemis"), pytest.mark.activemq_tcp_only]

#: bodies per service: 3 services, so three times this per broker
BODIES = 1200
OPS = [
    "open", "claim", "marked", "unmark", "consumed", "renew", "close", "config", "restore",
    "destinations", "describe", "define", "delete", "exists", "subscribers", "durable-selector", "ping",
]  # fmt: skip
FIELDS = [
    "handle", "queue", "ids", "limit", "handles", "interval_ms", "ages_ms", "destination", "kind",
    "attributes", "client_id", "name",
]  # fmt: skip


def _value(r: random.Random, depth: int = 0) -> Any:
    """A random JSON value of any type, sometimes nested, sometimes huge."""
    pick = r.randrange(12)
    if pick == 0:
        return None
    if pick == 1:
        return r.choice([True, False])
    if pick == 2:
        return r.choice([0, -1, 1, 2**31, 2**63, -(2**70), 10**30, r.randint(-1000, 10**9)])
    if pick == 3:
        return r.choice([0.5, -1e308, 1e-300, 3.0])
    if pick == 4:
        return r.choice(["", "queue://", "topic://X", "queue://FUZZ.Q", "ID:x", "x" * r.randrange(2000)])
    if pick == 5:
        return "".join(chr(r.randrange(32, 0xD7FF)) for _ in range(r.randrange(50)))
    if pick in (6, 7) and depth < 4:
        return [_value(r, depth + 1) for _ in range(r.randrange(6))]
    if pick in (8, 9) and depth < 4:
        return {r.choice(FIELDS): _value(r, depth + 1) for _ in range(r.randrange(5))}
    if pick == 10:
        return [f"ID:{r.random()}"] * r.randrange(6000)  # more ids than a request may carry
    return uuid.UUID(int=r.getrandbits(128)).hex


def _body(r: random.Random) -> Any:
    """One hostile request body: a str (a text message), bytes, a dict (a map message) or None."""
    kind = r.randrange(14)
    if kind == 0:
        return "[" * r.choice([100, 1000, 100_000])
    if kind == 1:
        return '{"op":' * r.choice([50, 5000]) + "1"
    if kind == 2:  # a huge text, just over or far over the limit, or within it
        n = r.choice([MAX_REQUEST_CHARS + 1, 700_000, 30_000])
        return json.dumps({"op": r.choice(OPS), "handle": "h" * n})
    if kind == 3:
        return r.randbytes(r.randrange(1, 5000))
    if kind == 4:
        return {"op": r.choice(OPS), "n": r.randrange(100)}  # a map message
    if kind == 5:
        return None  # a message without a body
    if kind == 6:
        return r.randbytes(200).decode("latin-1")  # not JSON
    if kind == 7:
        return r.choice(["NaN", "Infinity", '{"op":"claim","limit":NaN}', '{"op":"config","interval_ms":1e999}',
                         '{"op":"claim","limit":' + "9" * 5000 + "}", "null", "[]", '"op"', "1", "{}", ""])  # fmt: skip
    if kind == 8:
        return json.dumps([{"op": r.choice(OPS)}])  # a list instead of an object
    # JSON objects: a known or random op, fields of random types
    op: Any = r.choice(OPS) if kind < 12 else _value(r)
    request: dict[str, Any] = {"op": op}
    for _ in range(r.randrange(6)):
        request[r.choice(FIELDS) if r.random() < 0.9 else _value(r).__repr__()[:20]] = _value(r)
    if kind == 13:
        request.pop("op")
    return json.dumps(request)


def _count(answers_in: pyjms.JMSConsumer, answers: Counter[str], wait_ms: int) -> None:
    """Counts each answer by its service (the correlation id's prefix) and outcome."""
    while (m := answers_in.receive(wait_ms) if wait_ms else answers_in.receive_no_wait()) is not None:
        service_name = (m.get_jms_correlation_id() or "?|").split("|")[0]
        answer = json.loads(m.get_text())
        answers[f"{service_name} {'ok' if answer['ok'] else 'error'}"] += 1


def test_services_answer_or_drop_every_hostile_request_and_serve_on(url: str, capsys) -> None:
    factory = pyjms.ConnectionFactory(url)
    r = random.Random(32)
    services = [pyjms.Queue(ADMIN_QUEUE), pyjms.Queue(MARK_QUEUE), control_queue(factory.staging_queue)]
    stolen = pyjms.Queue(f"FUZZ.STEAL.{uuid.uuid4().hex[:8]}")  # a reply-to that is no temporary queue
    sent: Counter[str] = Counter()
    answers: Counter[str] = Counter()
    started = time.monotonic()
    with factory.create_context() as ctx:
        replies = ctx.create_temporary_queue()
        answers_in = ctx.create_consumer(replies)
        producer = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT).set_time_to_live(120_000)
        for i in range(BODIES * len(services)):
            service = services[i % len(services)]
            body = _body(r)
            reply_to: pyjms.Destination | None = replies
            bad = r.random()
            if bad < 0.05:
                reply_to = stolen
            elif bad < 0.08:
                reply_to = pyjms.Topic(stolen.name)
            elif bad < 0.12:
                reply_to = None
            producer.set_jms_reply_to(reply_to).set_jms_correlation_id(f"{service.name}|{i}")
            producer.send(service, body)
            sent[service.name] += 1
            if i % 100 == 99:  # read answers as they come: the ping's expire after 10 s
                _count(answers_in, answers, 0)
        _count(answers_in, answers, 5000)  # the rest, until none comes for a while
        # every service still answers a proper request
        assert len(Admin(factory).destinations()) > 0
        with ctx.create_marking_browser(ctx.create_queue(stolen.name), cooperative=True) as browser:
            assert browser.get_mark_browse_interval() >= -1  # a cooperative open, then a config
        assert processor_answers(ctx, 10_000)
        # (this broker has no users, so anyone may write anywhere: a reply to ``stolen`` is no
        # confused deputy here; tests/security/test_confused_deputy.py checks secured brokers)
    set_mark_browse_interval(factory, 5000)  # a fuzzed config may have set one
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print()
        for name in sent:
            errors, oks = answers[f"{name} error"], answers[f"{name} ok"]
            print(
                f"fuzz {url.split('?')[0]} {name}: sent {sent[name]}, answered with an error {errors}, "
                f"answered ok {oks}, dropped {sent[name] - errors - oks}"
            )
        print(f"fuzz {url.split('?')[0]}: {sum(sent.values())} requests in {elapsed:.1f} s")
    for name in sent:
        assert answers[f"{name} error"] > sent[name] // 2, "most hostile requests are answered with an error"
    assert elapsed < 90
