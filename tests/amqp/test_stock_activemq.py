"""A stock ActiveMQ Classic broker (not started by pyjms) through its AMQP connector.

ActiveMQ Classic offers DELAYED_DELIVERY over AMQP whether or not its scheduler runs, and
without the scheduler it delivers delayed messages at once. So on a broker pyjms did not start,
``auto`` tries a delayed message before it believes the offer (at the first delayed send): with
the scheduler the client's own delay is chosen, without it (and with no pyjms delay processor)
a delayed send is refused with MQRC_FUNCTION_NOT_SUPPORTED (D04) instead of being silently
ignored.
"""

from __future__ import annotations

import contextlib
import time

import pytest

import pyjms
from pyjms import MQRC
from tests.amqp.conftest import stock_broker

# A stock broker runs in a process of its own: stopping an ActiveMQ broker in the test process
# would stop transport threads that the other brokers in it share.
STOCK_BROKER = """
import sys
from pyjms.bridge import jvm

name, scheduler = sys.argv[1], sys.argv[2] == "on"
broker = jvm.start().jclass("org.apache.activemq.broker.BrokerService")()
broker.setBrokerName(name)
broker.setPersistent(False)
broker.setUseJmx(False)
broker.setSchedulerSupport(scheduler)
connector = broker.addConnector("amqp://127.0.0.1:0?transport.transformer=jms")
broker.start()
broker.waitUntilStarted()
print(f"ready amqp://127.0.0.1:{connector.getConnectUri().getPort()}", flush=True)
sys.stdin.read()  # until the test closes our stdin
broker.stop()
"""


def stock_activemq(name: str, scheduler: bool) -> contextlib.AbstractContextManager[str]:
    """A BrokerService configured as a user would, with only an AMQP connector; yields its URL."""
    return stock_broker(STOCK_BROKER, name, "on" if scheduler else "off")


def test_delay_is_refused_not_ignored_when_the_scheduler_is_off(qname: str) -> None:
    with (
        stock_activemq("stock-no-scheduler", scheduler=False) as url,
        pyjms.ConnectionFactory(url).create_context() as ctx,
    ):
        q = ctx.create_queue(qname)
        # set_delivery_delay makes no broker round trip: auto resolves at the first delayed send
        delayed = ctx.create_producer().set_delivery_delay(1000)
        with pytest.raises(pyjms.NotSupportedRuntimeException) as refused:
            delayed.send(q, "later")
        assert refused.value.reason == MQRC.FUNCTION_NOT_SUPPORTED
        with ctx.create_consumer(q) as consumer:  # nothing was sent; undelayed messaging is unaffected
            ctx.create_producer().send(q, "now")
            got = consumer.receive(10_000)
            assert got is not None and got.get_body() == "now"
            assert consumer.receive(1500) is None


def test_delay_is_native_and_real_when_the_scheduler_runs(qname: str) -> None:
    with (
        stock_activemq("stock-with-scheduler", scheduler=True) as url,
        pyjms.ConnectionFactory(url).create_context() as ctx,
    ):
        q = ctx.create_queue(qname)
        with ctx.create_consumer(q) as consumer:
            sent = ctx.create_text_message("later")
            ctx.create_producer().set_time_to_live(20_000).set_delivery_delay(1500).send(q, sent)
            assert consumer.receive(500) is None
            got = consumer.receive(15_000)
            received_at = int(time.time() * 1000)
        assert got is not None and received_at >= sent.get_jms_delivery_time()
        assert got.get_jms_delivery_time() == sent.get_jms_delivery_time()
        assert got.get_jms_expiration() == sent.get_jms_timestamp() + 20_000
