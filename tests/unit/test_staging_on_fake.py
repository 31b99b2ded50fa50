"""Delivery delay through IBM MQ's staging queue (pyjms.delay.staging, spec 002) on the fake
broker: what a delayed send puts on SYSTEM.DDELAY.LOCAL.QUEUE instead of its target, and
what the sender sees (D02, D10, D12, D17). The delay processor's own work is tested with
brokers in tests/integration and tests/faults."""

from __future__ import annotations

import pytest

from pyjms import SESSION_TRANSACTED, ConnectionFactory, TextMessage
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from tests.fakes.channel import FakeBroker
from tests.fakes.provider import fake_factory

STAGING = contract.STAGING_QUEUE


@pytest.fixture
def factory(broker: FakeBroker) -> ConnectionFactory:
    """The fake broker's factory, delaying through the staging queue."""
    return fake_factory(broker, delivery_delay="staging")


def test_d02_d12_a_delayed_message_is_staged_with_its_target_and_a_new_id(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    message = TextMessage("later")
    message.set_jms_correlation_id("mine")
    message.set_string_property("app", "a")
    with factory.create_context() as ctx:
        ctx.create_producer().set_delivery_delay(60_000).set_time_to_live(120_000).send(
            ctx.create_queue("T"), message
        )
    assert broker.queue("T") == []  # not on the target
    (staged,) = broker.queue(STAGING)
    props = {name: value for name, (_, value) in staged.properties.items()}
    original_id = message.get_jms_message_id()
    assert original_id is not None and original_id.startswith("ID:")
    # D12: the staged message's correlation id is the original id; the sender's travels apart
    assert staged.correlation_id == original_id != staged.message_id
    assert props[contract.MESSAGE_ID] == original_id
    assert props[contract.STAGED_TARGET] == "queue://T"
    assert props[contract.STAGED_CORRELATION_ID] == "mine" and props["app"] == "a"
    sent_at = props[contract.SEND_TIME]
    assert props[contract.DELIVERY_TIME] == sent_at + 60_000
    assert props[contract.STAGED_EXPIRATION] == sent_at + 120_000  # D17: counted from the send
    assert staged.expiration == 0  # the processor expires it, with a report (D18)
    # the sender sees the original message's headers
    assert message.get_jms_timestamp() == sent_at and message.get_jms_delivery_time() == sent_at + 60_000


def test_a_message_without_a_delay_goes_straight_to_its_target(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    with factory.create_context() as ctx:
        ctx.create_producer().send(ctx.create_queue("T"), "now")
    assert [m.text() for m in broker.queue("T")] == ["now"] and broker.queue(STAGING) == []


def test_d10_a_delayed_message_sent_in_a_transaction_is_staged_at_commit(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    with factory.create_context(SESSION_TRANSACTED) as tx:
        tx.create_producer().set_delivery_delay(1000).send(tx.create_queue("T"), "later")
        assert broker.queue(STAGING) == []
        tx.commit()
    assert len(broker.queue(STAGING)) == 1


def test_every_staged_message_of_a_batch_gets_its_own_original_id(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    with factory.create_context() as ctx:
        ctx.create_producer().set_delivery_delay(1000).send_batch(ctx.create_queue("T"), ["a", "b"])
    staged = broker.queue(STAGING)
    assert [m.text() for m in staged] == ["a", "b"]
    ids = {m.properties[contract.MESSAGE_ID] for m in staged}
    assert len(ids) == 2 and {m.correlation_id for m in staged} == {v for _, v in ids}
    assert all(m.properties[contract.MESSAGE_ID][0] == C.T_STRING for m in staged)
