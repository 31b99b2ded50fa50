"""Browse with mark for one handle (pyjms.browse, spec 003) on the fake broker: the handle's
marks live in the handle, so no mark service is involved; B01-B03 and a get by token (B07).
Cooperative marks, held by the mark service, are tested with brokers in tests/browse."""

from __future__ import annotations

import pytest

import pyjms
import pyjms.browse  # noqa: F401 - provides JMSContext.create_marking_browser and receive_by_token
from pyjms import ConnectionFactory, JMSContext
from pyjms.browse import (
    BROWSE_FIRST,
    BROWSE_HANDLE,
    BROWSE_NEXT,
    MARK_BROWSE_HANDLE,
    UNMARK_BROWSE_HANDLE,
    UNMARKED_BROWSE_MSG,
    NoMessageAvailable,
)
from tests.fakes.channel import FakeBroker


def fill(ctx: JMSContext, n: int) -> tuple[pyjms.Queue, list[str]]:
    queue = ctx.create_queue("Q")
    bodies = [f"m{i}" for i in range(n)]
    ctx.create_producer().send_batch(queue, bodies)
    return queue, bodies


def test_B01_mark_for_handle_and_unmarked_only_skips_marked(ctx: JMSContext, broker: FakeBroker) -> None:
    queue, bodies = fill(ctx, 4)
    with ctx.create_marking_browser(queue) as handle, ctx.create_marking_browser(queue) as other:
        assert handle.get(BROWSE_NEXT | MARK_BROWSE_HANDLE).get_text() == bodies[0]
        assert handle.get(BROWSE_NEXT).get_text() == bodies[1]  # no mark option: not marked
        assert handle.get(BROWSE_FIRST | UNMARKED_BROWSE_MSG).get_text() == bodies[1]
        assert handle.get(BROWSE_FIRST).get_text() == bodies[0]  # marked ones are seen without UNMARKED
        assert other.get(BROWSE_FIRST | UNMARKED_BROWSE_MSG).get_text() == bodies[0]  # marks are the handle's
        handle.unmark(handle.get(BROWSE_FIRST), UNMARK_BROWSE_HANDLE)
        assert handle.get(BROWSE_FIRST | UNMARKED_BROWSE_MSG).get_text() == bodies[0]
    assert len(broker.queue("Q")) == 4  # browsing removed nothing


def test_B02_B03_BROWSE_HANDLE_returns_each_message_once_then_2033(ctx: JMSContext) -> None:
    queue, bodies = fill(ctx, 30)
    with ctx.create_marking_browser(queue) as handle:
        got = []
        while (m := handle.get_or_none(BROWSE_HANDLE)) is not None:
            got.append(m.get_text())
        assert got == bodies
        with pytest.raises(NoMessageAvailable) as e:
            handle.get(BROWSE_HANDLE)
        assert e.value.reason == 2033
        ctx.create_producer().send(queue, "late")
        assert handle.get(BROWSE_HANDLE).get_text() == "late"  # BROWSE_FIRST comes back to the head


def test_B07_a_token_gets_exactly_its_message(
    ctx: JMSContext, factory: ConnectionFactory, broker: FakeBroker
) -> None:
    queue, bodies = fill(ctx, 3)
    with ctx.create_marking_browser(queue) as handle:
        handle.get(BROWSE_HANDLE)
        second = handle.get(BROWSE_HANDLE)
    with factory.create_context() as consumer_ctx:
        got = consumer_ctx.create_consumer(queue).receive_by_token(second.get_message_token())
        assert got is not None and got.get_text() == bodies[1]
    assert [m.text() for m in broker.queue("Q")] == [bodies[0], bodies[2]]


def test_browse_options_are_checked_per_call(ctx: JMSContext) -> None:
    queue, _ = fill(ctx, 1)
    with (
        ctx.create_marking_browser(queue) as handle,
        pytest.raises(pyjms.InvalidArgumentRuntimeException) as e,
    ):
        handle.get(BROWSE_FIRST | BROWSE_NEXT)
    assert e.value.reason == 2046
