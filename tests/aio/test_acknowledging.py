"""When an AUTO_ACKNOWLEDGE or DUPS_OK_ACKNOWLEDGE asyncio context acknowledges what it handed
over (pyjms.aio.handover): before the next call the caller's task queued, or, if it queued none,
in a job of its own. A process that dies after a receive, having made no other call of the
context, has acknowledged the message all the same: the broker does not deliver it again."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import pyjms
import pyjms.aio as aio
from pyjms.bridge.urls import with_options
from tests.aio.conftest import run
from tests.conftest import ROOT, provider_of

# the receiving process is separate, so the broker is too (ActiveMQ over TCP, Artemis's core protocol)
pytestmark = [pytest.mark.providers("activemq", "artemis"), pytest.mark.activemq_tcp_only]

#: receives one message, makes no other call of its context for a second, then dies unclosed
RECEIVE_THEN_DIE = textwrap.dedent(
    """
    import asyncio, os, sys
    import pyjms, pyjms.aio as aio

    async def main():
        ctx = await aio.ConnectionFactory(sys.argv[1]).create_context(int(sys.argv[3]))
        consumer = await ctx.create_consumer(ctx.create_queue(sys.argv[2]))
        message = await consumer.receive(20_000)
        print(message.get_text(), flush=True)
        await asyncio.sleep(1.0)  # the loop idles: no other call of the context follows
        os._exit(0)  # no close, no clean-up: whatever was not acknowledged comes again

    asyncio.run(main())
    """
)


def _received_by_a_dying_process(url: str, qname: str, bodies: list[str], script: str, *args: str) -> int:
    """Sends ``bodies`` to qname, runs ``script`` (url, qname, *args), which receives them and
    dies unclosed, and checks that it printed them. Returns how long to wait for the broker to
    hand back what the dead client left unacknowledged: ActiveMQ does at once; Artemis clears a
    dead client's session when its connection's TTL runs out (60 s by default; checked every
    2 s), so the script connects with a TTL of 2 s and an unacknowledged message is back within
    6 s."""

    async def send() -> None:
        async with aio.ConnectionFactory(url).create_context() as ctx:
            await ctx.create_producer().send_batch(ctx.create_queue(qname), bodies)

    run(send)
    receiving, back_within_ms = url, 2000
    if provider_of(url) == "artemis":
        receiving = with_options(url, {"connectionTTL": "2000"})
        back_within_ms = 6000
    died = subprocess.run(
        [sys.executable, "-c", script, receiving, qname, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert died.returncode == 0 and died.stdout.split() == bodies, died.stdout + died.stderr[-3000:]
    return back_within_ms


@pytest.mark.parametrize("mode", [pyjms.AUTO_ACKNOWLEDGE, pyjms.DUPS_OK_ACKNOWLEDGE])
def test_a_message_handed_over_is_acknowledged_though_no_other_call_of_its_context_follows(
    url: str, qname: str, mode: int
) -> None:
    back_within_ms = _received_by_a_dying_process(url, qname, ["m1"], RECEIVE_THEN_DIE, str(mode))

    async def check() -> None:
        async with aio.ConnectionFactory(url).create_context() as ctx:
            consumer = await ctx.create_consumer(ctx.create_queue(qname))
            again = await consumer.receive(back_within_ms)
            assert again is None, f"{again.get_text()!r} came again: it was never acknowledged"

    run(check)


#: receives a batch, handles it for a second without yielding to the loop, then dies unclosed
RECEIVE_BATCH_THEN_DIE = textwrap.dedent(
    """
    import asyncio, os, sys, time
    import pyjms, pyjms.aio as aio

    async def main():
        ctx = await aio.ConnectionFactory(sys.argv[1]).create_context()
        consumer = await ctx.create_consumer(ctx.create_queue(sys.argv[2]))
        batch = []
        while len(batch) < 5:
            batch += await consumer.receive_batch(5 - len(batch), 20_000)
        print(*(m.get_text() for m in batch), flush=True)
        time.sleep(1.0)  # handling the batch on the loop's thread: the task never yields
        os._exit(0)

    asyncio.run(main())
    """
)


def test_a_batch_is_acknowledged_while_its_caller_handles_it_where_the_broker_waits_for_acknowledgements(
    url: str, qname: str
) -> None:
    """ActiveMQ Classic counts what a consumer has not acknowledged against its prefetch, so an
    AUTO_ACKNOWLEDGE context acknowledges a batch as soon as it reaches its caller, on the worker
    (ProviderPlugin.dispatches_on_acknowledgement): a process that dies while it handles the
    batch, never having yielded to its loop, has acknowledged it. Artemis's client is sent more
    as it consumes, so there the acknowledgement waits for the caller's next call or yield (one
    wake-up of the worker less per batch), and such a batch comes again."""
    bodies = [f"m{i}" for i in range(5)]
    back_within_ms = _received_by_a_dying_process(url, qname, bodies, RECEIVE_BATCH_THEN_DIE)

    async def again() -> list[str]:
        async with aio.ConnectionFactory(url).create_context() as ctx:
            consumer = await ctx.create_consumer(ctx.create_queue(qname))
            came: list[str] = []
            while (message := await consumer.receive(back_within_ms if not came else 500)) is not None:
                came.append(message.get_text())
            return came

    came = run(again)
    if provider_of(url) == "artemis":
        assert came == bodies, "the batch was acknowledged before its caller's task yielded"
    else:
        assert came == [], f"{came} came again: the batch was not acknowledged while it was handled"
