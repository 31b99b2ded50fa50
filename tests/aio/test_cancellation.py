"""A cancelled receive loses no message. Both cases are forced, not hoped for:

* not taken: the receive is cancelled while it still waits in the worker's queue (the worker is
  held by a job that sleeps), so it never runs, and the message stays on the queue for others;
* taken, then kept: the loop is held (by the test, on purpose) while the worker's receive takes
  the message, and the caller is cancelled before the loop hears of it. In AUTO/DUPS_OK the
  session's recovery hands the message back to the provider, which redelivers it
  (pyjms.aio.handover). In CLIENT_ACKNOWLEDGE and transacted contexts the consumer keeps it for
  its next receive, or a rollback hands it back and the kept copy is dropped; if the consumer
  is closed instead, the context's close hands it back. Exactly one delivery either way.
"""

from __future__ import annotations

import asyncio
import time

import pytest

import pyjms
import pyjms.aio as aio
from pyjms.browse import BROWSE_HANDLE
from tests.aio.conftest import ARRIVES_MS, each_once_after_a_cancel, holding_a_batch, received, run

pytestmark = pytest.mark.providers("activemq", "artemis")


async def _worker_busy(ctx: aio.JMSContext, seconds: float) -> asyncio.Future[None]:
    """Holds the context's worker for a while (a job that sleeps on it)."""
    return ctx.worker.submit(lambda: time.sleep(seconds))


