"""The DLQ handler (pyjms.dlq.DLQHandler) run on the fake broker: every message on the DLQ gets
what its rules table says (Q01-Q05, Q08), in transactions of its own, with nothing changed but
what the rule says. One pass each (WAIT(NO)): the handler stops when nothing is pending."""

from __future__ import annotations

import pytest

from pyjms import ConnectionFactory, JMSContext, Queue, TextMessage
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from pyjms.dlq import DLQHandler, dead_letter
from pyjms.dlq import header as dlh
from pyjms.errors import ResourceAllocationRuntimeException
from pyjms.rules.reasons import MQRC
from tests.fakes.channel import FakeBroker
from tests.fakes.provider import fake_factory, threads_without_jvm

TABLE = """\
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)
DESTQ(PAY.*) ACTION(FWD) FWDQ(PAY.HOLD) HEADER(NO)
DESTQ(AUDIT) ACTION(FWD) FWDQ(AUDIT.REVIEW)
PERSIST(MQPER_NOT_PERSISTENT) ACTION(DISCARD)
ACTION(IGNORE)
"""


def dead(ctx: JMSContext, text: str, reason: int, dest_q: str, *, persistent: bool = True) -> None:
    message = TextMessage(text)
    message.set_string_property("app", "kept")
    message.set_jms_delivery_mode(2 if persistent else 1)
    message.set_jms_correlation_id(f"corr-{text}")
    dead_letter(ctx, message, "DLQ", reason, dest_q=dest_q)


def run(factory: ConnectionFactory, table: str = TABLE) -> DLQHandler:
    handler = DLQHandler(factory, "DLQ", table, retry_interval_s=0, wait=False, poll_interval_s=0.01)
    handler.run()
    return handler


def test_each_dead_letter_gets_what_the_first_matching_rule_says(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    with factory.create_context() as ctx:
        dead(ctx, "pay", MQRC.NOT_AUTHORIZED, "PAY.IN")
        dead(ctx, "audit", MQRC.NOT_AUTHORIZED, "AUDIT")
        dead(ctx, "lost", MQRC.UNKNOWN_OBJECT_NAME, "GONE", persistent=False)
        dead(ctx, "stays", MQRC.UNKNOWN_OBJECT_NAME, "GONE")
        dead(ctx, "full", MQRC.Q_FULL, "ORDERS")
    handler = run(factory)
    (held,) = broker.queue("PAY.HOLD")
    assert held.text() == "pay" and held.properties["app"] == (C.T_STRING, "kept")
    assert not held.properties.keys() & dlh.HEADER_PROPERTIES  # HEADER(NO)
    # a forward keeps the original send time (the copy's JMSTimestamp is its own)
    assert held.properties[contract.SEND_TIME][0] == C.T_LONG
    (review,) = broker.queue("AUDIT.REVIEW")
    assert review.properties[dlh.REASON] == (C.T_INT, MQRC.NOT_AUTHORIZED)  # header kept
    assert review.correlation_id == "corr-audit" and review.properties["app"] == (C.T_STRING, "kept")  # Q08
    (retried,) = broker.queue("ORDERS")
    assert retried.text() == "full" and dlh.REASON not in retried.properties  # RETRY strips the header
    assert [m.text() for m in broker.queue("DLQ")] == ["stays"]  # Q04: IGNORE leaves it
    stats = handler.stats
    assert (stats.forwarded, stats.retried, stats.discarded, stats.ignored) == (2, 1, 1, 1)


def test_q05_a_message_without_a_header_stays_and_is_counted(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    with factory.create_context() as ctx:
        ctx.create_producer().send(Queue("DLQ"), "no header")
    handler = run(factory)
    assert [m.text() for m in broker.queue("DLQ")] == ["no header"]
    assert handler.stats.without_header == 1 and handler.stats.processed == 0


def test_a_rule_whose_target_is_the_dlq_itself_is_a_failed_attempt(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    with factory.create_context() as ctx:
        dead(ctx, "loop", MQRC.Q_FULL, "ORDERS")
    handler = run(factory, "ACTION(FWD) FWDQ(DLQ)\n")
    assert [m.text() for m in broker.queue("DLQ")] == ["loop"]  # never sent round again
    assert handler.stats.failed_attempts >= 1 and handler.stats.forwarded == 0


def test_q02_q03_a_failing_retry_is_attempted_retry_times_then_the_next_rule_applies(
    factory: ConnectionFactory, broker: FakeBroker
) -> None:
    broker.refuse_sends("queue://ORDERS", ResourceAllocationRuntimeException("full", reason=MQRC.Q_FULL))
    with factory.create_context() as ctx:
        dead(ctx, "full", MQRC.Q_FULL, "ORDERS")
    handler = run(factory)
    assert handler.stats.failed_attempts == 2  # RETRY(2)
    assert broker.queue("ORDERS") == []
    (stays,) = broker.queue("DLQ")  # then IGNORE: the message stays, unchanged
    assert stays.text() == "full" and stays.properties[dlh.REASON] == (C.T_INT, MQRC.Q_FULL)
    assert handler.stats.ignored == 1 and handler.stats.retried == 0


def test_e14_dead_lettering_keeps_the_remaining_expiry(monkeypatch: pytest.MonkeyPatch) -> None:
    broker = FakeBroker()  # the broker's clock is pyjms's own here: a forward counts from now
    with threads_without_jvm(monkeypatch), fake_factory(broker).create_context() as ctx:
        ctx.create_producer().set_time_to_live(60_000).send(Queue("IN"), "short-lived")
        received = ctx.create_consumer(Queue("IN")).receive(100)
        assert received is not None
        expiration = received.get_jms_expiration()
        dead_letter(ctx, received, "DLQ", MQRC.Q_FULL)
    (dead,) = broker.queue("DLQ")
    assert abs(dead.expiration - expiration) <= 50  # the same moment, give or take the clock's reads
    assert 0 < expiration - dead.timestamp <= 60_000
    assert dead.properties[contract.SEND_TIME] == (C.T_LONG, received.get_jms_timestamp())
