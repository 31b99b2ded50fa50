"""Commits whose outcome is unknown (issue 15, finding 4). The broker commits, and the client
never hears the answer because its connection fails (tests/faults/proxy.py loses the answer,
then cuts the connection). pyjms then says the outcome is unknown, with its own error
(TransactionInDoubtRuntimeException, MQRC_CALL_INTERRUPTED 2549), never that it rolled back."""

from __future__ import annotations

import re
import uuid

import pytest

import pyjms
from tests.conftest import drain
from tests.faults.proxy import AnswerLosingProxy


@pytest.fixture
def proxy(tcp_broker):
    p = AnswerLosingProxy(int(re.search(r":(\d+)", tcp_broker.tcp_url).group(1)))
    yield p
    p.close()


def _commit_losing_its_answer(ctx: pyjms.JMSContext, proxy: AnswerLosingProxy) -> BaseException | None:
    """Commits while the proxy loses the broker's answer and then cuts the connection."""
    proxy.lose_answers()
    proxy.cut_after_next_request(1.0)
    try:
        ctx.commit()
    except pyjms.JMSRuntimeException as e:
        return e
    return None


@pytest.mark.parametrize("transport", ["tcp", "failover"])
def test_a_commit_whose_answer_is_lost_is_in_doubt_and_was_in_fact_committed(tcp_broker, proxy, transport):
    url = f"tcp://127.0.0.1:{proxy.port}"
    if transport == "failover":
        url = f"failover:({url})?initialReconnectDelay=100&maxReconnectAttempts=50"
    q = f"DOUBT.{uuid.uuid4().hex[:8]}"
    ctx = pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED)
    try:
        ctx.create_producer().send_batch(ctx.create_queue(q), [f"m{i}" for i in range(20)])
        error = _commit_losing_its_answer(ctx, proxy)
    finally:
        ctx.close()
    assert isinstance(error, pyjms.TransactionInDoubtRuntimeException), repr(error)
    assert not isinstance(error, pyjms.TransactionRolledBackRuntimeException)
    assert error.reason == 2549 and error.reason_name == "MQRC_CALL_INTERRUPTED"
    assert "outcome is unknown" in str(error)
    # why it must not say "rolled back": the broker did commit, and a resend would duplicate
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as check:
        assert len(drain(check.create_consumer(check.create_queue(q)), 2000)) == 20


def test_a_consumers_commit_whose_answer_is_lost_is_in_doubt_and_the_broker_took_its_messages(
    tcp_broker, proxy
):
    """A transaction of received messages. When its commit fails, ActiveMQ's client first rolls
    back its consumer, whose own send then meets the failed connection; the client reports that
    error ("Cannot send, channel has already failed") instead of the commit's. So pyjms must not
    read the error text as "never sent": the commit was written, and the broker committed it."""
    q = f"DOUBT.{uuid.uuid4().hex[:8]}"
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as filler:
        filler.create_producer().send_batch(filler.create_queue(q), [f"m{i}" for i in range(20)])
    ctx = pyjms.ConnectionFactory(f"tcp://127.0.0.1:{proxy.port}").create_context(pyjms.SESSION_TRANSACTED)
    try:
        received = drain(ctx.create_consumer(ctx.create_queue(q)), 1000)
        assert len(received) == 20
        error = _commit_losing_its_answer(ctx, proxy)
    finally:
        ctx.close()
    assert isinstance(error, pyjms.TransactionInDoubtRuntimeException), repr(error)
    assert error.reason == 2549, repr(error)
    # why it must not say "not sent, nothing committed": the broker did commit, and the messages
    # that would "come again" are gone
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as check:
        assert drain(check.create_consumer(check.create_queue(q)), 2000) == []
