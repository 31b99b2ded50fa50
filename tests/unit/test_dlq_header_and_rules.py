"""A dead letter's header (pyjms.dlq.header) and what a rules table (pyjms.dlq.rules) makes of
it: the header as it crosses the wire and comes back, ActiveMQ's own entries, the fields a
table is matched against, and the action each message gets by the table (the handler's
bookkeeping is pyjms.dlq.decisions', tested in test_dlq_decisions.py). Messages are
dead-lettered and received through the fake channel, so their properties are decoded from the
shim's records."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pyjms import BytesMessage, Message, Queue, TextMessage
from pyjms.bridge import codec as C
from pyjms.dlq import Action, DeadLetterHeader, RulesTable
from pyjms.dlq import header as dlh
from pyjms.errors import (
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    JMSSecurityRuntimeException,
    MessageFormatRuntimeException,
    ResourceAllocationRuntimeException,
)
from pyjms.rules.reasons import MQRC
from tests.fakes.channel import FakeBroker, StoredMessage, encode_record

#: 2026-01-02 03:04:05.670 UTC
AT_MS = int(datetime(2026, 1, 2, 3, 4, 5, 670_000, tzinfo=UTC).timestamp() * 1000)

TABLE = RulesTable.parse(
    """\
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(3)
REASON(MQRC_NOT_AUTHORIZED) DESTQ(PAY.*) ACTION(FWD) FWDQ(PAY.HOLD) HEADER(NO)
MSGTYPE(MQMT_REQUEST) ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)
PERSIST(MQPER_NOT_PERSISTENT) ACTION(DISCARD)
FORMAT(MQSTR) APPLNAME(ActiveMQ) ACTION(FWD) FWDQ(&DESTQ)
ACTION(IGNORE)
"""
)


def dead_letter_through_the_wire(
    message: Message, header: DeadLetterHeader, *, reply_to: str | None = None, mode: int = 2
) -> Message:
    """The message as the handler browses it: sent with the header's properties (as
    pyjms.dlq.header.dead_letter puts it) and received from the fake broker's queue."""
    channel = FakeBroker().open_channel()
    channel.start()
    record = message.encode(reply_to=reply_to, add_properties=header.typed_properties())
    channel.send("queue://DLQ", record, mode, 4, 0, 0, 0, "dead_letter")
    raw = channel.consumer("queue://DLQ", None, False, "browse").receive(0, True, "receive")
    assert raw is not None
    return Message.from_record(C.IncomingRecord(raw, 0))


def table_says(message: Message, queue_manager: str = "QM1", used_up: frozenset[int] = frozenset()) -> tuple:
    """The action the table gives, its target, and the rule's index; rules in ``used_up``
    (their retries spent) are passed over for the next matching one (Q03)."""
    header = DeadLetterHeader.from_message(message, queue_manager=queue_manager)
    assert header is not None
    fields = dlh.message_fields(message, header, queue_manager)
    found = TABLE.first_match(fields)
    while found is not None and found[0] in used_up:
        found = TABLE.first_match(fields, found[0] + 1)
    if found is None:
        return (None, None, None)
    index, rule = found
    target = rule.forward_target(fields) if rule.action is Action.FWD else None
    return (rule.action, target, index)


def test_a_header_crosses_the_wire_and_reads_back_field_for_field() -> None:
    header = DeadLetterHeader.create(MQRC.Q_FULL, "ORDERS", dest_q_mgr="QM2", format="MQSTR", at_ms=AT_MS)
    assert (header.put_date, header.put_time) == ("20260102", "03040567")
    got = DeadLetterHeader.from_message(dead_letter_through_the_wire(TextMessage("x"), header))
    assert got == header and got.reason_name == "MQRC_Q_FULL"
    assert got.put_datetime == datetime(2026, 1, 2, 3, 4, 5, 670_000, tzinfo=UTC)


def test_q05_a_message_without_a_header_has_none() -> None:
    assert DeadLetterHeader.from_message(TextMessage("plain")) is None


