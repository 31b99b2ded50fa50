"""An asyncio receive_batch that took part of a batch still arriving waits a moment for the rest
(pyjms.aio.consumer.BATCH_LINGER_S), so that a stream costs fewer round trips to the worker. The
wait never holds up another call of the context, never delays a lone message, and loses or
repeats nothing. The tests make the wait long, so that a wait that is not ended as promised
shows as a receive that does not come back in time (the guards are far longer than the work)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import pyjms.aio as aio
import pyjms.aio.consumer as aio_consumer
from tests.aio.conftest import ARRIVES_MS, run

pytestmark = pytest.mark.providers("activemq", "artemis", "amqp")

#: the tests that need a take to find two messages: ActiveMQ's client over vm:// (the
#: in-process broker) often holds one message at a time, and a take of one does not linger
TWO_HELD = pytest.mark.activemq_tcp_only

#: how long a test waits for a receive that must not wait out a long linger
GUARD_S = 20

#: how many times a test sets up a take of two held messages before it gives up: on a loaded
#: machine ActiveMQ's broker sometimes dispatches the second seconds after the first (measured:
#: 2 of 15 takes a second after the consumer opened found one, none of 15 after three seconds)
ATTEMPTS = 5


async def lingering_take(
    afactory: aio.ConnectionFactory,
    qname: str,
    meanwhile: Callable[[aio.JMSContext, aio.JMSContext, str], Awaitable[Any]],
) -> list[str]:
    """The texts a receive_batch(10) returns when its take finds two messages, "a" and "b"
    (sent before the consumer was made: the broker dispatches them together as it opens), and
    ``meanwhile(ctx, sender, queue)`` runs while it lingers. ``ctx`` is the consumer's context,
    and ``queue`` the name of its queue. A take that found "a" alone did not linger, which is
    not what the test is about: it is set up again on a new queue."""
    for attempt in range(ATTEMPTS):
        got = await take_of_two_held(afactory, f"{qname}.{attempt}", meanwhile)
        if got is not None:
            return got
    pytest.fail(f"none of {ATTEMPTS} takes found both messages held by the client")


async def take_of_two_held(
    afactory: aio.ConnectionFactory,
    qname: str,
    meanwhile: Callable[[aio.JMSContext, aio.JMSContext, str], Awaitable[Any]],
) -> list[str] | None:
    """One attempt of lingering_take: None where the take found "a" alone."""
    async with afactory.create_context() as ctx, afactory.create_context() as sender:
        await sender.create_producer().send_batch(sender.create_queue(qname), ["a", "b"])
        consumer = await ctx.create_consumer(ctx.create_queue(qname))
        await asyncio.sleep(1)  # the broker's dispatch of both to the client
        batch = asyncio.create_task(consumer.receive_batch(10, ARRIVES_MS))
        await asyncio.sleep(0.5)  # the take has "a" and "b", and lingers
        await meanwhile(ctx, sender, qname)
        got = [m.get_text() for m in await asyncio.wait_for(batch, GUARD_S)]
        if got == ["a"]:
            while await consumer.receive_batch(10, 500):  # "b", and what meanwhile sent
                pass
            return None
        assert await consumer.receive_batch(10, 100) == []  # nothing left behind
        return got


@TWO_HELD
def test_a_take_of_part_of_a_batch_adds_what_arrives_while_it_lingers(
    afactory: aio.ConnectionFactory, qname: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(aio_consumer, "BATCH_LINGER_S", 5.0)
    more = ["c", "d", "e"]
    got = run(
        lambda: lingering_take(
            afactory,
            qname,
            lambda _, sender, queue: sender.create_producer().send_batch(sender.create_queue(queue), more),
        )
    )
    assert got == ["a", "b", *more]


@TWO_HELD
def test_a_call_queued_on_the_context_ends_the_linger(
    afactory: aio.ConnectionFactory, qname: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The linger is longer than the guard: only the send queued on the consumer's context
    (to another queue) can end it in time."""
    monkeypatch.setattr(aio_consumer, "BATCH_LINGER_S", 120.0)

    def send_elsewhere(ctx: aio.JMSContext, _: aio.JMSContext, queue: str) -> Awaitable[Any]:
        return asyncio.wait_for(ctx.create_producer().send(ctx.create_queue(f"{queue}.other"), "x"), GUARD_S)

    assert run(lambda: lingering_take(afactory, qname, send_elsewhere)) == ["a", "b"]


def test_a_lone_message_is_returned_without_lingering(
    afactory: aio.ConnectionFactory, qname: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(aio_consumer, "BATCH_LINGER_S", 120.0)

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            consumer = await ctx.create_consumer(q)
            await ctx.create_producer().send(q, "only")
            got = await asyncio.wait_for(consumer.receive_batch(10, ARRIVES_MS), GUARD_S)
            assert [m.get_text() for m in got] == ["only"]

    run(main)


def test_batches_of_a_stream_keep_every_message_once_in_order(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """A sender streams 3,000 messages in groups of 30 while the consumer takes batches of at
    most 100 (many of them partial, so they linger): each arrives once, in order, and no batch
    is larger than asked for."""
    sent = [f"m{i}" for i in range(3000)]

    async def main() -> None:
        async with afactory.create_context() as ctx, afactory.create_context() as sender:
            consumer = await ctx.create_consumer(ctx.create_queue(qname))
            q = sender.create_queue(qname)
            producer = sender.create_producer()

            async def stream() -> None:
                for start in range(0, len(sent), 30):
                    await producer.send_batch(q, sent[start : start + 30])
                    await asyncio.sleep(0)

            streaming = asyncio.create_task(stream())
            got: list[str] = []
            sizes: list[int] = []
            while len(got) < len(sent):
                batch = await consumer.receive_batch(100, ARRIVES_MS)
                assert batch, f"nothing arrived after {len(got)} of {len(sent)}"
                sizes.append(len(batch))
                got.extend(m.get_text() for m in batch)
            await streaming
            assert got == sent
            assert max(sizes) <= 100
            assert await consumer.receive_batch(100, 200) == []

    run(main)
