"""The DLQ handler's decisions (pyjms.dlq.decisions) without a JVM or a broker: which rule a
dead letter gets and where its put goes (Q01-Q04, Q08), its retry counts (Q02, Q03), what the
handler leaves on the DLQ and what it forgets. The gets and puts are tested with a broker in
tests/dlq."""

from __future__ import annotations

from typing import Any

import pytest

import pyjms
from pyjms.api.provider import ProviderPlugin
from pyjms.bridge.contract import XQH_REMOTE_Q, XQH_REMOTE_Q_MGR
from pyjms.dlq import DeadLetterHeader, HandlerStats, RulesTable
from pyjms.dlq.decisions import UNREACHABLE_WARNING, Decisions
from pyjms.dlq.header import ACTIVEMQ_CAUSE, MQRC_BACKOUT_THRESHOLD_REACHED
from pyjms.providers.activemq import ActiveMQPlugin
from pyjms.rules.reasons import MQRC

TABLE = """\
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)
REASON(MQRC_Q_FULL) ACTION(FWD) FWDQ(FULL.HOLD)
DESTQ(REMOTE.*) ACTION(FWD) FWDQ(&DESTQ) FWDQM(QM2)
DESTQ(LOOP) ACTION(FWD) FWDQ(DLQ)
DESTQ(KEEP) ACTION(IGNORE)
"""


def decisions(table: str = TABLE, provider: ProviderPlugin | None = None, **kwargs: Any) -> Decisions:
    return Decisions(
        RulesTable.parse(table),
        "DLQ",
        "QM1",
        provider=provider or ProviderPlugin(),
        retry_interval_s=kwargs.get("retry_interval_s", 60.0),
        report_interval_s=60.0,
        transmission_queues=kwargs.get("transmission_queues", {}),
        stats=HandlerStats(),
    )


def dead_letter(message_id: str, reason: int, dest_q: str) -> tuple[pyjms.TextMessage, DeadLetterHeader]:
    """A message got from the DLQ, and the header the handler read of it."""
    message = pyjms.TextMessage("body")
    message.set_jms_message_id(message_id)
    return message, DeadLetterHeader.create(reason, dest_q)


def test_the_first_matching_rule_names_the_move_and_its_target() -> None:
    book = decisions()
    message, header = dead_letter("ID:1", MQRC.Q_FULL, "APP.IN")
    move = book.decide(message, header)
    assert move is not None and move.rule.action.value == "RETRY" and move.index == 0
    assert move.target == pyjms.Queue("APP.IN") and move.add == {}


def test_a_used_up_rule_hands_the_message_to_the_next_matching_one() -> None:
    book = decisions()
    message, header = dead_letter("ID:1", MQRC.Q_FULL, "APP.IN")
    error = pyjms.ResourceAllocationRuntimeException("full")
    for attempt in (1, 2):
        move = book.decide(message, header)
        assert move is not None and move.index == 0
        book.attempting(move)
        book.failed(move.message_id, move.index, move.rule, error, counted=True)
        assert book.stats.failed_attempts == attempt
    move = book.decide(message, header)  # RETRY(2) is used up: FWD (Q03)
    assert move is not None and move.index == 1 and move.target == pyjms.Queue("FULL.HOLD")


def test_a_failed_attempt_waits_for_the_retry_interval() -> None:
    book = decisions(retry_interval_s=30.0)
    message, header = dead_letter("ID:1", MQRC.Q_FULL, "APP.IN")
    move = book.decide(message, header)
    assert move is not None
    book.attempting(move)
    book.failed(move.message_id, move.index, move.rule, pyjms.JMSRuntimeException("no"), counted=True)
    due = book.next_retry()
    assert due is not None
    assert book.waiting("ID:1", due - 1) and not book.waiting("ID:1", due + 1)
    assert book.held(due - 1) == (["ID:1"], due)
    assert book.held(due + 1) == ([], None)


def test_a_remote_queue_manager_is_reached_through_its_transmission_queue() -> None:
    book = decisions(transmission_queues={"QM2": "XMIT.QM2"})
    message, header = dead_letter("ID:1", MQRC.UNKNOWN_OBJECT_NAME, "REMOTE.ORDERS")
    move = book.decide(message, header)
    assert move is not None and move.target == pyjms.Queue("XMIT.QM2")
    assert move.add == {XQH_REMOTE_Q: "REMOTE.ORDERS", XQH_REMOTE_Q_MGR: "QM2"}


