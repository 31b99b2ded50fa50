"""Many producers and consumers on one event loop, and the loop-blocking detector: asyncio's
debug mode with a 20 ms slow-callback threshold, which fails the test if a pyjms.aio call held
the loop longer (tests/aio/conftest.py: run_watched, Watch.blocking)."""

from __future__ import annotations

import asyncio
import collections
import re
import time
from pathlib import Path

import pytest

import pyjms
import pyjms.aio as aio
import pyjms.bridge
from tests.aio.conftest import JAVA_CROSSINGS, run, run_watched

pytestmark = pytest.mark.providers("activemq", "artemis")


async def _pipeline(
    factory: aio.ConnectionFactory, qname: str, producers: int, consumers: int, per_producer: int
) -> collections.Counter[str]:
    """``producers`` contexts sending (per message, async and in batches) and ``consumers``
    contexts receiving (per message, in batches, by async for) on one queue, all at once."""
    q = aio.JMSContext  # only for the type checker's sake below
    total = producers * per_producer
    received: collections.Counter[str] = collections.Counter()
    all_in = asyncio.Event()

    async def produce(p: int) -> None:
        async with factory.create_context() as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
            third = per_producer // 3
            for i in range(third):
                await producer.send(q, f"{p}-{i}")
            for start in range(third, 2 * third, 5):  # five sends in flight at a time
                await asyncio.gather(
                    *(producer.send_async(q, f"{p}-{i}") for i in range(start, min(start + 5, 2 * third)))
                )
            await producer.send_batch(q, [f"{p}-{i}" for i in range(2 * third, per_producer)])

    async def consume(c: int) -> None:
        async with factory.create_context() as ctx:
            consumer = await ctx.create_consumer(ctx.create_queue(qname))
            while not all_in.is_set():
                if c % 3 == 0:
                    batch = await consumer.receive_batch(50, 200)
                else:
                    m = await consumer.receive(200)
                    batch = [m] if m is not None else []
                for m in batch:
                    received[m.get_text()] += 1
                if sum(received.values()) >= total:
                    all_in.set()

    del q
    consumers_running = [asyncio.create_task(consume(c)) for c in range(consumers)]
    await asyncio.gather(*(produce(p) for p in range(producers)))
    await asyncio.wait_for(all_in.wait(), 120)
    await asyncio.gather(*consumers_running)
    return received


def test_many_producers_and_consumers_on_one_loop(afactory: aio.ConnectionFactory, qname: str) -> None:
    producers, per_producer = 8, 150
    received = run(
        lambda: _pipeline(afactory, qname, producers=producers, consumers=6, per_producer=per_producer)
    )
    expected = {f"{p}-{i}" for p in range(producers) for i in range(per_producer)}
    assert set(received) == expected
    assert all(count == 1 for count in received.values())  # none twice


