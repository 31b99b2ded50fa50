"""Delivery delay with IBM MQ's rules (spec 002): on ActiveMQ's broker scheduler, and natively on Artemis."""

from __future__ import annotations

import time

import pytest

import pyjms
from pyjms import MQRC
from pyjms.delay import delay_mechanism
from pyjms.delay.mechanism import DelayMechanism, scheduler_works
from pyjms.delay.policy import delay_policy
from tests.conftest import provider_of

# provider-independent: each test runs on ActiveMQ Classic and on Apache Artemis
# Artemis in-vm too: the embedded Artemis broker is a supported way in (vm://N)
pytestmark = [pytest.mark.providers("activemq", "artemis"), pytest.mark.artemis_in_vm]

DELAY = 1500
#: how far apart a client's own readings of the clock for one send's headers may be
CLOCK_READS_MS = 50


def test_mechanism_is_resolved_once_per_factory_at_the_first_delayed_send(url, factory, ctx, qname):
    policy = delay_policy(factory)
    ctx.create_producer().set_delivery_delay(DELAY)
    assert policy.known_mechanism(ctx) is None  # the setter asked the broker nothing (issue 13, item 8)
    ctx.create_producer().set_delivery_delay(DELAY).send(ctx.create_queue(qname), "resolves it")
    if provider_of(url) == "artemis":  # provider-specific: Artemis's client has JMS 2.0 setDeliveryDelay
        expected = DelayMechanism.NATIVE
    else:  # ActiveMQ Classic's client has no native delay; a pyjms broker's delay processor
        # answers, and staging is later by less than the broker's scheduler (issue 17)
        expected = DelayMechanism.STAGING
    with factory.create_context() as other:  # the factory's, not the context's
        assert policy.known_mechanism(other) is expected
        assert delay_mechanism(other) is expected
    # the scheduler probe itself, against the real broker: ActiveMQ's scheduler runs too
    assert scheduler_works(ctx) is (provider_of(url) != "artemis")


