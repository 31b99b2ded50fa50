"""CLIENT_ACKNOWLEDGE receives take what the provider holds in batches too (pyjms.aio.consumer
READ_AHEAD): the context runs on its provider's individual acknowledge mode
(pyjms.INDIVIDUAL_ACKNOWLEDGE), so ``await ctx.acknowledge()`` acknowledges exactly the
messages its callers got, and what was taken ahead is never acknowledged unseen."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest

import pyjms
import pyjms.aio as aio
from tests.aio.conftest import (
    ARRIVES_MS,
    each_once_after_a_cancel,
    holding_a_batch,
    listened_to,
    received,
    run,
)

pytestmark = pytest.mark.providers("activemq", "artemis", "amqp")

BODIES = [f"m{i}" for i in range(1, 31)]


async def _send(afactory: aio.ConnectionFactory, q: pyjms.Queue) -> None:
    async with afactory.create_context() as other:
        await other.create_producer().send_batch(q, BODIES)


async def _holding_a_batch(
    afactory: aio.ConnectionFactory, ctx: aio.JMSContext, q: pyjms.Queue, at_least: int = 1
) -> tuple[aio.JMSConsumer, list[str]]:
    """A consumer of ``ctx`` on ``q``, once BODIES were sent, that received the first of them
    (and as many more as it took until one receive took ahead) and holds at least
    ``at_least`` of the rest; and what it received."""
    await _send(afactory, q)
    consumer = await ctx.create_consumer(q)
    return consumer, await holding_a_batch(consumer, BODIES, at_least)


async def _the_rest(afactory: aio.ConnectionFactory, q: pyjms.Queue, count: int) -> list[str]:
    """The ``count`` messages a new context's consumer gets from the queue (each waited for up
    to ARRIVES_MS), after which none comes (a message delivered twice would)."""
    async with afactory.create_context() as check:
        consumer = await check.create_consumer(q)
        rest = [m.get_text() for m in await received(consumer, count)]
        assert await consumer.receive(300) is None, "more messages than were left"
        return rest


@pytest.mark.parametrize("by", ["context", "message"])
def test_acknowledge_after_receives_served_from_a_batch_acknowledges_exactly_those(
    afactory: aio.ConnectionFactory, qname: str, by: str
) -> None:
    """Receives are served from a batch (the consumer holds messages taken ahead); after N
    receives, acknowledge() acknowledges those N (``await ctx.acknowledge()``, or the last
    message's acknowledge(), which JMS gives the same meaning). The consumer is closed, still
    holding the rest; once the context is closed, another context gets the rest, each once,
    and none of the N."""

    async def main() -> None:
        async with afactory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
            q = ctx.create_queue(qname)
            consumer, got = await _holding_a_batch(afactory, ctx, q, at_least=2)
            held = consumer.kept_count()
            last = await consumer.receive(ARRIVES_MS)  # from what is held
            assert consumer.kept_count() == held - 1
            got.append(last.get_text())
            if by == "message":
                last.acknowledge()
            else:
                await ctx.acknowledge()
            assert got == BODIES[: len(got)]
            await consumer.close()
        rest = await _the_rest(afactory, q, len(BODIES) - len(got))
        assert Counter(rest) == Counter(BODIES[len(got) :])

    run(main)


def test_closing_without_acknowledge_hands_back_everything_once(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """Messages received from a batch and never acknowledged go back with the context's close,
    as do those taken ahead: another context gets all of them, each once."""

    async def main() -> None:
        async with afactory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
            q = ctx.create_queue(qname)
            _, got = await _holding_a_batch(afactory, ctx, q)
            assert got == BODIES[: len(got)]
        assert Counter(await _the_rest(afactory, q, len(BODIES))) == Counter(BODIES)

    run(main)


def test_acknowledge_after_a_recover_leaves_out_what_the_recovery_handed_back(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """recover() hands back what was received and not acknowledged, and what was taken ahead:
    they come again, marked redelivered, and acknowledge() then covers what came again only
    (a message received before the recovery is not acknowledged by its id: its redelivered copy
    may be held, unseen)."""

    async def main() -> None:
        async with afactory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
            q = ctx.create_queue(qname)
            consumer, before = await _holding_a_batch(afactory, ctx, q)
            await ctx.recover()
            again = await received(consumer, 1)
            assert again[0].get_text() == BODIES[0] and again[0].get_jms_redelivered()
            await ctx.acknowledge()
        assert Counter(await _the_rest(afactory, q, len(BODIES) - 1)) == Counter(BODIES[1:]), before

    run(main)


def test_a_receive_cancelled_while_a_batch_is_held_hands_its_message_to_the_next_receive_in_client_ack(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """A receive cancelled after the worker took a batch, and one cancelled while the rest of
    the batch is held, lose nothing: each message reaches exactly one receive, in order, and
    acknowledge() then acknowledges them all."""

    async def main() -> None:
        async with afactory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
            q = ctx.create_queue(qname)
            await _send(afactory, q)
            consumer = await ctx.create_consumer(q)
            taking = asyncio.create_task(consumer.receive(ARRIVES_MS))
            await asyncio.sleep(0)  # the receive is queued
            time.sleep(1.0)  # the loop is held: the worker takes a batch and can only queue the news
            taking.cancel()  # before the loop hears that the receive took it
            with pytest.raises(asyncio.CancelledError):
                await taking
            await each_once_after_a_cancel(consumer, BODIES)
            await ctx.acknowledge()
        assert await _the_rest(afactory, q, 0) == []

    run(main)


def test_receive_body_and_a_listener_take_what_was_taken_ahead_first(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """receive_body is served from what was taken ahead (a body it cannot return raises, with
    the message delivered, as JMS has it in CLIENT_ACKNOWLEDGE); a listener set afterwards gets
    the rest of what was taken ahead first, then what the provider delivers, each once; one
    acknowledge() covers them all."""

    async def main() -> None:
        async with afactory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
            q = ctx.create_queue(qname)
            consumer, got = await _holding_a_batch(afactory, ctx, q, at_least=2)
            with pytest.raises(pyjms.MessageFormatRuntimeException):
                await consumer.receive_body(dict, ARRIVES_MS)  # a text: delivered all the same
            got.append(BODIES[len(got)])
            got.append(await consumer.receive_body(str, ARRIVES_MS))
            assert got + await listened_to(consumer, len(BODIES) - len(got)) == BODIES
            await ctx.acknowledge()
        assert await _the_rest(afactory, q, 0) == []

    run(main)