def test_a_receive_cancelled_before_it_runs_takes_nothing(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx, afactory.create_context() as other:
            q = ctx.create_queue(qname)
            await other.create_producer().send(q, "m1")
            consumer = await ctx.create_consumer(q)
            busy = await _worker_busy(ctx, 0.5)
            receive = asyncio.create_task(consumer.receive(5000))
            await asyncio.sleep(0.05)  # the receive is queued behind the sleeping job
            receive.cancel()
            with pytest.raises(asyncio.CancelledError):
                await receive
            await busy
            # the cancelled receive never ran: another context's consumer gets the message
            elsewhere = await other.create_consumer(q)
            assert (await elsewhere.receive(5000)).get_text() == "m1"
            assert await consumer.receive(300) is None

    run(main)


async def _cancel_after_it_took(consumer: aio.JMSConsumer) -> None:
    """Starts a receive on consumer and cancels it after the worker took a message, before the
    loop heard of it (the loop is held, on purpose, while the worker takes it)."""
    receive = asyncio.create_task(consumer.receive(5000))
    await asyncio.sleep(0)  # the receive is queued
    time.sleep(1.0)  # the loop is held: the worker takes the message and can only queue the news
    receive.cancel()  # before the loop hears that the receive took it
    with pytest.raises(asyncio.CancelledError):
        await receive


@pytest.mark.parametrize("mode", [pyjms.AUTO_ACKNOWLEDGE, pyjms.CLIENT_ACKNOWLEDGE, pyjms.SESSION_TRANSACTED])
def test_a_message_taken_after_the_cancel_goes_to_the_next_receive(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    async def main() -> None:
        async with afactory.create_context(mode) as ctx, afactory.create_context() as other:
            q = ctx.create_queue(qname)
            await other.create_producer().send_batch(q, ["m1", "m2"])
            consumer = await ctx.create_consumer(q)
            await _cancel_after_it_took(consumer)
            got = [(await consumer.receive(5000)).get_text(), (await consumer.receive(5000)).get_text()]
            assert got == ["m1", "m2"]  # m1 kept for the next receive, nothing lost nor doubled
            assert await consumer.receive(300) is None
            if mode == pyjms.SESSION_TRANSACTED:
                await ctx.commit()
            elif mode == pyjms.CLIENT_ACKNOWLEDGE:
                await ctx.acknowledge()
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)


@pytest.mark.parametrize("mode", [pyjms.AUTO_ACKNOWLEDGE, pyjms.DUPS_OK_ACKNOWLEDGE])
def test_a_receive_waiting_for_a_cancelled_take_to_settle_gets_the_older_message_first(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    """Two receives on one consumer: the first takes m1 while the loop is held and is cancelled
    before the loop hears of it; the second, queued behind it, waits on the worker, slice after
    slice, for that take to settle (AUTO/DUPS_OK: one take in flight per context). Settling it
    puts m1 in the consumer's keeping while the second waits: the second gets m1, not m2 from
    the provider, and the next receive gets m2."""

    async def main() -> None:
        async with afactory.create_context(mode) as ctx, afactory.create_context() as other:
            q = ctx.create_queue(qname)
            await other.create_producer().send_batch(q, ["m1", "m2"])
            consumer = await ctx.create_consumer(q)
            first = asyncio.create_task(consumer.receive_batch(1, 5000))
            second = asyncio.create_task(consumer.receive_batch(1, 5000))
            await asyncio.sleep(0)  # both are queued, the second behind the first
            time.sleep(1.0)  # the loop is held: the first takes m1, the second waits for it to settle
            first.cancel()  # before the loop hears that the first took m1
            with pytest.raises(asyncio.CancelledError):
                await first
            got = [m.get_text() for m in await second]
            got += [m.get_text() for m in await consumer.receive_batch(1, 5000)]
            assert got == ["m1", "m2"]
            assert await consumer.receive(300) is None

    run(main)


@pytest.mark.parametrize(
    "mode",
    [pyjms.AUTO_ACKNOWLEDGE, pyjms.DUPS_OK_ACKNOWLEDGE, pyjms.CLIENT_ACKNOWLEDGE, pyjms.SESSION_TRANSACTED],
)
def test_a_message_taken_after_the_cancel_is_not_lost_when_no_receive_follows(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    """The consumer is closed right after the cancelled receive took m1. In AUTO/DUPS_OK the
    session's recovery already handed m1 back (pyjms.aio.handover); in CLIENT_ACKNOWLEDGE and
    transacted contexts it was never acknowledged, and the context's close hands it back.
    Either way another consumer gets it, once, marked redelivered."""

    async def main() -> None:
        async with afactory.create_context() as other:
            q = other.create_queue(qname)
            await other.create_producer().send(q, "m1")
            async with afactory.create_context(mode) as ctx:
                consumer = await ctx.create_consumer(q)
                await _cancel_after_it_took(consumer)
                await consumer.close()
            elsewhere = await other.create_consumer(q)
            again = await elsewhere.receive(5000)
            assert again is not None and again.get_text() == "m1" and again.get_jms_redelivered()
            assert await elsewhere.receive(300) is None

    run(main)


def test_a_kept_message_holds_up_other_consumers_of_its_context_only_for_a_while(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """AUTO_ACKNOWLEDGE: while consumer a keeps m1 from a cancelled receive, an acknowledgement
    of the session would cover m1 too, so b's receive on the same context waits. a never comes
    back for m1, so after pyjms.aio.handover.KEPT_PATIENCE_S the session recovers: b gets its
    message, and m1 is delivered again, to a's next receive, once."""

    async def main() -> None:
        async with afactory.create_context() as ctx, afactory.create_context() as other:
            qa, qb = ctx.create_queue(f"{qname}.a"), ctx.create_queue(f"{qname}.b")
            await other.create_producer().send(qa, "m1")
            await other.create_producer().send(qb, "b1")
            a = await ctx.create_consumer(qa)
            b = await ctx.create_consumer(qb)
            await _cancel_after_it_took(a)
            assert (await b.receive(10000)).get_text() == "b1"
            again = await a.receive(5000)
            assert again.get_text() == "m1" and again.get_jms_redelivered()
            assert await a.receive(300) is None and await b.receive(300) is None
        async with afactory.create_context() as check:
            for q in (qa, qb):
                assert await (await check.create_consumer(q)).receive(300) is None

    run(main)


def test_a_rollback_hands_a_kept_message_back_to_the_provider(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    async def main() -> None:
        async with (
            afactory.create_context(pyjms.SESSION_TRANSACTED) as ctx,
            afactory.create_context() as other,
        ):
            q = ctx.create_queue(qname)
            await other.create_producer().send(q, "m1")
            consumer = await ctx.create_consumer(q)
            receive = asyncio.create_task(consumer.receive(5000))
            await asyncio.sleep(0)
            time.sleep(1.0)  # as above: m1 is taken, in the transaction, after the cancel
            receive.cancel()
            with pytest.raises(asyncio.CancelledError):
                await receive
            await ctx.rollback()  # m1 goes back to the queue; the kept copy must not come too
            again = await consumer.receive(5000)
            assert again.get_text() == "m1" and again.get_jms_redelivered()
            assert await consumer.receive(300) is None
            await ctx.commit()

    run(main)


def test_timeouts(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx, afactory.create_context() as other:
            q = ctx.create_queue(qname)
            consumer = await ctx.create_consumer(q)
            t0 = time.monotonic()
            assert await consumer.receive(200) is None
            assert time.monotonic() - t0 >= 0.19  # it waited (no upper bound: the machine is shared)
            assert await consumer.receive_batch(10, 200) == []
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(consumer.receive(), 0.3)  # a cancellation by timeout
            await other.create_producer().send(q, "late")
            assert (await consumer.receive(5000)).get_text() == "late"  # exactly once
            assert await consumer.receive(300) is None

    run(main)


def test_many_cancelled_receives_lose_nothing(afactory: aio.ConnectionFactory, qname: str) -> None:
    """Receives cancelled at random moments while messages flow in: every message is received
    exactly once, by a later receive."""

    async def main() -> None:
        n = 200
        async with afactory.create_context() as ctx, afactory.create_context() as sender:
            q = ctx.create_queue(qname)
            consumer = await ctx.create_consumer(q)
            producer = sender.create_producer()
            received: list[str] = []

            async def send_all() -> None:
                for i in range(n):
                    await producer.send(q, f"m{i}")
                    if i % 10 == 0:
                        await asyncio.sleep(0.005)

            sending = asyncio.create_task(send_all())
            while not sending.done():
                try:
                    m = await asyncio.wait_for(consumer.receive(), 0.002)
                except TimeoutError:
                    continue
                received.append(m.get_text())
            await sending
            while (m := await consumer.receive(1000)) is not None:
                received.append(m.get_text())
            assert sorted(received) == sorted(f"m{i}" for i in range(n))

    run(main)


@pytest.mark.parametrize("mode", [pyjms.AUTO_ACKNOWLEDGE, pyjms.DUPS_OK_ACKNOWLEDGE])
def test_cancelled_receives_on_two_consumers_of_one_context_lose_and_double_nothing(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    """Two consumers share one session, whose acknowledgement covers everything it consumed:
    receives cancelled at random on both, while messages flow, still give every message to a
    caller exactly once, and the queues are empty afterwards."""

    async def main() -> None:
        n = 150
        queues = [f"{qname}.a", f"{qname}.b"]
        received: dict[str, list[str]] = {name: [] for name in queues}
        async with afactory.create_context(mode) as ctx, afactory.create_context() as sender:
            producer = sender.create_producer()

            async def send_all() -> None:
                for i in range(n):
                    for name in queues:
                        await producer.send(sender.create_queue(name), f"{name}:{i}")
                    if i % 10 == 0:
                        await asyncio.sleep(0.005)

            async def take_all(name: str, sending: asyncio.Task[None]) -> None:
                consumer = await ctx.create_consumer(ctx.create_queue(name))
                while not sending.done():
                    try:
                        m = await asyncio.wait_for(consumer.receive(), 0.003)
                    except TimeoutError:
                        continue
                    received[name].append(m.get_text())
                while (m := await consumer.receive(2000)) is not None:
                    received[name].append(m.get_text())
                await consumer.close()

            sending = asyncio.create_task(send_all())
            await asyncio.gather(*(take_all(name, sending) for name in queues))
        for name in queues:
            assert sorted(received[name]) == sorted(f"{name}:{i}" for i in range(n))
        async with afactory.create_context() as check:
            for name in queues:
                assert await (await check.create_consumer(check.create_queue(name))).receive(300) is None

    run(main)


def test_a_marking_get_cancelled_after_it_marked_unmarks(afactory: aio.ConnectionFactory, qname: str) -> None:
    async def main() -> None:
        async with afactory.create_context() as ctx:
            q = ctx.create_queue(qname)
            await ctx.create_producer().send(q, "m1")
            marking = await ctx.create_marking_browser(q)
            get = asyncio.create_task(marking.get(BROWSE_HANDLE, wait_ms=5000))
            await asyncio.sleep(0)
            time.sleep(1.0)  # the loop is held: the worker browses and marks m1 meanwhile
            get.cancel()
            with pytest.raises(asyncio.CancelledError):
                await get
            # the cancelled get's mark was removed: this handle can browse m1 again
            assert (await marking.get(BROWSE_HANDLE, wait_ms=5000)).get_text() == "m1"
            await marking.close()

    run(main)


@pytest.mark.parametrize("mode", [pyjms.AUTO_ACKNOWLEDGE, pyjms.DUPS_OK_ACKNOWLEDGE])
def test_a_receive_cancelled_while_a_batch_is_held_hands_its_message_to_the_next_receive(
    afactory: aio.ConnectionFactory, qname: str, mode: int
) -> None:
    """A context's only consumer takes what the provider holds in one batch (pyjms.aio.consumer
    READ_AHEAD) and hands the messages to receives one by one. A receive cancelled after the
    worker took the batch, and one cancelled while the rest of the batch is held, lose nothing:
    each message reaches exactly one receive, in order, and is acknowledged then."""

    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 31)]
        async with afactory.create_context(mode) as ctx, afactory.create_context() as other:
            q = ctx.create_queue(qname)
            await other.create_producer().send_batch(q, bodies)
            consumer = await ctx.create_consumer(q)
            await _cancel_after_it_took(consumer)  # the worker took a batch; its caller went away
            await each_once_after_a_cancel(consumer, bodies)
        async with afactory.create_context() as check:
            assert await (await check.create_consumer(q)).receive(300) is None

    run(main)


def test_a_consumer_closed_while_a_batch_is_held_hands_back_only_what_no_receive_got(
    afactory: aio.ConnectionFactory, qname: str
) -> None:
    """AUTO_ACKNOWLEDGE: the consumer took a batch and handed some of it over; it is closed.
    The session's recovery hands back the whole batch (what was handed over was not
    acknowledged yet: the acknowledgement covers the whole session), and what was handed over
    is taken again and acknowledged: another consumer gets the rest, and nobody gets a message
    twice."""

    async def main() -> None:
        bodies = [f"m{i}" for i in range(1, 31)]
        async with afactory.create_context() as other:
            q = other.create_queue(qname)
            await other.create_producer().send_batch(q, bodies)
            async with afactory.create_context() as ctx:
                consumer = await ctx.create_consumer(q)
                got = await holding_a_batch(consumer, bodies, at_least=2)
                got.append((await consumer.receive(ARRIVES_MS)).get_text())  # one of the held batch
                assert consumer.kept_count() >= 1 and got == bodies[: len(got)]
                await consumer.close()
            elsewhere = await other.create_consumer(q)
            rest = [m.get_text() for m in await received(elsewhere, len(bodies) - len(got))]
            assert rest == bodies[len(got) :]
            assert await elsewhere.receive(300) is None

    run(main)
