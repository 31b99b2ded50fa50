"""IBM MQ's expiry rules (spec 000/001) on a real broker: E04, E05, E09, E11, E12."""

from __future__ import annotations

import time

import pytest

import pyjms
from pyjms.broker.admin import Admin

# provider-independent: each test runs on ActiveMQ Classic and on Apache Artemis
pytestmark = pytest.mark.providers("activemq", "artemis")


def test_e04_e05_a_get_discards_the_expired_messages_before_the_first_unexpired(ctx, qname):
    q = ctx.create_queue(qname)
    p = ctx.create_producer()
    p.set_time_to_live(200).send_batch(q, ["old-1", "old-2", "old-3"])
    p.set_time_to_live(0).send(q, "alive")
    time.sleep(0.5)
    consumer = ctx.create_consumer(q)
    got = consumer.receive(2000)
    assert got.get_text() == "alive"
    assert got.get_remaining_expiry() == pyjms.MQEI_UNLIMITED  # E05: never an expired one
    assert consumer.receive(300) is None  # the expired ones are gone, not behind it


def test_e04_on_a_priority_queue_expired_messages_of_higher_priority_go_first(ctx, qname):
    q = ctx.create_queue(qname)  # pyjms brokers deliver by priority, as IBM MQ's default does
    p = ctx.create_producer()
    p.set_priority(4).set_time_to_live(0).send(q, "low, alive")
    p.set_priority(9).set_time_to_live(200).send(q, "high, expired")
    time.sleep(0.5)
    consumer = ctx.create_consumer(q)
    assert consumer.receive(2000).get_text() == "low, alive"
    assert consumer.receive(300) is None


def test_e09_expired_messages_still_count_towards_the_depth(factory, qname):
    admin = Admin(factory)
    q = pyjms.Queue(qname)
    admin.define_queue(q, max_depth=2)
    with factory.create_context() as ctx:
        ctx.create_producer().set_time_to_live(200).send_batch(q, ["a", "b"])
        time.sleep(0.5)  # both expired, neither discarded yet: nobody has looked
        assert admin.describe(q).depth == 2
        try:
            ctx.create_producer().send(q, "c")
            raise AssertionError("a put to a queue full of expired messages was accepted")
        except pyjms.JMSRuntimeException as e:
            assert e.reason == 2053  # MQRC_Q_FULL
        # a get discards them (E03), which frees the queue
        assert ctx.create_consumer(q).receive(300) is None
        ctx.create_producer().send(q, "d")
    admin.delete(q)


def test_e11_a_backed_out_message_may_expire_before_it_is_got_again(factory, qname):
    with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().set_time_to_live(600).send(q, "nearly expired")
        ctx.commit()
        consumer = ctx.create_consumer(q)
        assert consumer.receive(2000).get_text() == "nearly expired"
        time.sleep(0.8)
        ctx.rollback()
        assert consumer.receive(500) is None


def test_e12_a_browsed_message_that_expires_before_the_get_is_no_longer_under_the_cursor(ctx, qname):
    from pyjms.browse import NoMessageAvailable, NoMessageUnderCursor

    q = ctx.create_queue(qname)
    p = ctx.create_producer()
    p.set_time_to_live(400).send(q, "short-lived")
    p.set_time_to_live(0).send(q, "lasting")
    with ctx.create_marking_browser(q) as browser:
        short, lasting = browser.get(), browser.get()
        time.sleep(0.6)
        consumer = ctx.create_consumer(q)
        with pytest.raises(NoMessageUnderCursor) as expired:
            consumer.receive_by_token(short.get_message_token(), 300)
        assert expired.value.reason == 2034 and short.get_message_token() in str(expired.value)
        assert consumer.receive_by_token(lasting.get_message_token()).get_text() == "lasting"
        with pytest.raises(NoMessageAvailable) as gone:  # got already: gone, not expired
            consumer.receive_by_token(lasting.get_message_token(), 300)
        assert gone.value.reason == 2033
