"""Destination attributes (pyjms admin) and the delay restrictions that use them (D05, D22, D23)."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

import pyjms
from pyjms.broker.admin import Admin
from tests.conftest import ROOT, delay_mode, move_to_a_full_queue

# provider-independent: each test runs on ActiveMQ Classic and on Apache Artemis
pytestmark = pytest.mark.providers("activemq", "artemis")

#: "own": the provider's own delay (ActiveMQ's broker scheduler, Artemis's native delivery delay)
MODES = ["own", "staging"]


@pytest.fixture
def admin(factory):
    return Admin(factory)


def test_attributes_round_trip_and_defaults(admin, qname):
    q = pyjms.Queue(qname)
    assert admin.describe(q) is None
    a = admin.define_queue(q, max_depth=3, max_msg_length=100, clustered=True, default_bind="NOTFIXED")
    assert (a.max_depth, a.max_msg_length, a.put_enabled, a.clustered, a.default_bind) == (
        3,
        100,
        True,
        True,
        "NOTFIXED",
    )
    t = admin.define_topic(f"{qname}.T")
    assert (t.persistent_delivery, t.nonpersistent_delivery) == ("ALLDUR", "ALLAVAIL")  # IBM MQ's defaults
    admin.delete(q)
    assert admin.describe(q) is None
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="default_bind"):
        admin.define_queue(q, default_bind="SOMETIMES")


def test_broker_enforces_attributes_on_ordinary_puts(ctx, admin, qname):
    q = ctx.create_queue(qname)
    p = ctx.create_producer()
    admin.define_queue(q, max_depth=2)
    p.send(q, "1")
    p.send(q, "2")
    with pytest.raises(pyjms.ResourceAllocationRuntimeException) as e:
        p.send(q, "3")
    assert e.value.reason == 2053 and e.value.reason_name == "MQRC_Q_FULL"
    assert admin.describe(q).depth == 2
    admin.define_queue(q, put_enabled=False)
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        p.send(q, "x")
    assert e.value.reason == 2051
    admin.define_queue(q, max_msg_length=200)
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        p.send(q, "x" * 1000)
    assert e.value.reason == 2030
    admin.delete(q)
    p.send(q, "x" * 1000)


def test_a_put_to_a_full_queue_in_a_transaction_fails_the_commit_and_loses_nothing(factory, admin, qname):
    # it did not on Artemis, which committed the get alone: a DLQ handler's RETRY "succeeded"
    # and the message was lost. The refusal names the reason
    refused = move_to_a_full_queue(factory, admin, qname)
    assert refused.reason == 2053 and "MAXDEPTH 1" in str(refused)


@pytest.mark.parametrize("mode", MODES)
def test_d22_delayed_put_checks_the_target_at_send(url, admin, qname, mode):
    factory = pyjms.ConnectionFactory(
        url, delivery_delay=delay_mode(url, mode), staging_queue=f"STAGE.{uuid.uuid4().hex[:6]}"
    )
    q = pyjms.Queue(qname)

    def delayed_send_refused(body: str) -> int:
        # a context of its own: each reads a target's attributes afresh (then keeps them 1 s)
        with factory.create_context() as ctx, pytest.raises(pyjms.JMSRuntimeException) as e:
            ctx.create_producer().set_delivery_delay(60_000).send(q, body)
        return e.value.reason

    admin.define_queue(q, put_enabled=False)
    assert delayed_send_refused("x") == 2051
    admin.define_queue(q, max_msg_length=50)
    assert delayed_send_refused("x" * 100) == 2030
    admin.define_queue(q, max_depth=1)
    with factory.create_context() as ctx:
        ctx.create_producer().send(q, "fills it")
    assert delayed_send_refused("x") == 2053


@pytest.mark.parametrize("mode", MODES)
def test_d05_clustered_target_needs_notfixed_bind(url, admin, qname, mode):
    factory = pyjms.ConnectionFactory(
        url, delivery_delay=delay_mode(url, mode), staging_queue=f"STAGE.{uuid.uuid4().hex[:6]}"
    )
    q = pyjms.Queue(qname)
    admin.define_queue(q, clustered=True, default_bind="OPEN")
    with factory.create_context() as ctx:
        with pytest.raises(pyjms.JMSRuntimeException) as e:
            ctx.create_producer().set_delivery_delay(60_000).send(q, "x")
        assert e.value.reason == 2046 and "DEFBIND" in str(e.value)
    admin.define_queue(q, clustered=True, default_bind="NOTFIXED")
    with factory.create_context() as ctx:
        ctx.create_producer().set_delivery_delay(60_000).send(q, "fine")


@pytest.mark.parametrize("mode", MODES)
def test_d23_delayed_publish_needs_allavail(url, admin, qname, mode):
    factory = pyjms.ConnectionFactory(
        url, delivery_delay=delay_mode(url, mode), staging_queue=f"STAGE.{uuid.uuid4().hex[:6]}"
    )
    t = pyjms.Topic(qname)
    admin.define_topic(t)  # IBM MQ's defaults: PMSGDLV(ALLDUR) NPMSGDLV(ALLAVAIL)
    with factory.create_context() as ctx:
        p = ctx.create_producer().set_delivery_delay(60_000)
        with pytest.raises(pyjms.JMSRuntimeException) as e:
            p.set_delivery_mode(pyjms.PERSISTENT).send(t, "x")
        assert e.value.reason == 2502 and e.value.reason_name == "MQRC_PUBLICATION_FAILURE"
        p.set_delivery_mode(pyjms.NON_PERSISTENT).send(t, "allowed: NPMSGDLV(ALLAVAIL)")


def test_cli_admin_defines_and_describes(tcp_broker, qname):
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "pyjms", "admin", "--url", tcp_broker.tcp_url, *a],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    out = run("define-queue", qname, "--max-depth", "5", "--put", "disabled")
    assert out.returncode == 0, out.stderr
    assert "max_depth=5" in out.stdout and "put_enabled=False" in out.stdout
    out = run("describe", f"queue://{qname}")
    assert "max_depth=5" in out.stdout
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        with pytest.raises(pyjms.JMSRuntimeException) as e:
            ctx.create_producer().send(ctx.create_queue(qname), "x")
        assert e.value.reason == 2051
