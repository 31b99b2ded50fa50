"""What pyjms takes from the AMQP peer's offered capabilities, and the broker side of AMQP.

* shared subscriptions: native where the peer offers SHARED-SUBS; where it does not, creating
  a shared consumer is refused with MQRC_FUNCTION_NOT_SUPPORTED and an error that names the
  peer (product and version from its open frame), never a consumer that receives nothing;
* the pyjms broker's AMQP listener: on its ready line, usable as printed, on 127.0.0.1 only.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import pyjms
from pyjms import MQRC
from tests.amqp.conftest import AmqpPeer
from tests.conftest import ROOT, BrokerProcess
from tests.integration.test_cli_and_brokers import _listening_addresses
from tests.ports import free_port


@pytest.mark.parametrize("durable", [False, True], ids=["shared", "shared-durable"])
def test_shared_consumer_is_native_or_refused_naming_the_peer(
    amqp_peer: AmqpPeer, qname: str, durable: bool
) -> None:
    factory = pyjms.ConnectionFactory(amqp_peer.url, client_id=f"c-{qname}" if durable else None)
    with factory.create_context() as ctx:
        topic = ctx.create_topic(qname)
        create = ctx.create_shared_durable_consumer if durable else ctx.create_shared_consumer
        if not amqp_peer.shared_subscriptions:
            with pytest.raises(pyjms.NotSupportedRuntimeException) as refused:
                create(topic, "sub")
            assert refused.value.reason == MQRC.FUNCTION_NOT_SUPPORTED
            assert amqp_peer.product in str(refused.value)  # e.g. "ActiveMQ 6.3.1"
            assert "SHARED-SUBS" in str(refused.value)
            # the context is still usable: nothing half-made was left behind
            with ctx.create_consumer(topic) as plain:
                ctx.create_producer().send(topic, "after the refusal")
                got = plain.receive(10_000)
                assert got is not None and got.get_body() == "after the refusal"
            return
        with create(topic, "sub") as one, create(topic, "sub") as two:
            for i in range(10):
                ctx.create_producer().send(topic, f"m{i}")
            got = []
            for consumer in (one, two):
                while (m := consumer.receive(1000)) is not None:
                    got.append(m.get_body())
        assert sorted(got) == sorted(f"m{i}" for i in range(10))  # each once, shared between the two
        if durable:
            ctx.unsubscribe("sub")


def test_broker_ready_line_lists_an_amqp_url_that_works_as_printed(
    tcp_broker: BrokerProcess, qname: str
) -> None:
    amqp = [u for u in tcp_broker.uris if u.startswith("amqp://")]
    assert len(amqp) == 1 and re.fullmatch(r"amqp://127\.0\.0\.1:\d+", amqp[0]), tcp_broker.uris
    with (
        pyjms.ConnectionFactory(amqp[0]).create_context() as over_amqp,
        pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as over_openwire,
    ):
        q = over_amqp.create_queue(qname)
        over_amqp.create_producer().send(q, "printed URL")
        with over_openwire.create_consumer(q) as consumer:
            got = consumer.receive(10_000)
        assert got is not None and got.get_body() == "printed URL"


def test_amqp_listener_binds_to_loopback_only(tcp_broker: BrokerProcess) -> None:
    amqp = next(u for u in tcp_broker.uris if u.startswith("amqp://"))
    addrs = _listening_addresses(int(amqp.rsplit(":", 1)[1]))
    assert addrs and addrs <= {"0100007F", "0000000000000000FFFF00000100007F"}, addrs


def test_a_bad_amqp_port_is_refused_and_the_command_offers_the_option() -> None:
    from pyjms.broker import EmbeddedBroker

    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="amqp_port 70000"):
        EmbeddedBroker(amqp_port=70000)
    out = subprocess.run(
        [sys.executable, "-m", "pyjms", "broker", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert "--amqp-port" in out.stdout


def test_qpid_options_apply_and_an_unknown_one_is_one_clear_error(amqp_peer: AmqpPeer, qname: str) -> None:
    with pyjms.ConnectionFactory(amqp_peer.url, properties={"forceSyncSend": "true"}).create_context() as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send(q, "synchronously")
        with ctx.create_consumer(q) as consumer:
            got = consumer.receive(10_000)
        assert got is not None and got.get_body() == "synchronously"
    factory = pyjms.ConnectionFactory(amqp_peer.url, properties={"noSuchOption": "1"})
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="noSuchOption"):
        factory.create_context()


def test_unreachable_amqp_peer_is_a_pyjms_error() -> None:
    url = f"amqp://127.0.0.1:{free_port()}"  # a port nothing listens on
    with pytest.raises(pyjms.JMSRuntimeException, match=re.escape(url)):
        pyjms.ConnectionFactory(url).create_context()
