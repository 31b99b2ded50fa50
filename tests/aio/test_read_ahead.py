"""Receives on a context's only consumer in AUTO/DUPS_OK take what the provider holds in one
batch (pyjms.aio.consumer READ_AHEAD): what was taken ahead reaches a receive_body, or a message
listener set afterwards, once, and nothing is acknowledged before a caller got it."""

from __future__ import annotations

import asyncio

import pytest

import pyjms
import pyjms.aio as aio
from tests.aio.conftest import run

pytestmark = pytest.mark.providers("activemq", "artemis")


async def _taken_ahead(ctx: aio.JMSContext, q: pyjms.Queue, bodies: list[str]) -> aio.JMSConsumer:
    """A consumer that received the first of ``bodies`` and holds some of the rest."""
    async with ctx.create_context() as other:
        await other.create_producer().send_batch(q, bodies)
    consumer = await ctx.create_consumer(q)
    await asyncio.sleep(2.0)  # the provider delivers them all to the consumer meanwhile
    assert (await consumer.receive(5000)).get_text() == bodies[0]
    return consumer


def test_a_listener_set_after_receives_took_ahead_gets_the_rest_once(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 7)]
        got: list[str] = []
        done = asyncio.Event()

        def listener(m: pyjms.Message) -> None:
            got.append(m.get_text())
            if len(got) == 5:
                done.set()

        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            consumer = await _taken_ahead(ctx, q, bodies)
            await consumer.set_message_listener(listener)
            await asyncio.wait_for(done.wait(), 30)
            await asyncio.sleep(0.3)
            await consumer.set_message_listener(None)
            assert got == bodies[1:]
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)


def test_receive_body_takes_what_was_taken_ahead_first(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        bodies = ["m1", "m2", "m3"]
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            consumer = await _taken_ahead(ctx, q, bodies)
            with pytest.raises(pyjms.MessageFormatRuntimeException):
                await consumer.receive_body(dict, 5000)  # m2 is a text: it stays the next message
            assert await consumer.receive_body(str, 5000) == "m2"
            assert await consumer.receive_body(str, 5000) == "m3"
            assert await consumer.receive(300) is None
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)
