"""pyjms.aio on the fake broker: the JMS 2.0 names as coroutines over the synchronous client,
whose contexts run on worker threads of their own; the real-broker tests are tests/aio."""

from __future__ import annotations

import asyncio
import threading

import pytest

import pyjms
import pyjms.aio as aio
from pyjms import ConnectionFactory
from tests.fakes.channel import FakeBroker


def test_send_receive_and_iterate(factory: ConnectionFactory) -> None:
    async def main() -> list[str | None]:
        async with aio.ConnectionFactory.of(factory).create_context() as ctx:
            queue = ctx.create_queue("Q")
            producer = ctx.create_producer().set_priority(6).set_property("region", "EU")
            assert await producer.send(queue, "one") is producer
            await producer.send_batch(queue, ["two", "three"])
            consumer = await ctx.create_consumer(queue)
            first = await consumer.receive(1000)
            assert first is not None and first.get_jms_priority() == 6
            assert first.get_string_property("region") == "EU"
            rest = [m.get_text() async for m in consumer.messages(idle_timeout_ms=50)]
            assert await consumer.receive_no_wait() is None
            return [first.get_text(), *rest]

    assert asyncio.run(main()) == ["one", "two", "three"]


def test_send_async_is_a_future_of_the_sent_message_in_call_order(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    async def main() -> list[str | None]:
        async with aio.ConnectionFactory.of(factory).create_context() as ctx:
            producer = ctx.create_producer()
            sent = await asyncio.gather(
                *(producer.send_async(ctx.create_queue("Q"), f"m{i}") for i in range(10))
            )
            return [m.get_jms_message_id() for m in sent]

    ids = asyncio.run(main())
    assert ids == [m.message_id for m in broker.queue("Q")] and len(set(ids)) == 10


def test_a_transaction_commits_and_rolls_back(factory: ConnectionFactory, broker: FakeBroker) -> None:
    async def main() -> None:
        async with aio.ConnectionFactory.of(factory).create_context(pyjms.SESSION_TRANSACTED) as ctx:
            producer = ctx.create_producer()
            await producer.send(ctx.create_queue("Q"), "undone")
            await ctx.rollback()
            await producer.send(ctx.create_queue("Q"), "done")
            await ctx.commit()

    asyncio.run(main())
    assert [m.text() for m in broker.queue("Q")] == ["done"]


def test_the_event_loop_never_runs_the_synchronous_client(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    """Every channel call comes from a worker thread, never the loop's."""
    opening_threads: set[int] = set()
    original = broker.open_channel

    def open_channel(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        opening_threads.add(threading.get_ident())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    broker.open_channel = open_channel  # type: ignore[method-assign]

    async def main() -> int:
        async with aio.ConnectionFactory.of(factory).create_context() as ctx:
            await ctx.create_producer().send(ctx.create_queue("Q"), "x")
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert opening_threads and loop_thread not in opening_threads


def test_aio_factory_of_takes_only_a_synchronous_factory() -> None:
    with pytest.raises(TypeError):
        aio.ConnectionFactory.of("tcp://h:1")  # type: ignore[arg-type]


def test_client_acknowledge_reads_ahead_and_acknowledges_only_what_callers_got(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    """A CLIENT_ACKNOWLEDGE context runs on an INDIVIDUAL_ACKNOWLEDGE session: its first receive
    takes all ten messages, the next two are served from them, and acknowledge() acknowledges
    the three its callers got; the close hands the other seven back."""

    async def main() -> list[str | None]:
        async with aio.ConnectionFactory.of(factory).create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
            assert ctx.sync.get_session_mode() == pyjms.INDIVIDUAL_ACKNOWLEDGE
            queue = ctx.create_queue("Q")
            await ctx.create_producer().send_batch(queue, [f"m{i}" for i in range(10)])
            consumer = await ctx.create_consumer(queue)
            got = [await consumer.receive(1000) for _ in range(3)]
            assert consumer.kept_count() == 7
            await ctx.acknowledge()
            return [m.get_text() for m in got if m is not None]

    assert asyncio.run(main()) == ["m0", "m1", "m2"]
    assert [m.text() for m in broker.queue("Q")] == [f"m{i}" for i in range(3, 10)]


@pytest.mark.parametrize(
    ("mode", "session"),
    [
        (pyjms.AUTO_ACKNOWLEDGE, pyjms.CLIENT_ACKNOWLEDGE),
        (pyjms.DUPS_OK_ACKNOWLEDGE, pyjms.CLIENT_ACKNOWLEDGE),
        (pyjms.CLIENT_ACKNOWLEDGE, pyjms.INDIVIDUAL_ACKNOWLEDGE),
        (pyjms.SESSION_TRANSACTED, pyjms.SESSION_TRANSACTED),
    ],
)
def test_each_mode_runs_on_the_session_its_acknowledgements_need(
    factory: ConnectionFactory, mode: int, session: int
) -> None:
    async def main() -> None:
        async with aio.ConnectionFactory.of(factory).create_context(mode) as ctx:
            assert (ctx.get_session_mode(), ctx.sync.get_session_mode()) == (mode, session)

    asyncio.run(main())