def test_a_malformed_header_is_a_message_format_error_naming_the_message() -> None:
    stored = StoredMessage(C.KIND_TEXT, "x", {dlh.REASON: (C.T_STRING, "full")}, message_id="ID:9")
    message = Message.from_record(C.IncomingRecord(encode_record(stored), 0))
    with pytest.raises(MessageFormatRuntimeException, match="ID:9"):
        DeadLetterHeader.from_message(message)


@pytest.mark.parametrize("reason", [-1, 10**9, True, "2053", 2.0])
def test_a_reason_must_be_an_mqrc_or_mqfb_code(reason: object) -> None:
    with pytest.raises(InvalidArgumentRuntimeException):
        DeadLetterHeader.create(reason, "Q")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cause", "reason"),
    [
        (f"Message Expired. Expiration:{AT_MS}", dlh.MQFB_EXPIRATION),
        ("Delivery[7] exceeds redelivery policy limit:RedeliveryPolicy {maximumRedeliveries = 6}", 2362),
        ("something else broke", 2195),
    ],
)
def test_an_entry_activemq_dead_lettered_maps_onto_the_same_header(cause: str, reason: int) -> None:
    stored = StoredMessage(C.KIND_BYTES, b"", {dlh.ACTIVEMQ_CAUSE: (C.T_STRING, cause)}, timestamp=AT_MS)
    message = Message.from_record(C.IncomingRecord(encode_record(stored), 0))
    header = DeadLetterHeader.from_message(
        message, queue_manager="QM1", original_destination="queue://ORDERS"
    )
    assert header is not None
    assert (header.reason, header.dest_q, header.dest_q_mgr) == (reason, "ORDERS", "QM1")
    assert (header.put_appl_name, header.put_appl_type, header.format) == ("ActiveMQ", dlh.MQAT_QMGR, "")
    assert header.cause == cause and dlh.ACTIVEMQ_CAUSE in dlh.HEADER_PROPERTIES
    # put when it expired, else when the message was sent
    assert header.put_date == "20260102" and header.put_time == "03040567"


def test_the_fields_a_table_matches_come_from_header_and_message() -> None:
    header = DeadLetterHeader.create(MQRC.Q_FULL, "ORDERS", put_appl_name="app", format="MQSTR")
    message = dead_letter_through_the_wire(TextMessage("x"), header, reply_to="queue://REPLIES", mode=1)
    fields = dlh.message_fields(message, header, "QM1")
    assert fields["destq"] == "ORDERS" and fields["reason"] == MQRC.Q_FULL
    assert (fields["applname"], fields["format"], fields["persist"]) == ("app", "MQSTR", 0)
    assert (fields["replyq"], fields["replyqm"], fields["msgtype"]) == ("REPLIES", "QM1", 1)  # MQMT_REQUEST


def test_ibm_jms_properties_override_the_mqmd_defaults() -> None:
    message = TextMessage("x")
    message.set_int_property("JMS_IBM_MsgType", 2)  # MQMT_REPLY
    message.set_int_property("JMS_IBM_Feedback", 258)
    message.set_string_property("JMS_IBM_MQMD_ReplyToQMgr", "QM9")
    message.set_jms_reply_to(Queue("R"))
    fields = dlh.message_fields(message, DeadLetterHeader.create(1, "Q"), "QM1")
    assert (fields["msgtype"], fields["feedback"], fields["replyqm"]) == (2, 258, "QM9")
    assert dlh.message_fields(TextMessage(), DeadLetterHeader.create(1, "Q"), "QM1")["replyqm"] == ""


def test_q01_q02_q03_a_full_queue_is_retried_then_the_next_matching_rule_applies() -> None:
    header = DeadLetterHeader.create(MQRC.Q_FULL, "ORDERS", format="MQSTR")
    message = dead_letter_through_the_wire(TextMessage("x"), header)
    assert table_says(message) == (Action.RETRY, None, 0)
    # RETRY(3) spent: the next rule that matches (persistent, so not DISCARD) is IGNORE
    assert table_says(message, used_up=frozenset({0})) == (Action.IGNORE, None, 5)


