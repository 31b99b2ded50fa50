"""Receives on a context's only consumer in AUTO/DUPS_OK take what the provider holds in one
batch (pyjms.aio.consumer READ_AHEAD): what was taken ahead reaches a receive_body, or a message
listener set afterwards, once, and nothing is acknowledged before a caller got it."""

from __future__ import annotations

import asyncio

import pytest

import pyjms
import pyjms.aio as aio
from tests.aio.conftest import ARRIVES_MS, holding_a_batch, listened_to, run

pytestmark = pytest.mark.providers("activemq", "artemis")


async def _taken_ahead(
    ctx: aio.JMSContext, q: pyjms.Queue, bodies: list[str]
) -> tuple[aio.JMSConsumer, list[str]]:
    """A consumer that received the first of ``bodies`` (and as many more as it took until
    one receive took more than its own) and holds some of the rest; and what it received."""
    async with ctx.create_context() as other:
        await other.create_producer().send_batch(q, bodies)
    consumer = await ctx.create_consumer(q)
    return consumer, await holding_a_batch(consumer, bodies)


def test_a_listener_set_after_receives_took_ahead_gets_the_rest_once(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 31)]
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            consumer, before = await _taken_ahead(ctx, q, bodies)
            assert await listened_to(consumer, len(bodies) - len(before)) == bodies[len(before) :]
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)


def test_receive_body_takes_what_was_taken_ahead_first(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 31)]
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            consumer, before = await _taken_ahead(ctx, q, bodies)
            with pytest.raises(pyjms.MessageFormatRuntimeException):
                await consumer.receive_body(dict, ARRIVES_MS)  # a text: it stays the next message
            rest = [await consumer.receive_body(str, ARRIVES_MS) for _ in bodies[len(before) :]]
            assert rest == bodies[len(before) :]
            assert await consumer.receive(300) is None
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)


@pytest.mark.parametrize("mode", [pyjms.AUTO_ACKNOWLEDGE, pyjms.DUPS_OK_ACKNOWLEDGE])
def test_async_for_takes_what_the_provider_holds_in_batches(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    """``async for`` over a context's only consumer is served from batches too: some message
    comes from what an earlier take held (until one is, each iteration waits a little, for what
    the broker dispatches meanwhile, whatever the machine's pace); every message comes
    once, in order, and all are acknowledged once the caller got them."""

    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 31)]
        async with afactory.create_context(mode) as ctx:
            q = ctx.create_queue(qname)
            async with ctx.create_context() as other:
                await other.create_producer().send_batch(q, bodies)
            consumer = await ctx.create_consumer(q)
            got: list[str] = []
            from_a_batch = 0
            async for m in consumer:
                got.append(m.get_text())
                if len(got) == len(bodies):
                    break
                from_a_batch += consumer.kept_count() > 0  # the next one is held already
                if not from_a_batch:
                    await asyncio.sleep(0.2)
            assert got == bodies and from_a_batch
            await consumer.close()
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)
