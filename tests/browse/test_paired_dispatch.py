"""A cooperative browser paired with its consumer (MarkingBrowser.dispatch_to): gets by token
through a consumer kept per claim, exactly the messages asked for, and never at the cost of the
caller's transaction. On brokers where pyjms cannot tell whether a transaction has begun
(Artemis), every get takes the ordinary way: the same assertions hold."""

from __future__ import annotations

import pytest

import pyjms
from pyjms.browse import BROWSE_CO_OP

pytestmark = pytest.mark.providers("activemq", "artemis")


def fill(ctx: pyjms.JMSContext, q: pyjms.Queue, n: int) -> list[str]:
    bodies = [f"{q.name}-{i}" for i in range(n)]
    ctx.create_producer().send_batch(q, bodies)
    return bodies


def dispatch(browser, n: int) -> list:
    got = []
    while len(got) < n and (m := browser.get_or_none(BROWSE_CO_OP)) is not None:
        got.append(m)
    return got


def test_B07_a_paired_dispatcher_gets_exactly_what_it_dispatched_over_many_claims(factory, qname) -> None:
    with factory.create_context() as browse_ctx, factory.create_context(pyjms.SESSION_TRANSACTED) as work:
        q = browse_ctx.create_queue(qname)
        bodies = fill(browse_ctx, q, 700)  # several claims: 16, 32, 64... up to 256 at a time
        consumer = work.create_consumer(q)
        browser = browse_ctx.create_marking_browser(q, cooperative=True).dispatch_to(consumer)
        handled: list[str] = []
        while dispatched := dispatch(browser, 10):
            tokens = [m.get_message_token() for m in dispatched]
            got = consumer.receive_by_tokens(tokens, 2000)
            assert [m.get_message_token() for m in got] == tokens
            work.commit()
            handled += [m.get_text() for m in got]
        browser.close()
        assert sorted(handled) == sorted(bodies) and len(handled) == len(set(handled))
        assert consumer.receive(200) is None, "nothing left behind"


def test_B07_a_message_gone_before_its_get_leaves_the_others_exact(factory, qname) -> None:
    """A message a consumer outside the set takes after the browse: the kept consumer is sent
    the next claimed message instead, which nobody asked for. That get is undone and made the
    ordinary way: the gone one is left out, the one not asked for stays on the queue."""
    with (
        factory.create_context() as browse_ctx,
        factory.create_context(pyjms.SESSION_TRANSACTED) as work,
        factory.create_context() as outsider,
    ):
        q = browse_ctx.create_queue(qname)
        bodies = fill(browse_ctx, q, 40)
        consumer = work.create_consumer(q)
        browser = browse_ctx.create_marking_browser(q, cooperative=True).dispatch_to(consumer)
        first = dispatch(browser, 10)
        tokens = [m.get_message_token() for m in first]
        taken = outsider.create_consumer(q).receive_by_token(tokens[0], 2000)
        assert taken.get_text() == bodies[0]
        got = consumer.receive_by_tokens(tokens, 2000)
        assert [m.get_message_token() for m in got] == tokens[1:], "exactly those still there"
        work.commit()
        handled = [m.get_text() for m in got]
        while dispatched := dispatch(browser, 10):
            more = consumer.receive_by_tokens([m.get_message_token() for m in dispatched], 2000)
            assert len(more) == len(dispatched)
            work.commit()
            handled += [m.get_text() for m in more]
        browser.close()
        assert sorted(handled) == sorted(bodies[1:]) and len(handled) == len(set(handled))


def test_B07_a_paired_get_never_rolls_back_work_already_in_the_transaction(factory, qname) -> None:
    """The same gone message, with a send already in the consumer's transaction: the get must
    not undo the send (it takes the ordinary way), and the commit delivers it."""
    with (
        factory.create_context() as browse_ctx,
        factory.create_context(pyjms.SESSION_TRANSACTED) as work,
        factory.create_context() as outsider,
    ):
        q = browse_ctx.create_queue(qname)
        out = browse_ctx.create_queue(qname + ".OUT")
        fill(browse_ctx, q, 20)
        consumer = work.create_consumer(q)
        browser = browse_ctx.create_marking_browser(q, cooperative=True).dispatch_to(consumer)
        tokens = [m.get_message_token() for m in dispatch(browser, 10)]
        outsider.create_consumer(q).receive_by_token(tokens[0], 2000)
        work.create_producer().send(out, "sent before the get")
        got = consumer.receive_by_tokens(tokens, 2000)
        assert [m.get_message_token() for m in got] == tokens[1:]
        work.commit()
        sent = outsider.create_consumer(out).receive(2000)
        assert sent is not None and sent.get_text() == "sent before the get"
        browser.close()


def test_dispatch_to_bad_input(ctx, qname) -> None:
    q = ctx.create_queue(qname)
    with ctx.create_marking_browser(q) as own:
        with pytest.raises(pyjms.IllegalStateRuntimeException, match="cooperative=True"):
            own.dispatch_to(ctx.create_consumer(q))
    with ctx.create_marking_browser(q, cooperative=True) as co_op:
        with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="JMSConsumer"):
            co_op.dispatch_to("consumer")  # type: ignore[arg-type]
