"""Browse with mark (B…): handle and cooperative marks, tokens, backout, the interval."""

from __future__ import annotations

import time

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.message import Message
from pyjms.api.requests import ServiceUnavailable
from pyjms.browse import (
    BROWSE_CO_OP,
    BROWSE_FIRST,
    BROWSE_HANDLE,
    BROWSE_NEXT,
    MARK_BROWSE_HANDLE,
    UNMARKED_BROWSE_MSG,
    MarkingBrowser,
    NoMessageAvailable,
    create_marking_browser,
    mark_browse_interval,
)
from pyjms.conformance.kit import OK, Probe, Skip, rule, text_of
from pyjms.reasons import MQRC

#: the longest MsgMarkBrowseInterval the kit waits out (B05, B09)
LONGEST_WAIT_MS = 6000


def fill(p: Probe, q: Queue, n: int, **props: str) -> list[str]:
    producer = p.ctx.create_producer()
    for k, v in props.items():
        producer.set_property(k, v)
    bodies = [f"m{i}" for i in range(n)]
    producer.send_batch(q, bodies)
    return bodies


def texts(messages: list[Message]) -> list[str]:
    return [str(text_of(m)) for m in messages]


def drain(browser: MarkingBrowser, options: int) -> list[Message]:
    out = []
    while (m := browser.get_or_none(options)) is not None:
        out.append(m)
    return out


def co_op(
    p: Probe, ctx: JMSContext, q: Queue, selector: str | None = None, claim_batch: int | None = None
) -> MarkingBrowser:
    """A cooperative handle, closed after the rule; skipped where no mark service answers."""
    try:
        browser = create_marking_browser(ctx, q, selector, cooperative=True, claim_batch=claim_batch)
    except ServiceUnavailable as e:
        raise Skip(f"no pyjms mark service answers for this broker: {e}") from e
    return p.stack.enter_context(browser)


def handle(p: Probe, q: Queue) -> MarkingBrowser:
    return p.stack.enter_context(create_marking_browser(p.ctx, q))


@rule("B01", "MARK_BROWSE_HANDLE marks; UNMARKED_BROWSE_MSG skips marked ones; marks are the handle's")
def b01(p: Probe) -> str:
    q = p.queue()
    bodies = fill(p, q, 4)
    h, other = handle(p, q), handle(p, q)
    marked = [text_of(h.get(BROWSE_NEXT | MARK_BROWSE_HANDLE)) for _ in range(2)]
    unmarked = text_of(h.get(BROWSE_FIRST | UNMARKED_BROWSE_MSG))
    others = text_of(other.get(BROWSE_FIRST | UNMARKED_BROWSE_MSG))
    if marked == bodies[:2] and unmarked == bodies[2] and others == bodies[0]:
        return OK
    return f"marked {marked}, then unmarked {unmarked}, another handle {others}"


@rule("B02", "BROWSE_HANDLE, repeated, returns every message exactly once")
def b02(p: Probe) -> str:
    q = p.queue()
    bodies = fill(p, q, 30)
    got = texts(drain(handle(p, q), BROWSE_HANDLE))
    return OK if got == bodies else f"{len(got)} of {len(bodies)}, in order: {got == sorted(got)}"


@rule("B03", "no unmarked message left: MQRC_NO_MSG_AVAILABLE", MQRC.NO_MSG_AVAILABLE.mq_name)
def b03(p: Probe) -> str:
    q = p.queue()
    fill(p, q, 2)
    h = handle(p, q)
    drain(h, BROWSE_HANDLE)
    try:
        h.get(BROWSE_HANDLE)
    except NoMessageAvailable as e:
        return e.reason_name or str(e.reason)
    return "another message"


@rule("B04", "cooperating handles form one set: each message to exactly one of them")
def b04(p: Probe) -> str:
    q = p.queue()
    bodies = fill(p, q, 30)
    a = co_op(p, p.ctx, q, claim_batch=3)
    b = co_op(p, p.context(), q, claim_batch=3)
    got_a: list[str] = []
    got_b: list[str] = []
    while True:
        ma, mb = a.get_or_none(BROWSE_CO_OP), b.get_or_none(BROWSE_CO_OP)
        got_a += texts([ma] if ma else [])
        got_b += texts([mb] if mb else [])
        if ma is None and mb is None:
            break
    if set(got_a) & set(got_b):
        return "a message to both"
    return OK if sorted(got_a + got_b) == sorted(bodies) else f"{len(got_a) + len(got_b)} of {len(bodies)}"


