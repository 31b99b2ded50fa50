"""Issue 32 item 6: every int timeout is honoured, a huge one meaning "wait without end", or
refused with a pyjms error; never an OverflowError or a provider's clock overflowing."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import timedelta

import pytest

import pyjms
import pyjms.aio as aio

pytestmark = pytest.mark.providers("activemq", "artemis")

HUGE = [2**31, 2**63, 2**64 + 1, 10**400, timedelta.max]


def _send_later(factory, queue, text, after_s=0.7):
    def send():
        time.sleep(after_s)
        with factory.create_context() as ctx:
            ctx.create_producer().send(ctx.create_queue(queue), text)

    t = threading.Thread(target=send, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("huge", HUGE, ids=["2^31", "2^63", "2^64+1", "10^400", "timedelta.max"])
def test_a_huge_receive_timeout_waits_until_a_message_comes(factory, ctx, qname, huge):
    consumer = ctx.create_consumer(ctx.create_queue(qname))
    sender = _send_later(factory, qname, "late")
    started = time.monotonic()
    m = consumer.receive(huge)
    assert m is not None and m.get_text() == "late"
    assert time.monotonic() - started >= 0.5  # it waited for the message: no early empty return
    sender.join()


def test_receive_body_honours_a_huge_timeout(factory, ctx, qname):
    consumer = ctx.create_consumer(ctx.create_queue(qname))
    sender = _send_later(factory, qname, "late")
    assert consumer.receive_body(str, 2**63) == "late"
    sender.join()
    started = time.monotonic()
    assert consumer.receive_body(str, 700) is None  # a wait longer than a slice still ends
    assert 0.6 <= time.monotonic() - started < 5


def test_a_huge_batch_is_what_is_there_and_a_huge_wait_waits(factory, ctx, qname):
    q = ctx.create_queue(qname)
    consumer = ctx.create_consumer(q)
    assert consumer.receive_batch(2**31, 10) == []  # "up to" more than a crossing can carry
    ctx.create_producer().send_batch(q, ["a", "b", "c"])
    got = []
    while len(got) < 3:
        got += consumer.receive_batch(2**63, 2000)
    assert [m.get_text() for m in got] == ["a", "b", "c"]
    sender = _send_later(factory, qname, "late")
    assert [m.get_text() for m in consumer.receive_batch(10, 2**63)] == ["late"]
    sender.join()


def test_a_huge_wait_still_ends_when_the_consumer_closes(ctx, qname):
    consumer = ctx.create_consumer(ctx.create_queue(qname))
    threading.Timer(0.7, consumer.close).start()
    started = time.monotonic()
    with pytest.raises(pyjms.JMSRuntimeException):
        consumer.receive(2**63)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("bad", [-1, -(2**63), 1.5, "10", True])
def test_a_timeout_that_is_no_wait_is_refused_by_name(ctx, qname, bad):
    consumer = ctx.create_consumer(ctx.create_queue(qname))
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="timeout_ms"):
        consumer.receive_batch(1, bad)


def test_asyncio_receive_honours_a_huge_timeout(factory, qname):
    async def main():
        async with aio.ConnectionFactory.of(factory).create_context() as actx:
            consumer = await actx.create_consumer(actx.create_queue(qname))
            sender = _send_later(factory, qname, "late")
            m = await consumer.receive(2**63)
            sender.join()
            got = await consumer.receive_batch(2**31, 10)
            return m.get_text(), got

    text, rest = asyncio.run(main())
    assert text == "late" and rest == []
