"""The session a read that removes what it read all at once consumes in (the Spark consume
read): each provider's choice, and what it promises on each: nothing read is removed before
the read's end, everything read goes back if the session closes first."""

from __future__ import annotations

import pytest

import pyjms
from tests.conftest import drain

# the session mode each provider's plug-in chose by measurement (docs/performance.md): one
# CLIENT_ACKNOWLEDGE session acknowledged at the end is faster on ActiveMQ (OpenWire and AMQP)
# and on Artemis's core client; through Qpid JMS to Artemis one transaction is
PEERS = {
    "activemq": ("tcp_broker", "tcp_url", pyjms.CLIENT_ACKNOWLEDGE),
    "amqp-activemq": ("tcp_broker", "amqp_url", pyjms.CLIENT_ACKNOWLEDGE),
    "artemis": ("artemis_tcp_broker", "tcp_url", pyjms.CLIENT_ACKNOWLEDGE),
    "amqp-artemis": ("artemis_tcp_broker", "amqp_url", pyjms.SESSION_TRANSACTED),
}


def end(ctx: pyjms.JMSContext) -> None:
    """How a bulk read ends (pyjms.spark.batch_read): commit, or acknowledge."""
    if ctx.get_transacted():
        ctx.commit()
    else:
        ctx.acknowledge()


@pytest.mark.parametrize("peer", PEERS)
def test_a_bulk_read_removes_what_it_read_at_its_end_and_nothing_before(request, peer, qname):
    broker, attribute, mode = PEERS[peer]
    url = getattr(request.getfixturevalue(broker), attribute)
    factory = pyjms.ConnectionFactory(url)
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        producer = ctx.create_producer()
        for i in range(5):
            producer.send(q, f"m{i}")
        # a read that does not get to its end gives back everything it read
        failed = factory.provider.bulk_read_context(factory)
        assert failed.get_session_mode() == mode
        consumer = failed.create_consumer(q)
        assert [consumer.receive(5000).get_text() for _ in range(3)] == ["m0", "m1", "m2"]
        failed.close()
        # one that does removes exactly what it read, once it has ended
        read = factory.provider.bulk_read_context(factory)
        consumer = read.create_consumer(q)
        got = [consumer.receive(5000) for _ in range(4)]
        assert [m.get_text() for m in got] == ["m0", "m1", "m2", "m3"]
        assert all(m.get_jms_redelivered() for m in got[:3])  # given back, not removed
        end(read)
        consumer.close()
        read.close()
        assert [m.get_text() for m in drain(ctx.create_consumer(q), 1000)] == ["m4"]