def lapse(p: Probe) -> tuple[int, float | None]:
    """MsgMarkBrowseInterval, and how long a mark for the set, never got, kept a message from
    another handle of the set (B05, B09), once per mode."""
    if "lapse" not in p.shared:
        try:
            interval = mark_browse_interval(p.factory)
        except ServiceUnavailable as e:
            raise Skip(f"no pyjms mark service answers for this broker: {e}") from e
        if interval < 0 or interval > LONGEST_WAIT_MS:
            raise Skip(f"MsgMarkBrowseInterval is {interval} ms: the kit waits at most {LONGEST_WAIT_MS} ms")
        q = p.queue()
        fill(p, q, 1)
        a, b = co_op(p, p.ctx, q), co_op(p, p.context(), q)
        marked_at = time.monotonic()
        a.get(BROWSE_CO_OP)
        waited: float | None = None
        if b.get_or_none(BROWSE_CO_OP) is None:
            b.get(BROWSE_CO_OP, wait_ms=interval + 3000)
            waited = time.monotonic() - marked_at
        p.shared["lapse"] = (interval, waited)
    result: tuple[int, float | None] = p.shared["lapse"]
    return result


@rule("B05", "a mark for the set lapses after MsgMarkBrowseInterval (ms)", "lapses after the interval")
def b05(p: Probe) -> str:
    interval, waited = lapse(p)
    if waited is None:
        return "another handle of the set got it at once"
    if interval / 1000 * 0.9 <= waited < interval / 1000 + 3:
        return "lapses after the interval"
    return f"lapsed after {waited:.2f} s for {interval} ms"


@rule("B09", "a message marked but never got is available again after the interval", "available again")
def b09(p: Probe) -> str:
    _, waited = lapse(p)
    return "available again" if waited is not None else "another handle of the set got it at once"


@rule("B06", "closing a handle releases its marks")
def b06(p: Probe) -> str:
    q = p.queue()
    fill(p, q, 5)
    a = co_op(p, p.ctx, q)
    b = co_op(p, p.ctx, q)
    held = a.get(BROWSE_CO_OP).get_message_token()
    # b takes what a holds no claim on (IBM: any message not marked for the set); how many a
    # claimed at once is pyjms's choice, and what a provider's browse had shown it yet
    before = [m.get_message_token() for m in drain(b, BROWSE_CO_OP)]
    a.close()
    after = [m.get_message_token() for m in drain(b, BROWSE_CO_OP)]
    if held in before:
        return "the other handle got the message the first held"
    if held not in after:
        return "the first handle's message was not released by its close"
    every = before + after
    if len(every) != 5 or len(set(every)) != 5:
        return f"{len(set(every))} distinct of {len(every)} got, of 5"
    return OK


@rule("B07", "receive_by_token gets exactly that message, destructively")
def b07(p: Probe) -> str:
    q = p.queue()
    bodies = fill(p, q, 6)
    consumer = p.stack.enter_context(p.ctx.create_consumer(q))
    ms = drain(co_op(p, p.ctx, q), BROWSE_CO_OP)
    fourth = ms[3]
    got = consumer.receive_by_token(fourth.get_message_token())
    if text_of(got) != bodies[3]:
        return f"got {text_of(got)} for {bodies[3]}"
    try:
        consumer.receive_by_token(fourth.get_message_token(), 200)
        return "got it twice"
    except NoMessageAvailable:
        return OK


@rule("B08", "a rolled-back get leaves the message unmarked, dispatched again")
def b08(p: Probe) -> str:
    q = p.queue()
    fill(p, q, 3)
    work = p.context(SESSION_TRANSACTED)
    dispatcher = co_op(p, p.ctx, q, claim_batch=1)
    other = co_op(p, p.ctx, q, claim_batch=1)
    first = dispatcher.get(BROWSE_CO_OP)
    with work.create_consumer(q) as consumer:
        consumer.receive_by_token(first.get_message_token())
    work.rollback()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        m = other.get_or_none(BROWSE_CO_OP)
        if m is not None and m.get_message_token() == first.get_message_token():
            return OK
    return "not dispatched again"


@rule("B10", "dispatchers each with a subset (selector) cooperate in one set")
def b10(p: Probe) -> str:
    q = p.queue()
    producer = p.ctx.create_producer()
    for i in range(20):
        producer.set_property("kind", "ab"[i % 2]).send(q, f"{i}")
    handles = {
        "a": co_op(p, p.ctx, q, "kind = 'a'", claim_batch=2),
        "b": co_op(p, p.ctx, q, "kind = 'b'", claim_batch=2),
        "any": co_op(p, p.ctx, q, claim_batch=2),
    }
    got: dict[str, list[str]] = {k: [] for k in handles}
    while True:
        round_ = [(k, h.get_or_none(BROWSE_CO_OP)) for k, h in handles.items()]
        for k, m in round_:
            if m is not None:
                got[k].append(str(text_of(m)))
        if all(m is None for _, m in round_):
            break
    if not all(int(t) % 2 == 0 for t in got["a"]) or not all(int(t) % 2 == 1 for t in got["b"]):
        return "a dispatcher got a message outside its subset"
    every = sorted(got["a"] + got["b"] + got["any"], key=int)
    return OK if every == [str(i) for i in range(20)] else f"{len(every)} dispatched of 20"