def test_ignore_and_no_rule_leave_the_message() -> None:
    book = decisions()
    kept, kept_header = dead_letter("ID:1", MQRC.UNKNOWN_OBJECT_NAME, "KEEP")
    unmatched, unmatched_header = dead_letter("ID:2", MQRC.NOT_AUTHORIZED, "ELSEWHERE")
    assert book.decide(kept, kept_header) is None and book.decide(unmatched, unmatched_header) is None
    assert book.tracked["ID:1"].left and book.tracked["ID:2"].left and book.stats.ignored == 2
    assert sorted(book.held(0.0)[0]) == ["ID:1", "ID:2"] and book.next_retry() is None


def test_a_target_that_is_the_dlq_itself_is_a_failed_attempt() -> None:
    book = decisions()
    message, header = dead_letter("ID:1", MQRC.UNKNOWN_OBJECT_NAME, "LOOP")
    assert book.decide(message, header) is None
    assert book.stats.failed_attempts == 1 and not book.tracked["ID:1"].left


def test_a_body_pyjms_cannot_put_unchanged_is_a_failed_attempt() -> None:
    book = decisions()
    header = DeadLetterHeader.create(MQRC.Q_FULL, "APP.IN")
    message = pyjms.StreamMessage()
    message.set_jms_message_id("ID:9")
    assert book.decide(message, header) is None and book.stats.failed_attempts == 1


def test_what_is_remembered_of_a_message_gone_goes_after_three_whole_browses() -> None:
    book = decisions()
    message, header = dead_letter("ID:1", MQRC.UNKNOWN_OBJECT_NAME, "KEEP")
    book.decide(message, header)
    book.headerless("ID:2")
    book.headerless("ID:2")  # counted once
    assert book.stats.without_header == 1
    for _ in range(2):
        book.forget_gone(set())
        assert "ID:1" in book.tracked
    assert book.without_header == set()
    book.seen_in_browse("ID:1")  # seen again: the count starts over
    book.forget_gone(set())
    book.forget_gone(set())
    assert "ID:1" in book.tracked
    book.forget_gone(set())
    assert "ID:1" not in book.tracked


def test_out_of_reach_for_some_passes_then_given_up() -> None:
    book = decisions()
    for passes in range(1, UNREACHABLE_WARNING + 1):
        book.unreachable(["ID:1"])
        assert book.unreached() == (passes < UNREACHABLE_WARNING)
    book.reached()
    assert book.tracked["ID:1"].unreachable == 0


class _QuietActiveMQ(ActiveMQPlugin):
    """ActiveMQ's plug-in whose broker recorded no details (no connection needed)."""

    def dead_letter_details(self, ctx: Any, queue: str) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize(("provider", "mapped"), [(_QuietActiveMQ(), True), (ProviderPlugin(), False)])
def test_an_entry_the_broker_dead_lettered_gets_its_header_from_the_provider(
    provider: ProviderPlugin, mapped: bool
) -> None:
    book = decisions(provider=provider)
    message = pyjms.TextMessage("poison")
    message.set_property(ACTIVEMQ_CAUSE, "java.lang.Throwable: Delivery[7] exceeds redelivery policy limit")
    message.set_jms_message_id("ID:7")
    assert book.details_unread(message) == mapped
    header = book.header(None, message)  # type: ignore[arg-type]  # no context: no details to read
    assert (header is not None) == mapped
    if header is not None:
        assert header.reason == MQRC_BACKOUT_THRESHOLD_REACHED and header.dest_q_mgr == "QM1"
        assert not book.details_unread(message)  # read once: the entry was not among them


def test_a_resent_copy_of_a_dead_letter_is_recognised() -> None:
    book = decisions()
    first, _ = dead_letter("ID:1", MQRC.Q_FULL, "APP.IN")
    first.set_duplicate_id("order-1")
    again, _ = dead_letter("ID:2", MQRC.Q_FULL, "APP.IN")
    again.set_duplicate_id("order-1")
    assert not book.is_resend(first) and not book.is_resend(first)
    assert book.is_resend(again)


def test_a_header_that_names_no_queue_cannot_be_retried() -> None:
    book = decisions("ACTION(RETRY)\n")
    message, header = dead_letter("ID:1", MQRC.Q_FULL, "")
    assert book.decide(message, header) is None and book.stats.failed_attempts == 1