def test_q03_a_rule_that_does_not_match_is_never_the_next_one() -> None:
    header = DeadLetterHeader.create(MQRC.NOT_AUTHORIZED, "PAY.IN")
    message = dead_letter_through_the_wire(BytesMessage(b"x"), header)
    assert table_says(message) == (Action.FWD, ("PAY.HOLD", ""), 1)
    assert table_says(message, used_up=frozenset({1})) == (Action.IGNORE, None, 5)


def test_a_request_goes_back_to_its_reply_queue_on_its_queue_manager() -> None:
    header = DeadLetterHeader.create(MQRC.UNKNOWN_OBJECT_NAME, "GONE")
    message = dead_letter_through_the_wire(TextMessage("x"), header, reply_to="queue://ASKER")
    assert table_says(message, queue_manager="QM7") == (Action.FWD, ("ASKER", "QM7"), 2)


def test_a_non_persistent_message_no_earlier_rule_takes_is_discarded() -> None:
    header = DeadLetterHeader.create(MQRC.UNKNOWN_OBJECT_NAME, "GONE")
    assert table_says(dead_letter_through_the_wire(TextMessage("x"), header, mode=1)) == (
        Action.DISCARD,
        None,
        3,
    )


def test_an_expired_activemq_text_entry_goes_back_to_where_it_was_meant_for() -> None:
    stored = StoredMessage(
        C.KIND_TEXT, "x", {dlh.ACTIVEMQ_CAUSE: (C.T_STRING, "Message Expired. Expiration:5")}, timestamp=AT_MS
    )
    message = Message.from_record(C.IncomingRecord(encode_record(stored), 0))
    header = DeadLetterHeader.from_message(message, original_destination="queue://ORDERS")
    assert header is not None and header.format == "MQSTR"
    fields = dlh.message_fields(message, header, "QM1")
    index, rule = TABLE.first_match(fields) or (None, None)
    assert index == 4 and rule is not None and rule.forward_target(fields) == ("ORDERS", "")


def test_q04_a_message_only_ignore_matches_stays() -> None:
    header = DeadLetterHeader.create(MQRC.UNKNOWN_OBJECT_NAME, "GONE")
    assert table_says(dead_letter_through_the_wire(BytesMessage(b"x"), header)) == (Action.IGNORE, None, 5)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (JMSRuntimeException("x", reason=2085), 2085),
        (ResourceAllocationRuntimeException("full"), MQRC.Q_FULL),
        (InvalidDestinationRuntimeException("gone"), MQRC.UNKNOWN_OBJECT_NAME),
        (JMSSecurityRuntimeException("no"), MQRC.NOT_AUTHORIZED),
        (JMSRuntimeException("other"), dlh.MQRC_UNEXPECTED_ERROR),
    ],
)
def test_a_failed_put_is_dead_lettered_with_the_reason_for_its_error(
    error: JMSRuntimeException, reason: int
) -> None:
    assert dlh.reason_for(error) == reason
    header = DeadLetterHeader.for_failure(Queue("T"), error, message=TextMessage("x"), at_ms=AT_MS)
    assert (header.reason, header.dest_q, header.format) == (reason, "T", "MQSTR")


def test_dest_q_names_a_queue_plainly_and_anything_else_by_its_key() -> None:
    assert dlh.destination_name("queue://ORDERS") == "ORDERS"
    assert dlh.destination_name("topic://NEWS") == "topic://NEWS"
    assert dlh.destination_name(None) == dlh.destination_name("") == ""


@pytest.mark.parametrize(
    ("date", "time"), [("2026010", "03040567"), ("20261302", "03040567"), ("", ""), ("20260102", "25000000")]
)
def test_a_put_stamp_that_is_no_time_reads_as_none(date: str, time: str) -> None:
    assert DeadLetterHeader(1, "Q", put_date=date, put_time=time).put_datetime is None