def test_consumers_sharing_one_context_take_turns_on_its_worker(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """Three consumers of one context (one session, one worker), each on its own queue, waiting
    at once: each gets its own messages; a waiting receive does not starve the others."""

    async def main() -> dict[str, list[str]]:
        async with afactory.create_context() as ctx, afactory.create_context() as sender:
            names = [f"{qname}.{i}" for i in range(3)]
            consumers = [await ctx.create_consumer(ctx.create_queue(n)) for n in names]

            async def take(consumer: aio.JMSConsumer) -> list[str]:
                return [(await consumer.receive(20_000)).get_text() for _ in range(5)]

            waiting = [asyncio.create_task(take(c)) for c in consumers]
            producer = sender.create_producer()
            for i in range(5):
                for n in names:
                    await producer.send(sender.create_queue(n), f"{n}:{i}")
            results = await asyncio.gather(*waiting)
            return dict(zip(names, results, strict=True))

    got = run(main)
    for name, texts in got.items():
        assert texts == [f"{name}:{i}" for i in range(5)]


def test_no_pyjms_call_blocks_the_loop(url: str, qname: str) -> None:
    """The pipeline above, plus transactions, browsing and marks, in asyncio debug mode: no
    callback of the loop may take 20 ms or more."""
    factory = pyjms.ConnectionFactory(url)
    with factory.create_context() as warm:  # the JVM and the connection start before the watch
        warm.create_producer()

    async def main() -> int:
        afactory = aio.ConnectionFactory.of(factory)
        received = await _pipeline(afactory, qname, producers=4, consumers=4, per_producer=90)
        async with afactory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
            q = ctx.create_queue(qname + ".tx")
            producer = ctx.create_producer().set_priority(6).set_property("k", "v")
            await producer.send(q, "t")
            await ctx.commit()
            consumer = await ctx.create_consumer(q)
            assert (await consumer.receive(5000)).get_text() == "t"
            await ctx.rollback()
            assert (await consumer.receive(5000)).get_jms_redelivered()
            await ctx.commit()
            await consumer.close()  # else the provider may dispatch b1 and b2 to it, out of a browser's sight
            await producer.send_batch(q, ["b1", "b2"])
            await ctx.commit()
            browser = await ctx.create_browser(q)
            assert [m.get_text() async for m in browser] == ["b1", "b2"]
            marking = await ctx.create_marking_browser(q)
            assert (await marking.get(wait_ms=2000)).get_text() == "b1"
            await marking.close()
            consumer = await ctx.create_consumer(q)
            waiting = asyncio.create_task(consumer.receive(10_000))
            await asyncio.sleep(0.05)
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
        return sum(received.values())

    count, watch = run_watched(main)
    assert count == 360
    assert watch.blocking() == [], "pyjms blocked the event loop:\n" + "\n".join(watch.blocking())


def test_a_large_non_persistent_send_batch_is_packed_off_the_loop(url: str, qname: str) -> None:
    """A NON_PERSISTENT send_batch completed at its call leaves its bodies' packing to the
    worker: 20,000 of them held the loop about 60 ms when the loop packed them. They all
    arrive, in order."""
    factory = pyjms.ConnectionFactory(url)
    with factory.create_context() as warm:
        warm.create_producer()
    bodies = [f"m{i:05d}" for i in range(20_000)]

    async def main() -> list[str]:
        async with aio.ConnectionFactory.of(factory).create_context() as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
            await producer.send(q, "first")  # the destination passes: the batch completes at its call
            assert await producer.send_batch(q, bodies) == len(bodies)
            consumer = await ctx.create_consumer(q)
            got: list[str] = []
            while len(got) < len(bodies) + 1:
                batch = await consumer.receive_batch(1000, 10_000)
                assert batch, f"only {len(got)} arrived"
                got += [m.get_text() for m in batch]
            return got

    got, watch = run_watched(main)
    assert got == ["first", *bodies]
    assert watch.blocking() == [], "pyjms blocked the event loop:\n" + "\n".join(watch.blocking())


def test_the_detector_sees_a_blocking_call(embedded_broker: object, qname: str) -> None:
    """The detector can fail: a synchronous receive made on the loop itself is reported."""
    factory = pyjms.ConnectionFactory(embedded_broker.vm_url)  # type: ignore[attr-defined]
    with factory.create_context() as warm:  # the JVM starts before the watch (run alone, it would
        warm.create_producer()  # start on the loop: 10 ms and more of CPU, not a call into Java)

    async def main() -> None:
        with factory.create_context() as ctx:
            ctx.create_consumer(ctx.create_queue(qname)).receive(50)  # blocks the loop 50 ms

    _, watch = run_watched(main)
    assert any(" took " in r for r in watch.reports)  # asyncio's own report
    assert watch.blocking() and all(" called Java: " in b for b in watch.blocking())
    assert any(b.endswith("receivers.py:receive") for b in watch.blocking())


def test_the_detector_watches_every_module_of_the_wire_that_calls_java() -> None:
    """A module of the wire layer that imports the JVM module (or JPype) or looks up a Java class
    calls Java, so the detector must watch it: a module split off one it watches (as
    receivers.py was off channel.py) would otherwise call Java from the loop unseen. errors.py
    is not watched: it only reads a Java exception that a watched call raised."""
    bridge = Path(pyjms.bridge.__file__).parent
    calls_java = re.compile(
        r"^from pyjms\.bridge import .*\bjvm\b|^from pyjms\.bridge\.jvm |^import jpype|jclass\(", re.M
    )
    calling = {path.name for path in bridge.glob("*.py") if calls_java.search(path.read_text())}
    assert {"channel.py", "receivers.py", "jvm.py"} <= calling  # the pattern finds them
    watched = {Path(p).name for p in JAVA_CROSSINGS}
    assert calling - {"errors.py"} <= watched, f"not watched: {sorted(calling - {'errors.py'} - watched)}"


def test_the_detector_sees_python_work_on_the_loop() -> None:
    """... and 30 ms of Python work in one callback."""

    async def main() -> None:
        start = time.thread_time()
        while time.thread_time() - start < 0.03:
            pass

    _, watch = run_watched(main)
    assert watch.java_calls == []
    assert len(watch.blocking()) == 1
    assert float(watch.blocking()[0].split(" ms on a CPU")[0].rsplit(" ", 1)[1]) >= 10
