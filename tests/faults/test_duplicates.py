"""Duplicate-free resending after a commit whose outcome is unknown (issue 15, section 4).

A batch is sent with a duplicate id per message, its commit loses its answer (the broker did
commit; tests/faults/proxy.py loses the answer and cuts the connection), and the batch is sent
again with the same ids over a new connection, as an application that cannot know better must.
Each message must then reach a pyjms receiver once: Apache Artemis drops the resend at the
broker (over core and AMQP), and says so by refusing the resend's commit; ActiveMQ Classic
keeps both copies, and pyjms's receiver drops the resent ones (pyjms.api.duplicates).
"""

from __future__ import annotations

import re
import uuid

import pytest

import pyjms
from tests.conftest import drain, take_batches
from tests.faults.proxy import AnswerLosingProxy

#: provider -> (the broker fixture, the URL scheme it is reached by, whether the broker drops)
PROVIDERS = {
    "activemq": ("tcp_broker", "tcp", False),
    "artemis": ("artemis_tcp_broker", "artemis+tcp", True),
    "amqp-artemis": ("artemis_tcp_broker", "amqp", True),
}


@pytest.fixture(params=list(PROVIDERS))
def provider(request: pytest.FixtureRequest):
    fixture, scheme, broker_drops = PROVIDERS[request.param]
    broker = request.getfixturevalue(fixture)
    port = int(re.search(r":(\d+)", broker.tcp_url).group(1))  # Artemis: core and AMQP share it
    proxy = AnswerLosingProxy(port)
    yield proxy, f"{scheme}://127.0.0.1:{proxy.port}", f"{scheme}://127.0.0.1:{port}", broker_drops
    proxy.close()


def _texts(messages) -> list[str]:
    return sorted(m.get_text() for m in messages)


def test_a_batch_resent_after_an_in_doubt_commit_arrives_once(provider):
    proxy, proxied_url, url, broker_drops = provider
    q = f"DEDUP.{uuid.uuid4().hex[:8]}"
    bodies = [f"m{i}" for i in range(20)]
    ids = [f"{q}:{i}" for i in range(20)]  # deterministic: the resend gets the same ids

    ctx = pyjms.ConnectionFactory(proxied_url).create_context(pyjms.SESSION_TRANSACTED)
    try:
        ctx.create_producer().send_batch(ctx.create_queue(q), bodies, duplicate_ids=ids)
        proxy.lose_answers()
        proxy.cut_after_next_request(1.0)
        with pytest.raises(pyjms.TransactionInDoubtRuntimeException):
            ctx.commit()
    finally:
        ctx.close()

    # the documented answer to an in-doubt commit: send the same batch, with the same ids, again
    with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as again:
        again.create_producer().send_batch(again.create_queue(q), bodies, duplicate_ids=ids)
        if broker_drops:
            # the broker took these ids in the first commit, so it refuses the resend as a whole
            with pytest.raises(pyjms.DuplicateRejectedRuntimeException) as refused:
                again.commit()
            assert isinstance(refused.value, pyjms.TransactionRolledBackRuntimeException)
        else:
            again.commit()

    with pyjms.ConnectionFactory(url).create_context() as check:
        queue = check.create_queue(q)
        with check.create_browser(queue) as browser:
            on_queue = list(browser)
        got = drain(check.create_consumer(queue), 1000)
    # where the copies were dropped: by the broker (Artemis), or by pyjms's receiver (Classic)
    assert len(on_queue) == (20 if broker_drops else 40)
    assert _texts(got) == sorted(bodies)
    assert sorted(m.get_duplicate_id() for m in got) == sorted(ids)


def test_a_rolled_back_message_is_redelivered_and_only_its_resend_is_dropped(tcp_broker):
    """On a broker without duplicate detection the receiver tells a redelivery (the same
    message id: handed over again, as JMS requires) from a resend (a new message id: dropped)."""
    q = f"DEDUP.{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(tcp_broker.tcp_url)
    with factory.create_context() as ctx:
        for _ in range(2):  # the first send, then its resend
            m = pyjms.TextMessage("once")
            m.set_duplicate_id(f"{q}:0")
            ctx.create_producer().send(ctx.create_queue(q), m)
    with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(q))
        first = consumer.receive(2000)
        ctx.rollback()
        again = consumer.receive(2000)
        assert again.get_jms_message_id() == first.get_jms_message_id() and again.get_jms_redelivered()
        assert consumer.receive(500) is None  # the resend: consumed with the transaction, not handed over
        ctx.commit()
    with factory.create_context() as ctx:
        with ctx.create_browser(ctx.create_queue(q)) as browser:
            assert list(browser) == []
        consumer = ctx.create_consumer(ctx.create_queue(q)).set_drop_resends(False)
        assert consumer.receive(300) is None


def test_receive_batch_passes_over_a_batch_of_resends(tcp_broker):
    """A batch that holds only resends is not an empty queue: receive_batch goes on to what follows."""
    q = f"DEDUP.{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(tcp_broker.tcp_url)
    with factory.create_context() as ctx:
        queue, producer = ctx.create_queue(q), ctx.create_producer()
        producer.send_batch(queue, ["x", "y"], duplicate_ids=[f"{q}:x", f"{q}:y"])
        producer.send_batch(queue, ["x", "y"], duplicate_ids=[f"{q}:x", f"{q}:y"])  # the resend
        producer.send(queue, "z")
        consumer = ctx.create_consumer(queue)
        first = take_batches(consumer, 2, 2000)  # a loaded broker may hand over x before y is dispatched
        rest = consumer.receive_batch(2, 2000)  # the two resends are dropped: z is next
        assert [m.get_text() for m in first] == ["x", "y"] and [m.get_text() for m in rest] == ["z"]
        assert consumer.receive_batch(10, 300) == []


@pytest.mark.parametrize("bad", ["", "x" * 1025, 5, b"id", "\ud800"])
def test_a_duplicate_id_is_a_non_empty_string_of_at_most_1024_bytes(bad):
    with pytest.raises(pyjms.JMSRuntimeException) as refused:
        pyjms.TextMessage("m").set_duplicate_id(bad)
    assert isinstance(refused.value, (ValueError, TypeError))


def test_send_batch_needs_one_duplicate_id_per_body(tcp_broker):
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="2 duplicate ids for 3 bodies"):
            ctx.create_producer().send_batch(
                ctx.create_queue("DEDUP.UNUSED"), ["a", "b", "c"], duplicate_ids=["1", "2"]
            )
