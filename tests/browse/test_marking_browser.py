"""Browse with mark on real brokers (embedded over vm://, standalone over tcp://): the options,
handle and cooperative marks, tokens, backout, the interval. Names carry CHECKLIST ids."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

import pyjms
from pyjms.browse import (
    BROWSE_CO_OP,
    BROWSE_FIRST,
    BROWSE_HANDLE,
    BROWSE_NEXT,
    MARK_BROWSE_HANDLE,
    UNMARK_BROWSE_CO_OP,
    UNMARK_BROWSE_HANDLE,
    UNMARKED_BROWSE_MSG,
    NoMessageAvailable,
    mark_browse_interval,
)
from pyjms.errors import IllegalStateRuntimeException, InvalidArgumentRuntimeException
from tests.conftest import ROOT

# provider-independent: each test runs on ActiveMQ Classic and on Apache Artemis
pytestmark = pytest.mark.providers("activemq", "artemis")


def fill(ctx: pyjms.JMSContext, q: pyjms.Queue, n: int, **props: str) -> list[str]:
    p = ctx.create_producer()
    for k, v in props.items():
        p.set_property(k, v)
    bodies = [f"{q.name}-{i}" for i in range(n)]
    for b in bodies:
        p.send(q, b)
    return bodies


def texts(messages) -> list[str]:
    return [m.get_text() for m in messages]


def drain_browser(browser, options: int) -> list:
    out = []
    while (m := browser.get_or_none(options)) is not None:
        out.append(m)
    return out


def test_B01_mark_for_handle_and_unmarked_only_skips_marked(ctx, qname) -> None:
    q = ctx.create_queue(qname)
    bodies = fill(ctx, q, 5)
    with ctx.create_marking_browser(q) as h, ctx.create_marking_browser(q) as other:
        assert h.get(BROWSE_NEXT | MARK_BROWSE_HANDLE).get_text() == bodies[0]
        assert h.get(BROWSE_NEXT | MARK_BROWSE_HANDLE).get_text() == bodies[1]
        assert h.get(BROWSE_NEXT).get_text() == bodies[2], "not marked: no mark option"
        assert h.get(BROWSE_FIRST | UNMARKED_BROWSE_MSG).get_text() == bodies[2]
        assert h.get(BROWSE_FIRST).get_text() == bodies[0], "without UNMARKED_BROWSE_MSG marked ones are seen"
        assert other.get(BROWSE_FIRST | UNMARKED_BROWSE_MSG).get_text() == bodies[0], (
            "a handle's marks are its own"
        )
        h.unmark(bodies and h.get(BROWSE_FIRST), UNMARK_BROWSE_HANDLE)
        assert h.get(BROWSE_FIRST | UNMARKED_BROWSE_MSG).get_text() == bodies[0]
    assert len(texts(ctx.create_browser(q))) == 5, "browsing removed nothing"


def test_B02_B03_BROWSE_HANDLE_returns_each_message_once_then_2033(ctx, qname) -> None:
    q = ctx.create_queue(qname)
    bodies = fill(ctx, q, 50)
    with ctx.create_marking_browser(q) as h:
        assert texts(drain_browser(h, BROWSE_HANDLE)) == bodies
        with pytest.raises(NoMessageAvailable) as e:
            h.get(BROWSE_HANDLE)
        assert e.value.reason == 2033 and e.value.reason_name == "MQRC_NO_MSG_AVAILABLE"
        assert h.get_or_none(BROWSE_HANDLE) is None
        ctx.create_producer().send(q, "late")
        assert h.get(BROWSE_HANDLE).get_text() == "late", "BROWSE_FIRST comes back to the head"


def test_B02_B04_every_message_of_a_deep_queue_once_per_handle_and_once_per_set(factory, qname) -> None:
    """Deeper than a dispatching pass's window (400) and than a browser's page (500)."""
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        p = ctx.create_producer()
        for start in range(0, 1500, 500):
            p.send_batch(q, [str(i) for i in range(start, start + 500)])
        with ctx.create_marking_browser(q) as h:
            assert [int(t) for t in texts(drain_browser(h, BROWSE_HANDLE))] == list(range(1500))
        with (
            ctx.create_marking_browser(q, cooperative=True) as a,
            ctx.create_marking_browser(q, cooperative=True) as b,
        ):
            got = texts(drain_browser(a, BROWSE_CO_OP)) + texts(drain_browser(b, BROWSE_CO_OP))
            assert sorted(int(t) for t in got) == list(range(1500)), (
                "nothing consumed: the windows must widen"
            )


def test_B04_a_quick_dispatcher_claims_more_at_a_time_unless_claim_batch_is_set(
    factory, qname, interval
) -> None:
    """Claims are what a handle holds beyond what it returned: claim_batch=16 claims 16 at a
    time; the default starts at 16 and doubles while the handle hands its claims out quickly."""
    interval(-1)
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        fill(ctx, q, 200)
        held = {}
        for claim_batch in (16, None):
            with ctx.create_marking_browser(q, cooperative=True, claim_batch=claim_batch) as dispatcher:
                for _ in range(49):  # the 49th get needs a 4th claim
                    dispatcher.get(BROWSE_CO_OP)
                with ctx.create_marking_browser(q, cooperative=True, claim_batch=1) as other:
                    held[claim_batch] = 200 - len(drain_browser(other, BROWSE_CO_OP))
        assert held[16] == 4 * 16
        assert held[None] > 4 * 16, f"the default claims grew: {held[None]} held (16 + 32 + 64 = 112)"


def test_B02_browse_next_walks_the_cursor_and_ends_with_2033(ctx, qname) -> None:
    q = ctx.create_queue(qname)
    bodies = fill(ctx, q, 4)
    with ctx.create_marking_browser(q) as h:
        assert h.get(BROWSE_FIRST).get_text() == bodies[0]
        assert h.get(BROWSE_FIRST).get_text() == bodies[0], "BROWSE_FIRST alone starts again"
        assert [h.get(BROWSE_NEXT).get_text() for _ in range(3)] == bodies[1:]
        with pytest.raises(NoMessageAvailable):
            h.get(BROWSE_NEXT)
        ctx.create_producer().send(q, "new")
        assert h.get(BROWSE_NEXT).get_text() == "new", "the cursor sees what arrived after it"


def test_B04_cooperating_handles_share_marks_across_connections(factory, qname) -> None:
    with factory.create_context() as a_ctx, factory.create_context() as b_ctx:
        q = a_ctx.create_queue(qname)
        bodies = fill(a_ctx, q, 40)
        a = a_ctx.create_marking_browser(q, cooperative=True, claim_batch=3)
        b = b_ctx.create_marking_browser(q, cooperative=True, claim_batch=3)
        loner = b_ctx.create_marking_browser(q)  # not cooperating: co-op marks are not its business
        got_a, got_b = [], []
        while True:
            ma, mb = a.get_or_none(BROWSE_CO_OP), b.get_or_none(BROWSE_CO_OP)
            got_a += texts([ma] if ma else [])
            got_b += texts([mb] if mb else [])
            if ma is None and mb is None:
                break
        assert got_a and got_b
        assert not set(got_a) & set(got_b)
        assert sorted(got_a + got_b) == sorted(bodies)
        assert len(drain_browser(loner, BROWSE_HANDLE)) == 40
        a.close()
        b.close()


def test_B07_receive_by_token_gets_exactly_that_message(ctx, qname) -> None:
    q = ctx.create_queue(qname)
    bodies = fill(ctx, q, 10)
    consumer = ctx.create_consumer(q)  # an ordinary consumer, made first: it must not hoard the queue
    with ctx.create_marking_browser(q, cooperative=True) as h:
        ms = drain_browser(h, BROWSE_CO_OP)
        seventh = ms[6]
        got = consumer.receive_by_token(seventh.get_message_token())
        assert got.get_text() == bodies[6] and got.get_message_token() == seventh.get_message_token()
        with pytest.raises(NoMessageAvailable) as e:
            consumer.receive_by_token(seventh.get_message_token(), 200)
        assert e.value.reason == 2033 and seventh.get_message_token() in str(e.value)
        several = consumer.receive_by_tokens(
            [ms[1].get_message_token(), ms[3].get_message_token(), seventh.get_message_token()], 500
        )
        assert sorted(texts(several)) == [bodies[1], bodies[3]], "gone ones are left out"
    rest = []
    while (m := consumer.receive(300)) is not None:
        rest.append(m.get_text())
    assert rest == [b for i, b in enumerate(bodies) if i not in (1, 3, 6)], "ordinary receive still works"


def test_B07_a_token_read_before_the_headers_is_the_id_the_headers_carry(ctx, qname) -> None:
    # get_message_token reads only the message id off the wire record; it must be the same
    # token as the one the fully decoded headers give
    q = ctx.create_queue(qname)
    ctx.create_producer().set_property("kind", "order").set_jms_correlation_id("c-1").send(q, "t")
    with ctx.create_browser(q) as browser:
        browsed = next(iter(browser))
    token = browsed.get_message_token()  # nothing else of it decoded yet
    assert token and token == browsed.wire_headers()["message_id"] == browsed.get_message_token()
    assert browsed.get_string_property("kind") == "order" and browsed.get_jms_correlation_id() == "c-1"
    assert ctx.create_consumer(q).receive_by_token(token).get_text() == "t"


def test_B07_bad_tokens_are_refused_by_name(ctx, qname) -> None:
    q = ctx.create_queue(qname)
    consumer = ctx.create_consumer(q)
    for bad in ("", "abc", None, 42):
        with pytest.raises(InvalidArgumentRuntimeException, match="message token"):
            consumer.receive_by_token(bad)  # type: ignore[arg-type]
    with pytest.raises(NoMessageAvailable):
        consumer.receive_by_token("ID:no-such-message:1:1:1:1", 100)


def test_B08_backed_out_get_is_unmarked_and_dispatched_again(factory, qname, interval) -> None:
    interval(-1)  # only the backout can unmark it
    with factory.create_context() as b_ctx, factory.create_context(pyjms.SESSION_TRANSACTED) as work:
        q = b_ctx.create_queue(qname)
        fill(b_ctx, q, 3)
        dispatcher = b_ctx.create_marking_browser(q, cooperative=True, claim_batch=1)
        other = b_ctx.create_marking_browser(q, cooperative=True, claim_batch=1)
        first = dispatcher.get(BROWSE_CO_OP)
        got = work.create_consumer(q).receive_by_token(first.get_message_token())
        assert got.get_text() == first.get_text()
        work.rollback()
        deadline = time.monotonic() + 5
        seen = []
        while time.monotonic() < deadline:
            m = other.get_or_none(BROWSE_CO_OP)
            if m is not None:
                seen.append(m.get_text())
                if m.get_text() == first.get_text():
                    break
        assert first.get_text() in seen, "a backed-out get leaves the message unmarked for the set"
        again = work.create_consumer(q).receive_by_token(first.get_message_token())
        assert again.get_jms_redelivered()
        work.commit()
        assert first.get_text() not in texts(drain_browser(other, BROWSE_CO_OP)), "committed: gone for good"
        dispatcher.close()
        other.close()


def test_B09_B05_a_mark_never_got_lapses_after_the_interval_in_real_time(
    factory, url, qname, interval
) -> None:
    interval(400)
    with factory.create_context() as a_ctx, factory.create_context() as b_ctx:
        q = a_ctx.create_queue(qname)
        fill(a_ctx, q, 1)
        a = a_ctx.create_marking_browser(q, cooperative=True)
        b = b_ctx.create_marking_browser(q, cooperative=True)
        assert a.get_mark_browse_interval() == 400 and mark_browse_interval(factory) == 400
        marked_at = time.monotonic()
        m = a.get(BROWSE_CO_OP)
        assert b.get_or_none(BROWSE_CO_OP) is None, "marked for the set"
        again = b.get(BROWSE_CO_OP, wait_ms=3000)
        waited = time.monotonic() - marked_at
        assert again.get_message_token() == m.get_message_token()
        assert 0.35 <= waited < 3.0, f"came back after {waited:.2f} s for a 400 ms interval"
        a.close()
        b.close()
    if url.startswith("tcp://"):  # the command line reads it back too (a vm:// URL is this process's only)
        out = subprocess.run(
            [sys.executable, "-m", "pyjms", "mark-interval", "--url", url],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert out.stdout.strip() == "MsgMarkBrowseInterval 400", out.stderr


def test_B06_closing_a_handle_releases_its_marks(factory, qname, interval) -> None:
    interval(-1)
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        fill(ctx, q, 5)
        a = ctx.create_marking_browser(q, cooperative=True)
        b = ctx.create_marking_browser(q, cooperative=True)
        assert a.get(BROWSE_CO_OP) is not None
        assert b.get_or_none(BROWSE_CO_OP) is None, "a claimed the whole queue (claim_batch 16)"
        a.close()
        assert len(drain_browser(b, BROWSE_CO_OP)) == 5
        b.close()


def test_B04_unmark_for_the_set_makes_it_available_to_the_others(factory, qname, interval) -> None:
    interval(-1)
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        fill(ctx, q, 2)
        a = ctx.create_marking_browser(q, cooperative=True, claim_batch=1)
        b = ctx.create_marking_browser(q, cooperative=True, claim_batch=1)
        m = a.get(BROWSE_CO_OP)
        a.unmark(m, UNMARK_BROWSE_CO_OP)
        assert sorted(texts(drain_browser(b, BROWSE_CO_OP))) == sorted([m.get_text(), f"{qname}-1"])
        a.close()
        b.close()


def test_B10_different_dispatchers_each_with_a_subset_cooperate_in_one_set(factory, qname) -> None:
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        p = ctx.create_producer()
        for i in range(60):
            p.set_property("kind", "ab"[i % 2]).send(q, f"{i}")
        only_a = ctx.create_marking_browser(q, "kind = 'a'", cooperative=True, claim_batch=4)
        only_b = ctx.create_marking_browser(q, "kind = 'b'", cooperative=True, claim_batch=4)
        anything = ctx.create_marking_browser(q, cooperative=True, claim_batch=4)
        got: dict[str, list[str]] = {"a": [], "b": [], "any": []}
        while True:
            round_ = [
                (k, h.get_or_none(BROWSE_CO_OP)) for k, h in (("a", only_a), ("b", only_b), ("any", anything))
            ]
            for k, m in round_:
                if m is not None:
                    got[k].append(m.get_text())
            if all(m is None for _, m in round_):
                break
        assert all(int(t) % 2 == 0 for t in got["a"]) and all(int(t) % 2 == 1 for t in got["b"])
        everything = got["a"] + got["b"] + got["any"]
        assert sorted(everything, key=int) == [str(i) for i in range(60)], "each message to exactly one"
        for h in (only_a, only_b, anything):
            h.close()


def test_marking_browser_bad_input(ctx, qname) -> None:
    q = ctx.create_queue(qname)
    with pytest.raises(InvalidArgumentRuntimeException, match="needs a Queue"):
        ctx.create_marking_browser(ctx.create_topic(qname))  # type: ignore[arg-type]
    for bad_batch in (0, 1001, True, "16"):
        with pytest.raises(InvalidArgumentRuntimeException, match="claim_batch"):
            ctx.create_marking_browser(q, claim_batch=bad_batch)  # type: ignore[arg-type]
    h = ctx.create_marking_browser(q)
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        h.get(BROWSE_CO_OP)
    assert e.value.reason == 2046
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        h.unmark("ID:x", UNMARK_BROWSE_CO_OP)
    assert e.value.reason == 2046
    with pytest.raises(InvalidArgumentRuntimeException, match="wait_ms"):
        h.get(BROWSE_HANDLE, wait_ms=-1)
    h.close()
    with pytest.raises(IllegalStateRuntimeException, match="closed"):
        h.get(BROWSE_HANDLE)
    with pyjms.ConnectionFactory(ctx.factory.url).create_context(pyjms.CLIENT_ACKNOWLEDGE) as client_ack:
        with pytest.raises(IllegalStateRuntimeException, match="receive_by_token needs"):
            client_ack.create_consumer(q).receive_by_token("ID:x")
