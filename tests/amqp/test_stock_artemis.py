"""A stock Artemis broker (not started by pyjms) through its AMQP acceptor, beside a pyjms one.

Over AMQP pyjms knows a pyjms Artemis broker by the ``pyjms-broker`` property of the open frame
it answers with (its container id is its node id, a UUID, as on any Artemis). A stock Artemis
sends no such property, whatever its name, so it is not taken for pyjms's: pyjms asks nothing
of an admin service there before a durable subscription or a send (were it taken for one, each
would wait for the service's answer, then fail), and its subscribers carry no address.
"""

from __future__ import annotations

import uuid

import pyjms
from tests.amqp.conftest import AmqpPeer, stock_broker
from tests.conftest import drain

# A stock broker runs in a process of its own, configured as a user would: only an AMQP acceptor,
# none of pyjms's queues, plugins or services. Its name starts with "pyjms", as a pyjms broker's
# does: a name is not what tells them apart.
STOCK_BROKER = """
import sys
from pyjms.bridge import jvm

s = jvm.start(providers=("artemis",))
cfg = s.jclass("org.apache.activemq.artemis.core.config.impl.ConfigurationImpl")()
cfg.setName(sys.argv[1])
cfg.setPersistenceEnabled(False)
cfg.setSecurityEnabled(False)
cfg.setJMXManagementEnabled(False)
cfg.addAcceptorConfiguration("amqp", "tcp://127.0.0.1:0?protocols=AMQP")
broker = s.jclass("org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ")()
broker.setConfiguration(cfg)
broker.start()
port = broker.getActiveMQServer().getRemotingService().getAcceptor("amqp").getActualPort()
print(f"ready amqp://127.0.0.1:{port}", flush=True)
sys.stdin.read()  # until the test closes our stdin
broker.stop()
"""


def test_a_stock_artemis_is_not_taken_for_a_pyjms_one(artemis_process: AmqpPeer) -> None:
    with stock_broker(STOCK_BROKER, "pyjms-lookalike") as url:
        factory = pyjms.ConnectionFactory(url, delivery_delay="native", client_id=f"c{uuid.uuid4().hex[:8]}")
        with factory.create_context() as ctx:
            topic = ctx.create_topic(f"STOCK.{uuid.uuid4().hex[:8]}")
            plain = ctx.create_consumer(topic)
            durable = ctx.create_durable_consumer(topic, "stock")
            assert not ctx.provider.on_pyjms_broker(ctx)
            assert ctx.provider.shared_consumer_selector(ctx, topic, "s", False, None) is None
            ctx.create_producer().send(topic, "to both")
            assert [m.get_text() for m in drain(plain, 2000)] == ["to both"]
            assert [m.get_text() for m in drain(durable, 500)] == ["to both"]
            durable.close()
            ctx.unsubscribe("stock")
    # the same questions over AMQP to a pyjms Artemis broker
    with pyjms.ConnectionFactory(artemis_process.url, delivery_delay="native").create_context() as ctx:
        topic = ctx.create_topic(f"PYJMS.{uuid.uuid4().hex[:8]}")
        assert ctx.provider.on_pyjms_broker(ctx)
        assert ctx.provider.shared_consumer_selector(ctx, topic, "s", False, None) is not None
