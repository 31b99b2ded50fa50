"""Delivery delay over AMQP 1.0 with the client's own mechanism (Qpid JMS), where the peer
offers DELAYED_DELIVERY, and every message really held until its delivery time (what ``auto``
chooses on each peer: test_conformance).

ActiveMQ Classic offers DELAYED_DELIVERY by handing the message to its scheduler, which
restamps the message when it fires; pyjms keeps the send time, the delivery time and the
exact expiration across that, so what the receiver sees is what the sender set (D17).
"""

from __future__ import annotations

import time

import pytest

import pyjms
from tests.amqp.conftest import AmqpPeer

DELAY = 1500


def _now_ms() -> int:
    return int(time.time() * 1000)


def test_d01_delayed_message_is_held_until_its_delivery_time(amqp: pyjms.JMSContext, qname: str) -> None:
    q = amqp.create_queue(qname)
    with amqp.create_consumer(q) as consumer:
        sent = amqp.create_text_message("later")
        sent.set_long_property("seq", 1)
        amqp.create_producer().set_delivery_delay(DELAY).send(q, sent)
        assert sent.get_jms_delivery_time() == sent.get_jms_timestamp() + DELAY
        assert consumer.receive(DELAY // 3) is None
        got = consumer.receive(DELAY * 10)
        received_at = _now_ms()
    assert got is not None and got.get_body() == "later"
    assert received_at >= sent.get_jms_delivery_time()
    # the headers at the receiver are the sender's, though a scheduler may have resent it
    assert got.get_jms_delivery_time() == sent.get_jms_delivery_time()
    assert got.get_jms_timestamp() == sent.get_jms_timestamp()
    assert got.get_jms_message_id() == sent.get_jms_message_id()
    assert got.get_long_property("seq") == 1


def test_d01_batch_with_a_delay_is_held_and_undelayed_sends_are_not(
    amqp: pyjms.JMSContext, qname: str
) -> None:
    q = amqp.create_queue(qname)
    with amqp.create_consumer(q) as consumer:
        amqp.create_producer().set_delivery_delay(DELAY).send_batch(q, ["d1", "d2"])
        amqp.create_producer().send(q, "now")
        first = consumer.receive(5000)
        assert first is not None and first.get_body() == "now"
        assert consumer.receive(DELAY // 3) is None
        later = [consumer.receive(DELAY * 10) for _ in range(2)]
    assert sorted(m.get_body() for m in later if m is not None) == ["d1", "d2"]


def test_d10_delayed_message_sent_in_a_transaction_waits_for_the_commit(
    amqp_peer: AmqpPeer, qname: str
) -> None:
    factory = pyjms.ConnectionFactory(amqp_peer.url, delivery_delay="native")
    with factory.create_context(pyjms.SESSION_TRANSACTED) as tx, factory.create_context() as reader:
        q = tx.create_queue(qname)
        with reader.create_consumer(q) as consumer:
            p = tx.create_producer().set_delivery_delay(500)
            p.send(q, "rolled back")
            tx.rollback()
            sent = tx.create_text_message("committed")
            p.send(q, sent)
            time.sleep(1.0)  # past its delivery time, but not committed
            assert consumer.receive(300) is None
            tx.commit()
            got = consumer.receive(10_000)
            received_at = _now_ms()
            assert got is not None and got.get_body() == "committed"
            assert received_at >= sent.get_jms_delivery_time()
            assert consumer.receive(1500) is None  # the rolled-back one never comes


def test_d17_expiry_counts_from_the_send_not_from_the_end_of_the_delay(
    amqp: pyjms.JMSContext, qname: str
) -> None:
    q = amqp.create_queue(qname)
    with amqp.create_consumer(q) as consumer:
        sent = amqp.create_text_message("x")
        amqp.create_producer().set_time_to_live(20_000).set_delivery_delay(DELAY).send(q, sent)
        got = consumer.receive(DELAY * 10)
    assert got is not None
    assert sent.get_jms_expiration() == sent.get_jms_timestamp() + 20_000
    assert got.get_jms_expiration() == sent.get_jms_expiration()
    left = got.get_remaining_expiry()  # tenths of a second, counted from the send
    assert 0 < left <= (20_000 - DELAY) // 100 + 1


def test_delay_equal_to_ttl_expires_rather_than_arrives_late(amqp: pyjms.JMSContext, qname: str) -> None:
    q = amqp.create_queue(qname)
    with amqp.create_consumer(q) as consumer:
        amqp.create_producer().set_time_to_live(500).set_delivery_delay(500).send(q, "x")
        assert consumer.receive(3000) is None


def test_delayed_amqp_send_read_over_the_native_protocol_keeps_its_times(
    amqp: pyjms.JMSContext, native: pyjms.JMSContext, qname: str
) -> None:
    q = amqp.create_queue(qname)
    with native.create_consumer(q) as consumer:
        sent = amqp.create_text_message("over AMQP, delayed")
        sent.set_jms_correlation_id("corr-delayed")
        sent.set_jms_type("delayed")
        sent.set_short_property("pShort", 7)
        amqp.create_producer().set_priority(2).set_time_to_live(30_000).set_delivery_delay(DELAY).send(
            q, sent
        )
        assert consumer.receive(DELAY // 3) is None
        got = consumer.receive(DELAY * 10)
        received_at = _now_ms()
    assert got is not None and got.get_body() == "over AMQP, delayed"
    assert received_at >= sent.get_jms_delivery_time()
    assert got.get_jms_delivery_time() == sent.get_jms_delivery_time()
    assert got.get_jms_expiration() == sent.get_jms_timestamp() + 30_000
    assert got.get_jms_correlation_id() == "corr-delayed" and got.get_jms_type() == "delayed"
    assert got.get_jms_priority() == 2 and got.get_short_property("pShort") == 7


def test_delayed_native_send_read_over_amqp_keeps_its_times(
    amqp: pyjms.JMSContext, native: pyjms.JMSContext, qname: str
) -> None:
    q = native.create_queue(qname)
    with amqp.create_consumer(q) as consumer:
        sent = native.create_text_message("over the native protocol, delayed")
        sent.set_jms_correlation_id("corr-native")
        sent.set_jms_type("delayed")
        sent.set_byte_property("pByte", -1)
        native.create_producer().set_priority(9).set_time_to_live(30_000).set_delivery_delay(DELAY).send(
            q, sent
        )
        assert consumer.receive(DELAY // 3) is None
        got = consumer.receive(DELAY * 10)
        received_at = _now_ms()
    assert got is not None and got.get_body() == "over the native protocol, delayed"
    assert received_at >= sent.get_jms_delivery_time()
    assert got.get_jms_delivery_time() == sent.get_jms_delivery_time()
    assert got.get_jms_timestamp() == sent.get_jms_timestamp()
    assert got.get_jms_expiration() == sent.get_jms_timestamp() + 30_000
    assert got.get_jms_correlation_id() == "corr-native" and got.get_jms_type() == "delayed"
    assert got.get_jms_priority() == 9 and got.get_byte_property("pByte") == -1


def test_staging_chosen_explicitly_works_over_amqp(amqp_peer: AmqpPeer, qname: str) -> None:
    """IBM MQ's design on any provider: the staging queue and the pyjms delay processor."""
    if not amqp_peer.staging:
        pytest.skip(f"no pyjms delay processor serves {amqp_peer.product}")
    factory = pyjms.ConnectionFactory(amqp_peer.url, delivery_delay="staging")
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        with ctx.create_consumer(q) as consumer:
            sent = ctx.create_text_message("staged")
            ctx.create_producer().set_time_to_live(30_000).set_delivery_delay(DELAY).send(q, sent)
            assert consumer.receive(DELAY // 3) is None
            got = consumer.receive(DELAY * 10)
            received_at = _now_ms()
    assert got is not None and got.get_body() == "staged"
    assert received_at >= sent.get_jms_delivery_time()
    assert got.get_jms_message_id() == sent.get_jms_message_id()  # the original id (D12)
    assert got.get_jms_expiration() == sent.get_jms_timestamp() + 30_000


def test_a_delayed_send_to_a_temporary_queue_through_staging_arrives(amqp_peer: AmqpPeer) -> None:
    """ActiveMQ Classic's AMQP connector names a temporary queue by its address,
    temp-queue://ID:...; its key was that scheme twice over, which the delay processor (on the
    broker's own protocol) could not find, and dead-lettered the message (2085)."""
    if not amqp_peer.staging:
        pytest.skip(f"no pyjms delay processor serves {amqp_peer.product}")
    factory = pyjms.ConnectionFactory(amqp_peer.url, delivery_delay="staging")
    with factory.create_context() as ctx:
        q = ctx.create_temporary_queue()
        assert q.key.count("://") == 1, q.key
        with ctx.create_consumer(q) as consumer:
            sent = ctx.create_text_message("to a temporary queue")
            ctx.create_producer().set_delivery_delay(300).send(q, sent)
            got = consumer.receive(10_000)
    assert got is not None and got.get_body() == "to a temporary queue"
    assert got.get_jms_message_id() == sent.get_jms_message_id()


def test_e03_a_browse_never_shows_an_expired_message(amqp: pyjms.JMSContext, qname: str) -> None:
    """A message the client delayed itself and that expired since: Artemis holds it until its
    reaper runs, and Qpid JMS's browser shows what the broker holds."""
    q = amqp.create_queue(qname)
    producer = amqp.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT).set_delivery_delay(100)
    producer.set_time_to_live(300).send(q, "short")
    producer.set_time_to_live(0).send(q, "long")
    time.sleep(0.6)
    with amqp.create_browser(q) as browser:
        assert [m.get_text() for m in browser] == ["long"]
    with amqp.create_consumer(q) as consumer:
        got = consumer.receive(2000)
        assert got is not None and got.get_text() == "long"


def test_scheduler_forced_over_amqp_refuses_a_delay_rather_than_failing_at_send(amqp_peer: AmqpPeer) -> None:
    """Qpid JMS has no broker-scheduler property to set: a forced ``scheduler`` is no mechanism."""
    with pyjms.ConnectionFactory(amqp_peer.url, delivery_delay="scheduler").create_context() as ctx:
        with pytest.raises(pyjms.NotSupportedRuntimeException) as refused:
            ctx.create_producer().set_delivery_delay(1000)
        assert refused.value.reason_name == "MQRC_FUNCTION_NOT_SUPPORTED"
