"""Sends of one context coalesce (pyjms.aio.outbox): what the loop queued one after another
crosses to the JVM together and is settled with one wake-up of the loop, in call order, each
send failing alone; a non-persistent send the provider makes without waiting for the broker
completes at the call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import pyjms
import pyjms.aio as aio
from tests.aio.conftest import run

pytestmark = pytest.mark.providers("activemq", "artemis")


def _count_crossings(ctx: aio.JMSContext) -> list[int]:
    """The sizes of the routed crossings the context's send path makes from now on."""
    crossings: list[int] = []
    sends = ctx.sync.sends
    original = sends.send_routed

    def counted(entries: Any, flags: int = 0) -> int:
        crossings.append(len(entries))
        return original(entries, flags)

    sends.send_routed = counted  # type: ignore[method-assign]
    return crossings


def _non_persistent(ctx: aio.JMSContext, qname: str) -> tuple[pyjms.Queue, aio.JMSProducer]:
    return ctx.create_queue(qname), ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)


def test_gathered_sends_cross_together_in_call_order_and_fail_alone(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            crossings = _count_crossings(ctx)
            await producer.send(q, "first")
            results = await asyncio.gather(
                *(producer.send(q, f"m{i}") for i in range(50)),
                producer.send("not a destination", "x"),  # type: ignore[arg-type]
                producer.send(q, {"a map": 1}),  # not a routed entry: the producer's own send
                *(producer.send(q, f"n{i}") for i in range(50)),
                return_exceptions=True,
            )
            assert isinstance(results[50], pyjms.InvalidDestinationRuntimeException)
            assert all(r is producer for i, r in enumerate(results) if i != 50)
            assert max(crossings) >= 50  # the gathered sends crossed together
            consumer = await ctx.create_consumer(q)
            got = [m.get_body(object) async for m in consumer.messages(500)]
            assert got == [
                "first",
                *(f"m{i}" for i in range(50)),
                {"a map": 1},
                *(f"n{i}" for i in range(50)),
            ]

    run(main)


def test_a_lone_non_persistent_send_completes_at_the_call(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """Once the destination has passed a send of the context, a NON_PERSISTENT send's await
    returns without the task being suspended (no round trip to the worker); a PERSISTENT
    one waits for the worker. All arrive, the NON_PERSISTENT ones in order."""

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            await producer.send(q, "first")  # the destination passes
            ran: list[bool] = []

            async def mark() -> None:
                ran.append(True)

            other = asyncio.create_task(mark())
            for i in range(10):
                await producer.send(q, f"m{i}")
            assert not ran  # the loop never ran another task meanwhile
            producer.set_delivery_mode(pyjms.PERSISTENT)
            await producer.send(q, "persistent")
            await other
            consumer = await ctx.create_consumer(q)
            got = [m.get_text() async for m in consumer.messages(500)]
            # JMS orders messages of one delivery mode (ActiveMQ may dispatch the PERSISTENT one first)
            assert [t for t in got if t != "persistent"] == ["first", *(f"m{i}" for i in range(10))]
            assert got.count("persistent") == 1

    run(main)


def test_a_send_completed_at_the_call_that_fails_fails_the_next_send(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            await producer.send(q, "first")
            sends = ctx.sync.sends

            def broken(entries: Any, flags: int = 0) -> int:
                raise pyjms.IllegalStateRuntimeException("the session broke")

            sends.send_routed = broken  # type: ignore[method-assign]
            await producer.send(q, "lost")  # completed at the call; its crossing fails
            await ctx.worker.submit(lambda: None)  # the crossing has been made
            with pytest.raises(pyjms.IllegalStateRuntimeException, match="the session broke"):
                await producer.send(q, "next")
            del sends.send_routed  # the session works again
            await producer.send(q, "after")
            consumer = await ctx.create_consumer(q)
            assert [m.get_text() async for m in consumer.messages(500)] == ["first", "after"]

    run(main)


def test_a_non_persistent_send_batch_crosses_with_the_sends_around_it(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            assert await producer.send_batch(q, ["a", "b"]) == 2
            crossings = _count_crossings(ctx)
            results = await asyncio.gather(
                producer.send(q, "c"), producer.send_batch(q, ["d", b"e"]), producer.send(q, "f")
            )
            assert results == [producer, 2, producer]  # complete at the call: maybe not crossed yet
            await ctx.worker.submit(lambda: None)  # now they have
            assert crossings == [4]  # one crossing for all three calls
            with pytest.raises(pyjms.MessageFormatRuntimeException):
                await producer.send_batch(q, ["g", 1])  # type: ignore[list-item]
            consumer = await ctx.create_consumer(q)
            got = [m.get_body(object) async for m in consumer.messages(500)]
            assert got == ["a", "b", "c", "d", b"e", "f"]

    run(main)