def test_d01_message_is_held_until_send_time_plus_delay(ctx, qname):
    q = ctx.create_queue(qname)
    consumer = ctx.create_consumer(q)
    m = ctx.create_text_message("later")
    sent_at = int(time.time() * 1000)
    ctx.create_producer().set_delivery_delay(DELAY).send(q, m)
    assert consumer.receive(DELAY // 3) is None
    got = consumer.receive(DELAY * 5)
    received_at = int(time.time() * 1000)
    assert got is not None and got.get_text() == "later"
    assert received_at - sent_at >= DELAY - 50
    # the delivery time is right at the receiver, over vm:// and tcp:// alike
    assert abs(got.get_jms_delivery_time() - (got.get_jms_timestamp() + DELAY)) <= 50
    assert got.get_jms_message_id() == m.get_jms_message_id()


def test_d01_batches_and_undelayed_sends_are_unaffected(ctx, qname):
    q = ctx.create_queue(qname)
    consumer = ctx.create_consumer(q)
    delayed = ctx.create_producer().set_delivery_delay(DELAY)
    delayed.send_batch(q, ["d1", "d2"])
    ctx.create_producer().send(q, "now")  # same session, no delay
    assert consumer.receive(2000).get_text() == "now"
    assert consumer.receive(DELAY // 3) is None
    assert sorted(m.get_text() for m in (consumer.receive(DELAY * 5), consumer.receive(DELAY * 5))) == [
        "d1",
        "d2",
    ]


def test_d06_ttl_below_delay_fails_in_whichever_call_completes_the_pair(ctx):
    p = ctx.create_producer().set_time_to_live(1000)
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        p.set_delivery_delay(2000)
    assert e.value.reason == MQRC.EXPIRY_ERROR
    assert e.value.values == {"delivery_delay": 2000, "time_to_live": 1000}
    assert p.get_delivery_delay() == 0
    p = ctx.create_producer().set_delivery_delay(2000)
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        p.set_time_to_live(1000)
    assert e.value.reason == 2013 and p.get_time_to_live() == 0
    p.set_time_to_live(0)  # unlimited is fine
    p.set_time_to_live(2000)  # equal is fine


def test_d07_retained_publication_cannot_be_delayed(ctx, qname):
    m = ctx.create_text_message("retained")
    m.set_int_property("JMS_IBM_RETAIN", 1)
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        ctx.create_producer().set_delivery_delay(DELAY).send(ctx.create_topic(qname), m)
    assert e.value.reason == MQRC.OPTIONS_ERROR and e.value.reason_name == "MQRC_OPTIONS_ERROR"


def test_d08_grouped_message_cannot_be_delayed(ctx, qname):
    q = ctx.create_queue(qname)
    p = ctx.create_producer().set_delivery_delay(DELAY).set_property("JMSXGroupID", "g1")
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        p.send(q, "grouped")
    assert e.value.reason == 2046 and "g1" in str(e.value)
    with pytest.raises(pyjms.JMSRuntimeException):
        p.send_batch(q, ["grouped"])
    assert ctx.create_consumer(q).receive(DELAY * 2) is None  # nothing was sent


def test_d10_delayed_message_in_a_transaction_is_staged_only_at_commit(factory, qname):
    with factory.create_context(pyjms.SESSION_TRANSACTED) as tx:
        q = tx.create_queue(qname)
        consumer = tx.create_consumer(q)
        p = tx.create_producer().set_delivery_delay(500)
        p.send(q, "rolled back")
        tx.rollback()
        p.send(q, "committed")
        time.sleep(1.0)
        assert consumer.receive(200) is None  # the sender cannot get its own uncommitted message
        tx.commit()
        got = consumer.receive(5000)
        assert got is not None and got.get_text() == "committed"
        tx.commit()
        assert consumer.receive(1500) is None


def test_d17_expiry_counts_from_the_send_not_the_end_of_the_delay(ctx, qname):
    q = ctx.create_queue(qname)
    ctx.create_producer().set_time_to_live(5000).set_delivery_delay(DELAY).send(q, "x")
    got = ctx.create_consumer(q).receive(DELAY * 5)
    # send time + TTL, not + the delay. Provider-specific: Artemis's client reads the clock once
    # for JMSExpiration and again, a moment later, for JMSTimestamp, so the two may be 1-2 ms short
    assert 0 <= 5000 - (got.get_jms_expiration() - got.get_jms_timestamp()) <= CLOCK_READS_MS
    left = got.get_remaining_expiry()
    assert 0 < left <= (5000 - DELAY) // 100 + 1  # tenths of a second, counted from the send


def test_delay_equal_to_ttl_expires_rather_than_delivers_late(ctx, qname):
    q = ctx.create_queue(qname)
    ctx.create_producer().set_time_to_live(300).set_delivery_delay(300).send(q, "x")
    assert ctx.create_consumer(q).receive(1500) is None  # never delivered after its expiry


def test_e13_reply_copies_the_remaining_expiry(factory, qname):
    with factory.create_context() as client, factory.create_context() as server:
        replies = client.create_temporary_queue()
        q = client.create_queue(qname)
        client.create_producer().set_time_to_live(10_000).set_jms_reply_to(replies).send(q, "request")
        request = server.create_consumer(q).receive(5000)
        time.sleep(0.3)
        p = server.create_producer()
        before = time.time()
        p.send_reply(request, "copied")
        took_ms = (time.time() - before) * 1000
        p.send_reply(request, "unlimited", expiry="unlimited")
        p.send_reply(request, "explicit", expiry=2000)
        c = client.create_consumer(replies)
        copied, unlimited, explicit = (c.receive(5000) for _ in range(3))
        assert copied.get_jms_correlation_id() == request.get_jms_message_id()
        # copied in tenths at the reply's send: the copy's expiration is the request's, give or
        # take a tenth, plus what the clock moved between reading the remaining expiry and
        # stamping the copy, which is within the send_reply call (270 ms once on a loaded
        # 2-core machine). A copy of the lifetime itself would be 300 ms later (the sleep)
        later_by = copied.get_jms_expiration() - request.get_jms_expiration()
        assert -100 <= later_by <= took_ms + 100, (later_by, took_ms)
        # read later, the copy has no more time left than the request, within that same time
        assert copied.get_remaining_expiry() <= request.get_remaining_expiry() + 1 + took_ms // 100
        assert unlimited.get_remaining_expiry() == pyjms.MQEI_UNLIMITED
        assert 0 < explicit.get_remaining_expiry() <= 20
        assert p.get_time_to_live() == 0 and p.get_jms_correlation_id() is None  # producer unchanged


def test_e03_browse_never_shows_an_expired_message(ctx, qname):
    q = ctx.create_queue(qname)
    p = ctx.create_producer()
    p.set_time_to_live(300).set_delivery_delay(100).send(q, "short")  # carried expiration (scheduler)
    p.set_time_to_live(0).set_delivery_delay(100).send(q, "long")
    time.sleep(0.6)
    with ctx.create_browser(q) as b:
        assert [m.get_text() for m in b] == ["long"]
