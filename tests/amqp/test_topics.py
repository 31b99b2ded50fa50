"""Topics over AMQP 1.0, with subscribers of both protocols on one broker: plain and durable
subscriptions, and delayed publications matched to the subscribers that exist at the send (IBM
MQ's D16) on a pyjms broker, which addresses them whatever the subscriber's protocol."""

from __future__ import annotations

import time
import uuid

import pytest

import pyjms
from tests.amqp.conftest import AmqpPeer
from tests.conftest import drain


def _texts(consumer: pyjms.JMSConsumer, expected: int) -> list[str]:
    """The texts of the next ``expected`` messages (each waited for), and of any more that
    arrive within a short wait after them."""
    got = [consumer.receive(10_000) for _ in range(expected)]
    return [m.get_text() for m in got if m is not None] + [m.get_text() for m in drain(consumer, 300)]


def _skip_in_process_peer(request: pytest.FixtureRequest) -> None:
    # KNOWN BUG (closing note, session 5): run after the other tests/amqp modules in one
    # process, Qpid JMS's createConsumer on a topic of the in-process ActiveMQ broker's AMQP
    # connector gets no answer (the test passes on its own); the broker process peer runs it
    if request.node.callspec.params.get("amqp_peer") == "activemq_in_process":
        pytest.skip("known hang of topic consumers on the in-process AMQP connector after other AMQP tests")


def test_plain_and_durable_amqp_subscribers_with_an_openwire_one(
    amqp_peer: AmqpPeer, native: pyjms.JMSContext, request: pytest.FixtureRequest
) -> None:
    _skip_in_process_peer(request)
    factory = pyjms.ConnectionFactory(amqp_peer.url, client_id=f"c{uuid.uuid4().hex[:8]}")
    with factory.create_context() as ctx:
        topic = ctx.create_topic(f"AMQP.T.{uuid.uuid4().hex[:8]}")
        plain = ctx.create_consumer(topic)
        durable = ctx.create_durable_consumer(topic, "dur")
        with native.create_consumer(topic) as other:
            ctx.create_producer().send(topic, "one")
            native.create_producer().send(topic, "two")
            for c in (plain, durable, other):
                assert sorted(_texts(c, 2)) == ["one", "two"]
        durable.close()
        ctx.create_producer().send(topic, "while away")
        durable = ctx.create_durable_consumer(topic, "dur")
        assert _texts(durable, 1) == ["while away"]
        durable.close()
        ctx.unsubscribe("dur")


@pytest.mark.parametrize("mechanism", ["native", "staging"])
def test_delayed_publication_reaches_each_subscriber_of_the_send_once(
    amqp_peer: AmqpPeer, native: pyjms.JMSContext, mechanism: str, request: pytest.FixtureRequest
) -> None:
    _skip_in_process_peer(request)
    if mechanism == "staging" and not amqp_peer.staging:
        pytest.skip(f"no pyjms delay processor serves {amqp_peer.product}")
    factory = pyjms.ConnectionFactory(
        amqp_peer.url, delivery_delay=mechanism, client_id=f"c{uuid.uuid4().hex[:8]}"
    )
    with factory.create_context() as ctx:
        topic = ctx.create_topic(f"AMQP.D16.{uuid.uuid4().hex[:8]}")
        plain = ctx.create_consumer(topic)
        durable = ctx.create_durable_consumer(topic, "d16")
        other = native.create_consumer(topic)
        sent = ctx.create_text_message("later")
        ctx.create_producer().set_delivery_delay(1000).send(topic, sent)
        late = ctx.create_consumer(topic)
        for c in (plain, durable, other):
            got = c.receive(10_000)
            assert got is not None and got.get_text() == "later"
            # staged, a copy is sent by the delay processor, carrying the sender's JMSMessageID for
            # pyjms's receivers, whichever protocol they use
            native_send = mechanism == "native" and c is other
            got_id = amqp_peer.sent_id_as_native_sees_it(got) if native_send else got.get_jms_message_id()
            assert got_id == sent.get_jms_message_id()
            assert int(time.time() * 1000) >= sent.get_jms_delivery_time()
            assert drain(c, 300) == []  # once
        # matched at the send, as IBM MQ does (D16): through staging, Artemis's own delay, and
        # ActiveMQ's scheduler (one delayed copy per subscriber of the send)
        assert _texts(late, 0) == []
        other.close()
        durable.close()
        ctx.unsubscribe("d16")
