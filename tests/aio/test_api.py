"""pyjms.aio against real brokers (embedded vm:// and a broker process over tcp://): the JMS 2.0
names as coroutines, with the synchronous API's semantics."""

from __future__ import annotations

import asyncio

import pytest

import pyjms
import pyjms.aio as aio
from pyjms.browse import BROWSE_HANDLE, NoMessageAvailable
from tests.aio.conftest import run

pytestmark = pytest.mark.providers("activemq", "artemis")


def test_send_receive_and_iterate(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer().set_priority(4).set_property("region", "EU")
            assert await producer.send(q, "one") is producer
            await producer.send(q, {"sku": "A-1", "qty": 2})
            await producer.send_batch(q, ["three", "four"])
            consumer = await ctx.create_consumer(q)
            first = await consumer.receive(5000)
            assert first.get_text() == "one"
            assert first.get_string_property("region") == "EU" and first.get_jms_priority() == 4
            assert (await consumer.receive(5000)).get_body(dict) == {"sku": "A-1", "qty": 2}
            rest = []
            async for m in consumer.messages(idle_timeout_ms=500):
                rest.append(m.get_text())
            assert rest == ["three", "four"]
            assert await consumer.receive(100) is None
            assert await consumer.receive_no_wait() is None

    run(main)


def test_send_async_is_a_future_of_the_sent_message(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer()
            futures = [producer.send_async(q, f"m{i}") for i in range(20)]
            sent = await asyncio.gather(*futures)
            ids = [m.get_jms_message_id() for m in sent]
            assert all(ids) and len(set(ids)) == 20
            consumer = await ctx.create_consumer(q)
            got = [await consumer.receive(5000) for _ in range(20)]
            assert [m.get_jms_message_id() for m in got] == ids  # sent, and completed, in call order

    run(main)


def test_transactions_commit_and_rollback(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        async with afactory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer()
            await producer.send(q, "order")
            consumer = await ctx.create_consumer(q)
            assert await consumer.receive(300) is None  # not committed yet
            await ctx.commit()
            m = await consumer.receive(5000)
            assert m.get_text() == "order" and not m.get_jms_redelivered()
            await ctx.rollback()
            again = await consumer.receive(5000)
            assert again.get_text() == "order" and again.get_jms_redelivered()
            await ctx.commit()
            assert await consumer.receive(300) is None

    run(main)


def test_setters_check_at_once_and_a_queued_send_keeps_its_options(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer().set_priority(1).set_property("n", 1)
            with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="priority 10"):
                producer.set_priority(10)
            assert producer.get_priority() == 1
            first = asyncio.create_task(producer.send(q, "low"))
            producer.set_priority(8).set_property("n", 2)  # while "low" may still be queued
            second = asyncio.create_task(producer.send(q, "high"))
            producer.clear_properties()
            third = asyncio.create_task(producer.send(q, "bare"))
            await asyncio.gather(first, second, third)
            consumer = await ctx.create_consumer(q)
            got = {m.get_text(): m for m in [await consumer.receive(5000) for _ in range(3)]}
            assert (got["low"].get_jms_priority(), got["low"].get_int_property("n")) == (1, 1)
            assert (got["high"].get_jms_priority(), got["high"].get_int_property("n")) == (8, 2)
            assert (got["bare"].get_jms_priority(), got["bare"].property_exists("n")) == (8, False)
            with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="timeout_ms -1 is negative"):
                await consumer.receive(-1)
            for bad in (0, True, 2.0):
                with pytest.raises(
                    pyjms.InvalidArgumentRuntimeException,
                    match=f"max_messages must be a positive int, got {bad!r}",
                ):
                    await consumer.receive_batch(bad)

    run(main)


def test_async_for_ends_when_the_consumer_closes(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            consumer = await ctx.create_consumer(q)
            seen: list[str] = []

            async def drain() -> None:
                async for m in consumer:
                    seen.append(m.get_text())
                    if len(seen) == 3:
                        await consumer.close()

            task = asyncio.create_task(drain())
            async with afactory.create_context() as other:
                await other.create_producer().send_batch(q, ["a", "b", "c", "d"])
            await asyncio.wait_for(task, 30)
            assert seen == ["a", "b", "c"]

    run(main)


def test_a_receive_waiting_when_the_context_closes_returns_none(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        ctx = await afactory.create_context()
        consumer = await ctx.create_consumer(ctx.create_queue(qname))
        waiting = asyncio.create_task(consumer.receive())  # forever
        await asyncio.sleep(0.2)
        await ctx.close()
        assert await asyncio.wait_for(waiting, 10) is None
        with pytest.raises(pyjms.IllegalStateRuntimeException, match="closed"):
            await consumer.receive(10)
        assert await asyncio.to_thread(ctx.worker.ended.wait, 10)  # the worker thread ended

    run(main)


def test_message_listener_runs_on_the_loop(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        got: list[str] = []
        done = asyncio.Event()
        failed_once: list[str] = []

        async def listener(m: pyjms.Message) -> None:
            assert asyncio.get_running_loop() is loop  # called on the loop, not a Java thread
            if m.get_text() == "flaky" and not failed_once:
                failed_once.append("x")
                raise RuntimeError("first delivery fails")  # redelivered, as with the sync API
            got.append(m.get_text())
            if len(got) == 3:
                done.set()

        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            consumer = await ctx.create_consumer(q)
            await consumer.set_message_listener(listener)
            async with afactory.create_context() as sender:
                await sender.create_producer().send_batch(q, ["a", "flaky", "c"])
            await asyncio.wait_for(done.wait(), 30)
            assert sorted(got) == ["a", "c", "flaky"] and failed_once
            await consumer.set_message_listener(None)
        # each was acknowledged when its listener returned: closing the context gave none back
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(check.create_queue(qname))).receive(500) is None

    run(main)


@pytest.mark.parametrize("mode", [pyjms.AUTO_ACKNOWLEDGE, pyjms.DUPS_OK_ACKNOWLEDGE])
def test_receive_body_leaves_a_body_it_cannot_return_for_redelivery(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    async def main() -> None:
        async with afactory.create_context(mode) as ctx:
            assert ctx.get_session_mode() == mode
            q = ctx.create_queue(qname)
            await ctx.create_producer().send(q, "text")
            consumer = await ctx.create_consumer(q)
            with pytest.raises(pyjms.MessageFormatRuntimeException):
                await consumer.receive_body(dict, 5000)
            assert await consumer.receive_body(str, 5000) == "text"
            assert await consumer.receive(300) is None
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(check.create_queue(qname))).receive(500) is None

    run(main)


def test_browsers(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            await ctx.create_producer().send_batch(q, ["x", "y"])
            browser = await ctx.create_browser(q)
            assert [m.get_text() async for m in browser] == ["x", "y"]
            await browser.close()
            marking = await ctx.create_marking_browser(q)
            assert (await marking.get(BROWSE_HANDLE, wait_ms=2000)).get_text() == "x"
            assert (await marking.get(BROWSE_HANDLE, wait_ms=2000)).get_text() == "y"
            with pytest.raises(NoMessageAvailable) as e:
                await marking.get(BROWSE_HANDLE, wait_ms=300)  # both marked for this handle
            assert e.value.reason == pyjms.MQRC.NO_MSG_AVAILABLE
            await marking.close()
            consumer = await ctx.create_consumer(q)
            assert [m.get_text() async for m in consumer.messages(500)] == ["x", "y"]  # browsing took nothing

    run(main)


def test_factory_of_a_sync_factory_and_errors(url: str, qname: str) -> None:
    sync = pyjms.ConnectionFactory(url)
    factory = aio.ConnectionFactory.of(sync)
    assert factory.sync is sync
    with pytest.raises(TypeError, match="takes a pyjms.ConnectionFactory"):
        aio.ConnectionFactory.of("tcp://x")  # type: ignore[arg-type]

    async def main() -> None:
        with pytest.raises(pyjms.JMSRuntimeException):
            await aio.ConnectionFactory("tcp://127.0.0.1:1?maxReconnectAttempts=0").create_context()
        async with factory.create_context() as ctx:
            with pytest.raises(pyjms.IllegalStateRuntimeException, match="SESSION_TRANSACTED"):
                await ctx.commit()  # the sync API's error, raised in the awaiting coroutine
            with pytest.raises(pyjms.InvalidDestinationRuntimeException):
                await ctx.create_consumer("not a queue")  # type: ignore[arg-type]

    run(main)
