"""Sends of one context coalesce (pyjms.aio.outbox): what the loop queued one after another
crosses to the JVM together and is settled with one wake-up of the loop, in call order, each
send failing alone; a non-persistent send the provider makes without waiting for the broker
completes at the call."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import pyjms
import pyjms.aio as aio
from tests.aio.conftest import ARRIVES_MS, received, run

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


@contextmanager
def _worker_held(ctx: aio.JMSContext) -> Iterator[None]:
    """The context's worker waits (a job on it waits for the block to end): whatever is queued
    meanwhile waits behind it, whatever the machine's pace."""
    release = threading.Event()
    ctx.worker.submit(lambda: release.wait(120))  # 120 s: a failing test ends all the same
    try:
        yield
    finally:
        release.set()


async def _bodies(consumer: aio.JMSConsumer, count: int) -> list[Any]:
    """The bodies of the next ``count`` messages; then no other message comes."""
    got = [m.get_body(object) for m in await received(consumer, count)]
    assert await consumer.receive(300) is None
    return got


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
            assert await _bodies(consumer, 102) == [
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
    returns without a round trip to the worker: it returns while the worker is held. A
    PERSISTENT one waits for the worker. All arrive, the NON_PERSISTENT ones in order."""

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            await producer.send(q, "first")  # the destination passes
            with _worker_held(ctx):
                for i in range(10):  # a send that waited for the worker would time out here
                    assert await asyncio.wait_for(producer.send(q, f"m{i}"), ARRIVES_MS / 1000) is producer
                producer.set_delivery_mode(pyjms.PERSISTENT)
                persistent = asyncio.ensure_future(producer.send(q, "persistent"))
                await asyncio.sleep(0.1)
                assert not persistent.done()  # the worker is held: it cannot have been made
            assert await persistent is producer
            consumer = await ctx.create_consumer(q)
            got = await _bodies(consumer, 12)
            # JMS orders messages of one delivery mode (ActiveMQ may dispatch the PERSISTENT one first)
            assert [t for t in got if t != "persistent"] == ["first", *(f"m{i}" for i in range(10))]
            assert got.count("persistent") == 1

    run(main)


def test_a_send_completed_at_the_call_is_a_done_future_that_create_task_takes_too(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """What a send completed at its call returns is a future already done (gather and
    ensure_future take it as it is, with no Task of their own) that is a coroutine too:
    create_task, wait_for and await take it as they take any send's coroutine. Every send
    arrives once, in order."""

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            await producer.send(q, "first")  # the destination passes
            with _worker_held(ctx):
                sent = producer.send(q, "done")
                assert asyncio.isfuture(sent) and sent.done() and asyncio.iscoroutine(sent)
                assert asyncio.ensure_future(sent) is sent  # gather's way: no Task
                assert await sent is producer
                assert await asyncio.create_task(producer.send(q, "task")) is producer
                assert await asyncio.wait_for(producer.send(q, "wait_for"), 5) is producer
                gathered = await asyncio.gather(*(producer.send(q, f"g{i}") for i in range(5)))
                assert gathered == [producer] * 5
                batch = producer.send_batch(q, ["b0", "b1"])
                assert asyncio.isfuture(batch) and await asyncio.create_task(batch) == 2
            consumer = await ctx.create_consumer(q)
            assert await _bodies(consumer, 11) == [
                "first",
                "done",
                "task",
                "wait_for",
                *(f"g{i}" for i in range(5)),
                "b0",
                "b1",
            ]

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
            assert await _bodies(consumer, 2) == ["first", "after"]

    run(main)


def test_send_batch_calls_in_a_row_cross_as_one_batch_then_the_sends_after_them(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """Non-persistent send_batch calls queued one after another to one destination with the
    same options cross together as a batch (SendPath.send_batch: no destination and options in
    every record); a send after them crosses after them, in call order."""

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            await producer.send(q, "first")  # the destination passes: later sends complete at the call
            batches: list[int] = []
            sends = ctx.sync.sends
            original = sends.send_batch

            def counted(key: Any, records: Any, options: Any, what: str) -> int:
                batches.append(len(records))
                return original(key, records, options, what)

            sends.send_batch = counted  # type: ignore[method-assign]
            routed = _count_crossings(ctx)
            await asyncio.gather(
                producer.send_batch(q, ["a", "b"]),
                producer.send_batch(q, ["c"]),
                producer.send_batch(q, [b"d", "e"]),
                producer.send(q, "f"),
            )
            await ctx.worker.submit(lambda: None)  # every crossing has been made
            assert (batches, routed) == ([5], [1])
            consumer = await ctx.create_consumer(q)
            assert await _bodies(consumer, 7) == ["first", "a", "b", "c", b"d", "e", "f"]

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
            assert await _bodies(consumer, 6) == ["a", "b", "c", "d", b"e", "f"]

    run(main)


def test_a_send_batch_completed_at_its_call_refuses_a_body_that_is_not_unicode_text_at_the_call(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """Its bodies are packed on the worker, but a str with a lone surrogate (no provider can
    carry it) fails the send_batch itself, at its call, as the synchronous one does: nothing
    of it is sent, and the sends around it go."""

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            await producer.send(q, "a")
            with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="lone surrogate"):
                await producer.send_batch(q, ["b", "c\ud800"])
            assert await producer.send_batch(q, ["é", b"d"]) == 2
            consumer = await ctx.create_consumer(q)
            assert await _bodies(consumer, 3) == ["a", "é", b"d"]
            assert await consumer.receive(200) is None

    run(main)


def test_the_outcomes_of_sends_queued_together_reach_the_loop_with_one_wake_up(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """PERSISTENT sends gathered, one of them refused: each is made alone (so a broker's error
    would fail only its own send), all in one job of the worker, and every send's awaitable is
    settled with one call_soon_threadsafe to the loop."""

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer()  # PERSISTENT: every send waits for its crossing
            await producer.send(q, "first")
            loop = asyncio.get_running_loop()
            wake_ups: list[object] = []
            threadsafe = loop.call_soon_threadsafe

            def counted(callback: Any, *args: Any, **kwargs: Any) -> asyncio.Handle:
                wake_ups.append(callback)
                return threadsafe(callback, *args, **kwargs)

            loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
            try:
                results = await asyncio.gather(
                    *(producer.send(q, f"m{i}") for i in range(20)),
                    producer.send("not a destination", "x"),  # type: ignore[arg-type]
                    *(producer.send(q, f"n{i}") for i in range(20)),
                    return_exceptions=True,
                )
            finally:
                del loop.call_soon_threadsafe
            assert isinstance(results[20], pyjms.InvalidDestinationRuntimeException)
            assert all(r is producer for i, r in enumerate(results) if i != 20)
            assert len(wake_ups) == 1
            consumer = await ctx.create_consumer(q)
            assert await _bodies(consumer, 41) == [
                "first",
                *(f"m{i}" for i in range(20)),
                *(f"n{i}" for i in range(20)),
            ]

    run(main)


def test_send_async_among_coalesced_sends_keeps_call_order(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """send_async calls between sends that cross together: every message goes in call order, and
    the send_async futures complete in call order, each with its sent message."""

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q, producer = _non_persistent(ctx, qname)
            await producer.send(q, "first")  # the destination passes: "a", "c", "e" complete at the call
            completed: list[str] = []
            calls: list[Any] = []
            for body in "abcdef":
                if body in "bdf":
                    future = producer.send_async(q, body)
                    future.add_done_callback(lambda f: completed.append(f.result().get_text()))
                    calls.append(future)
                else:
                    calls.append(producer.send(q, body))
            results = await asyncio.gather(*calls)
            assert completed == ["b", "d", "f"]
            sent_ids = [m.get_jms_message_id() for m in results[1::2]]
            assert all(sent_ids)
            consumer = await ctx.create_consumer(q)
            got = await received(consumer, 7)
            assert [m.get_text() for m in got] == ["first", *"abcdef"]
            assert [m.get_jms_message_id() for m in got[2::2]] == sent_ids
            assert await consumer.receive(300) is None

    run(main)


def test_a_send_cancelled_before_the_worker_made_it_is_not_sent(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """Sends queued together while the worker is busy; one of them is cancelled: it is not sent,
    and the others are, in order. A send completed at its call is sent however its await ends:
    it had nothing to wait for."""

    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer()  # PERSISTENT: every send waits for its crossing
            await producer.send(q, "first")
            with _worker_held(ctx):
                sends = [asyncio.ensure_future(producer.send(q, f"p{i}")) for i in range(3)]
                await asyncio.sleep(0)  # each send awaits its crossing
                sends[1].cancel()
                producer.set_delivery_mode(pyjms.NON_PERSISTENT)
                early = asyncio.ensure_future(producer.send(q, "early"))  # complete at the call ...
                early.cancel()  # ... so cancelling its await does not unsend it
            assert await sends[0] is producer and await sends[2] is producer
            with pytest.raises(asyncio.CancelledError):
                await sends[1]
            consumer = await ctx.create_consumer(q)
            got = await _bodies(consumer, 4)
            # JMS orders messages of one delivery mode (ActiveMQ may dispatch the PERSISTENT ones first)
            assert [t for t in got if t != "early"] == ["first", "p0", "p2"] and "early" in got

    run(main)
