"""Topics: plain, durable, and JMS 2.0 shared subscriptions (emulated on ActiveMQ, native on Artemis)."""

from __future__ import annotations

import uuid

import pytest

import pyjms
from tests.conftest import drain, provider_of

# provider-independent: each test runs on ActiveMQ Classic and on Apache Artemis
pytestmark = pytest.mark.providers("activemq", "artemis")


def test_every_topic_subscriber_gets_each_message(ctx, qname):
    t = ctx.create_topic(qname)
    subs = [ctx.create_consumer(t) for _ in range(2)]
    ctx.create_producer().send(t, "news")
    assert [s.receive(5000).get_text() for s in subs] == ["news", "news"]


def test_no_local_skips_own_messages(factory, qname):
    with factory.create_context() as mine, factory.create_context() as other:
        t = mine.create_topic(qname)
        local = mine.create_consumer(t, no_local=True)
        mine.create_producer().send(t, "from me")
        other.create_producer().send(t, "from other")
        assert [m.get_text() for m in drain(local)] == ["from other"]


def test_durable_subscription_keeps_messages_while_away(url, qname):
    client_id = f"cid-{uuid.uuid4().hex[:8]}"
    cf = pyjms.ConnectionFactory(url, client_id=client_id)
    with cf.create_context() as ctx:
        t = ctx.create_topic(qname)
        ctx.create_durable_consumer(t, "sub").close()
        ctx.create_producer().send(t, "while away")
    with cf.create_context() as ctx:
        c = ctx.create_durable_consumer(ctx.create_topic(qname), "sub")
        assert c.receive(5000).get_text() == "while away"
        c.close()
        ctx.unsubscribe("sub")


def test_durable_consumer_without_client_id_is_an_illegal_state(ctx, qname):
    try:
        ctx.create_durable_consumer(ctx.create_topic(qname), "sub")
    except pyjms.IllegalStateRuntimeException as e:
        assert "client id" in str(e)
    else:
        raise AssertionError("no error without a client id")


def test_shared_consumers_split_one_subscription(factory, qname):
    with factory.create_context() as a, factory.create_context() as b, factory.create_context() as plain:
        t = a.create_topic(qname)
        ca = a.create_shared_consumer(t, "workers")
        cb = b.create_shared_consumer(t, "workers")
        listener = plain.create_consumer(t)
        plain.create_producer().send_batch(t, [str(i) for i in range(40)])
        got_a, got_b = drain(ca), drain(cb)
        texts = sorted(int(m.get_text()) for m in got_a + got_b)
        assert texts == list(range(40))  # each message to exactly one shared consumer
        assert len(drain(listener)) == 40  # while ordinary subscribers get them all
        ca.close()
        cb.close()


def test_shared_durable_subscription_outlives_its_consumers(factory, qname):
    with factory.create_context() as ctx:
        t = ctx.create_topic(qname)
        ctx.create_shared_durable_consumer(t, "keep").close()
        ctx.create_producer().send(t, "kept")
        c = ctx.create_shared_durable_consumer(t, "keep")
        assert c.receive(5000).get_text() == "kept"


def test_shared_subscription_names_are_checked(url, ctx, qname):
    if provider_of(url) == "artemis":  # provider-specific: Artemis's client has shared subscriptions itself
        c = ctx.create_shared_consumer(ctx.create_topic(qname), "a.b")
        ctx.create_producer().send(ctx.create_topic(qname), "dotted names are fine")
        assert c.receive(5000).get_text() == "dotted names are fine"
        return
    # ActiveMQ Classic: emulated on queue Consumer.<name>.<topic>, so a name may not hold a dot
    try:
        ctx.create_shared_consumer(ctx.create_topic(qname), "a.b")
    except pyjms.InvalidDestinationRuntimeException as e:
        assert "a.b" in str(e)
    else:
        raise AssertionError("a dotted subscription name was accepted")
