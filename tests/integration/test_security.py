"""Users and access rules on the embedded broker; D11 and D13 for delayed messages."""

from __future__ import annotations

import uuid

import pytest

import pyjms
from pyjms.broker import AccessRule, EmbeddedBroker
from pyjms.broker.admin import Admin
from pyjms.rules.attributes import QueueAttributes


@pytest.fixture(scope="module")
def secured():
    users = {"alice": ("alice-pw", ["senders", "readers"]), "bob": ("bob-pw", ["readers"])}
    access = [
        AccessRule("ORDERS.>", read=["readers"], write=["senders"], admin=["senders", "readers"]),
        AccessRule("PUBLIC.>", read=["readers"], write=["senders", "readers"], admin=["senders", "readers"]),
    ]
    broker = EmbeddedBroker(name=f"pyjms-secured-{uuid.uuid4().hex[:6]}", users=users, access=access)
    yield broker
    broker.stop()


def test_unknown_user_and_wrong_password_are_security_errors(secured):
    with pytest.raises(pyjms.JMSSecurityRuntimeException):
        pyjms.ConnectionFactory(secured.vm_url, "mallory", "x").create_context()
    with pytest.raises(pyjms.JMSSecurityRuntimeException):
        pyjms.ConnectionFactory(secured.vm_url, "alice", "wrong").create_context()


def test_access_rules_allow_and_refuse_puts(secured):
    with pyjms.ConnectionFactory(secured.vm_url, "alice", "alice-pw").create_context() as alice:
        alice.create_producer().send(alice.create_queue("ORDERS.A"), "from alice")
    with pyjms.ConnectionFactory(secured.vm_url, "bob", "bob-pw").create_context() as bob:
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            bob.create_producer().send(bob.create_queue("ORDERS.A"), "bob may not")
        assert bob.create_consumer(bob.create_queue("ORDERS.A")).receive(5000).get_text() == "from alice"


@pytest.mark.parametrize("mode", ["scheduler", "staging"])
def test_d11_delayed_send_is_authorised_against_the_target_at_send(secured, mode):
    bob = pyjms.ConnectionFactory(secured.vm_url, "bob", "bob-pw", delivery_delay=mode)
    with bob.create_context() as ctx:
        p = ctx.create_producer().set_delivery_delay(500)
        with pytest.raises(pyjms.JMSSecurityRuntimeException) as e:
            p.send(ctx.create_queue("ORDERS.B"), "not allowed")
        assert "ORDERS.B" in str(e.value)
        p.send(ctx.create_queue("PUBLIC.B"), "allowed")
        assert ctx.create_consumer(ctx.create_queue("PUBLIC.B")).receive(5000).get_text() == "allowed"


def test_d13_staging_queue_is_for_the_processor_only(secured):
    with pyjms.ConnectionFactory(secured.vm_url, "alice", "alice-pw").create_context() as alice:
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            alice.create_consumer(alice.create_queue("SYSTEM.DDELAY.LOCAL.QUEUE")).receive(100)


def test_every_user_reads_attributes_but_only_the_broker_defines_them(secured):
    # a delayed send checks IBM MQ's rules against the target's attributes: every signed-in user
    # may ask for them; defining or deleting them is the broker owner's (MQRC_NOT_AUTHORIZED)
    limited = pyjms.Queue("PUBLIC.LIMITED")
    secured.admin.define(limited, QueueAttributes(put_enabled=False))  # the broker owner, in process
    bob = pyjms.ConnectionFactory(secured.vm_url, "bob", "bob-pw", delivery_delay="staging")
    with bob.create_context() as ctx:
        with pytest.raises(pyjms.JMSRuntimeException) as refused:
            ctx.create_producer().set_delivery_delay(500).send(limited, "no")
        assert refused.value.reason == 2051  # MQRC_PUT_INHIBITED, read from the admin service
    with pytest.raises(pyjms.JMSSecurityRuntimeException, match="'bob' may not define") as e:
        Admin(bob).define_queue("PUBLIC.LIMITED", put_enabled=True)
    assert e.value.reason == 2035
    with pytest.raises(pyjms.JMSSecurityRuntimeException, match="'bob' may not delete"):
        Admin(bob).delete(limited)
    assert secured.admin.describe(limited).put_enabled is False
