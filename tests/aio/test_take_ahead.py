"""receive_batch takes the next batch ahead where receives may read ahead (pyjms.aio.consumer
JMSConsumer._take_ahead): in an AUTO or DUPS_OK context on its only consumer, and in a
CLIENT_ACKNOWLEDGE context on its provider's individual acknowledge mode. A receive_batch in a
loop then finds its batch on the loop. Every message reaches a caller once and in order, a
receive cancelled while the take ahead is on its way takes nothing, nothing taken ahead is
acknowledged before a caller got it, and a close hands back what no receive got."""

from __future__ import annotations

import asyncio

import pytest

import pyjms
import pyjms.aio as aio
from tests.aio.conftest import ARRIVES_MS, received, run

pytestmark = pytest.mark.providers("activemq", "artemis")

MODES = [
    pytest.param(pyjms.AUTO_ACKNOWLEDGE, id="auto"),
    pytest.param(pyjms.DUPS_OK_ACKNOWLEDGE, id="dups_ok"),
    pytest.param(pyjms.CLIENT_ACKNOWLEDGE, id="client"),
]


async def _sent(afactory: aio.ConnectionFactory, q: pyjms.Queue, bodies: list[str]) -> None:
    async with afactory.create_context() as other:
        await other.create_producer().send_batch(q, bodies)


async def _batches_until_one_is_held(consumer: aio.JMSConsumer, bodies: list[str], size: int) -> list[str]:
    """receive_batch(size) until the consumer holds messages taken ahead once a batch was
    returned (the take ahead lands on its own, without another call); the bodies received.
    What the provider holds when the worker takes ahead depends on the machine's pace, so each
    batch after the first waits a little for it; at least one batch of ``bodies`` must be left
    when one is held."""
    got: list[str] = []
    while True:
        batch = await consumer.receive_batch(size, ARRIVES_MS)
        assert batch, f"no batch came after {len(got)} of {len(bodies)} messages"
        got += [m.get_text() for m in batch]
        for _ in range(40):  # the take ahead is on its way to the loop: up to 2 s
            if consumer.kept_count():
                assert got == bodies[: len(got)]
                return got
            await asyncio.sleep(0.05)
        assert len(got) < len(bodies) - size, "no take ahead held a batch"


@pytest.mark.parametrize("mode", MODES)
def test_a_receive_batch_loop_gets_the_batches_taken_ahead_each_message_once_in_order(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 121)]
        async with afactory.create_context(mode) as ctx:
            q = ctx.create_queue(qname)
            await _sent(afactory, q, bodies)
            consumer = await ctx.create_consumer(q)
            got = await _batches_until_one_is_held(consumer, bodies, 10)
            while len(got) < len(bodies):
                batch = await consumer.receive_batch(10, ARRIVES_MS)
                assert batch, f"message {len(got) + 1} of {len(bodies)} did not arrive"
                assert len(batch) <= 10
                got += [m.get_text() for m in batch]
            assert got == bodies
            assert await consumer.receive_batch(10, 300) == []
            await ctx.acknowledge()  # CLIENT_ACKNOWLEDGE (ignored in the other modes)
            await consumer.close()
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_receive_batches_cancelled_while_a_take_ahead_is_on_its_way_take_nothing(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    """After each batch a receive_batch is started and cancelled at once, often while the take
    ahead the batch started is still on its way to the loop: it takes nothing, and the next
    receive_batch gets what the take ahead held."""

    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 121)]
        async with afactory.create_context(mode) as ctx:
            q = ctx.create_queue(qname)
            await _sent(afactory, q, bodies)
            consumer = await ctx.create_consumer(q)
            got: list[str] = []
            while len(got) < len(bodies):
                batch = await consumer.receive_batch(7, ARRIVES_MS)
                assert batch, f"message {len(got) + 1} of {len(bodies)} did not arrive"
                got += [m.get_text() for m in batch]
                cancelled = asyncio.create_task(consumer.receive_batch(7, ARRIVES_MS))
                await asyncio.sleep(0)  # it starts: it waits for the take ahead to land
                cancelled.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await cancelled
            assert got == bodies
            assert await consumer.receive_batch(10, 300) == []
            await ctx.acknowledge()
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_a_consumer_closed_while_a_take_ahead_holds_a_batch_hands_back_only_what_no_receive_got(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    """The batch taken ahead, which no receive got, goes back to the provider when the
    consumer closes (AUTO/DUPS_OK: the session recovers then; CLIENT_ACKNOWLEDGE: what was
    handed over is acknowledged, and the context's recover() hands back the rest, as for any
    message a closed consumer kept): another consumer gets exactly the rest, in order."""

    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 121)]
        async with afactory.create_context(mode) as ctx:
            q = ctx.create_queue(qname)
            await _sent(afactory, q, bodies)
            consumer = await ctx.create_consumer(q)
            got = await _batches_until_one_is_held(consumer, bodies, 10)
            held = consumer.kept_count()
            await ctx.acknowledge()
            await consumer.close()
            if mode == pyjms.CLIENT_ACKNOWLEDGE:
                await ctx.recover()
            elsewhere = await ctx.create_consumer(q)
            rest = [m.get_text() for m in await received(elsewhere, len(bodies) - len(got))]
            assert rest == bodies[len(got) :], f"{held} were held ahead"
            assert await elsewhere.receive(300) is None
            await ctx.acknowledge()
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)
