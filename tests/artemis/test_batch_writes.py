"""A batch call's sends over Artemis's TCP connector are written to the socket together and
flushed at the call's end (java/.../artemis/BatchWrites.java): whatever a batch call sent is on
its way when the call returns, and nothing the client must wait for (a blocking send, a request
for producer credits) is held back with it."""

from __future__ import annotations

import asyncio

import pytest

import pyjms
import pyjms.aio as aio

#: each message must reach a consumer on another connection well within this; a send whose
#: write waited for a flush that never came would wait for the connection's next ping (30 s)
WAIT_MS = 5_000


def _with(url: str, option: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{option}"


def _received(consumer: pyjms.JMSConsumer, n: int) -> list[str]:
    got = []
    for _ in range(n):
        m = consumer.receive(WAIT_MS)
        assert m is not None, f"only {len(got)} of {n} messages arrived within {WAIT_MS} ms"
        got.append(m.get_text())
    return got


@pytest.fixture
def receiving(artemis_tcp_broker):
    with pyjms.ConnectionFactory(artemis_tcp_broker.tcp_url).create_context() as ctx:
        yield ctx


@pytest.mark.parametrize("n", [1, 3, 64, 200])
def test_every_message_of_a_batch_is_on_its_way_when_the_call_returns(
    artemis_tcp_broker, receiving, qname, n
):
    """Fewer sends than one flush covers, exactly one flush's worth, and a batch that ends
    between flushes: the context stays open, so only the call's own flush can write them."""
    bodies = [f"m{i}" for i in range(n)]
    consumer = receiving.create_consumer(receiving.create_queue(qname))
    with pyjms.ConnectionFactory(artemis_tcp_broker.tcp_url).create_context() as sending:
        producer = sending.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
        assert producer.send_batch(sending.create_queue(qname), bodies) == n
        assert _received(consumer, n) == bodies


def test_a_persistent_batch_waits_for_each_send_as_before(artemis_tcp_broker, receiving, qname):
    """Persistent sends block for the broker's answer: their writes are never held back, or the
    call would wait for its own flush."""
    bodies = [f"p{i}" for i in range(100)]
    consumer = receiving.create_consumer(receiving.create_queue(qname))
    with pyjms.ConnectionFactory(artemis_tcp_broker.tcp_url).create_context() as sending:
        producer = sending.create_producer().set_delivery_mode(pyjms.PERSISTENT)
        assert producer.send_batch(sending.create_queue(qname), bodies) == 100
        assert _received(consumer, 100) == bodies


def test_a_batch_larger_than_the_producer_window_gets_its_credits(artemis_tcp_broker, receiving, qname):
    """With a producer window of 4 KiB the client asks the broker for credits every few sends
    and waits for them in the middle of the batch call: that request is flushed at once."""
    bodies = ["x" * 100 for _ in range(500)]
    consumer = receiving.create_consumer(receiving.create_queue(qname))
    url = _with(artemis_tcp_broker.tcp_url, "producerWindowSize=4096")
    with pyjms.ConnectionFactory(url).create_context() as sending:
        producer = sending.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
        assert producer.send_batch(sending.create_queue(qname), bodies) == 500
        assert len(_received(consumer, 500)) == 500


def test_a_lone_send_after_a_batch_is_written_at_once(artemis_tcp_broker, receiving, qname):
    consumer = receiving.create_consumer(receiving.create_queue(qname))
    with pyjms.ConnectionFactory(artemis_tcp_broker.tcp_url).create_context() as sending:
        q = sending.create_queue(qname)
        producer = sending.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
        producer.send_batch(q, ["a", "b"])
        producer.send(q, "c")
        assert _received(consumer, 3) == ["a", "b", "c"]


def test_asyncio_batches_and_gathered_sends_are_on_their_way_once_awaited(
    artemis_tcp_broker, receiving, qname
):
    """pyjms.aio sends non-persistent batches and gathered sends in routed crossings, here to
    two queues: each arrives while its context stays open."""
    first = receiving.create_consumer(receiving.create_queue(qname))
    second = receiving.create_consumer(receiving.create_queue(qname + ".2"))

    async def send() -> None:
        async with aio.ConnectionFactory(artemis_tcp_broker.tcp_url).create_context() as ctx:
            producer = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
            one, two = ctx.create_queue(qname), ctx.create_queue(qname + ".2")
            await producer.send_batch(one, ["a", "b", "c"])
            await asyncio.gather(*(producer.send(q, f"g{i}") for i in range(5) for q in (one, two)))
            loop = asyncio.get_running_loop()
            # the consumers are synchronous: on another thread, with this context still open
            got_first = await loop.run_in_executor(None, _received, first, 8)
            got_second = await loop.run_in_executor(None, _received, second, 5)
            assert got_first == ["a", "b", "c"] + [f"g{i}" for i in range(5)]
            assert got_second == [f"g{i}" for i in range(5)]

    asyncio.run(send())
