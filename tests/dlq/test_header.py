"""The dead-letter header as JMS properties, ActiveMQ's own entries mapped onto it, dead_letter()."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import pyjms
from pyjms.bridge import codec as C
from pyjms.dlq import DeadLetterHeader, DLQHandler, dead_letter, handler_factory
from pyjms.dlq.header import (
    ACTIVEMQ_CAUSE,
    HEADER_PROPERTIES,
    MQFB_EXPIRATION,
    MQRC_BACKOUT_THRESHOLD_REACHED,
    MQRC_UNEXPECTED_ERROR,
    REASON,
    message_fields,
    put_stamp,
    reason_for,
)
from pyjms.rules.reasons import MQRC

EXPIRED_CAUSE = "java.lang.Throwable: Message Expired. Expiration:1795305744745"
POISON_CAUSE = (
    "java.lang.Throwable: Delivery[7] exceeds redelivery policy limit:RedeliveryPolicy "
    "{destination = null, maximumRedeliveries = 6}, cause:null"
)


def test_header_round_trips_through_properties():
    header = DeadLetterHeader.create(
        MQRC.Q_FULL,
        "ORDERS",
        dest_q_mgr="QM1",
        put_appl_name="delay processor",
        format="MQSTR",
        at_ms=1_700_000_000_123,
    )
    # JMS_PYJMS_* properties are pyjms's own: written as typed pairs, as pyjms's components do
    message = pyjms.TextMessage("x").copy(add_properties=header.typed_properties())
    assert set(header.to_properties()) == HEADER_PROPERTIES - {ACTIVEMQ_CAUSE}
    assert message.get_int_property(REASON) == 2053
    assert DeadLetterHeader.from_message(message) == header
    assert header.put_date == "20231114" and header.put_time == "22132012"  # UTC, hundredths
    assert header.put_datetime == datetime(2023, 11, 14, 22, 13, 20, 120_000, tzinfo=UTC)
    assert header.reason_name == "MQRC_Q_FULL"


def test_no_header_is_none_and_a_bad_reason_is_refused():
    assert DeadLetterHeader.from_message(pyjms.TextMessage("plain")) is None
    with pytest.raises(pyjms.InvalidArgumentRuntimeException):
        DeadLetterHeader.create(-1, "Q")
    malformed = pyjms.TextMessage("x").copy(add_properties={REASON: (C.T_STRING, "not a number")})
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="malformed dead-letter header"):
        DeadLetterHeader.from_message(malformed)


def test_put_stamp_is_ibm_format():
    assert put_stamp(0) == ("19700101", "00000000")
    assert put_stamp(86_399_999) == ("19700101", "23595999")


@pytest.mark.parametrize(
    ("cause", "reason"),
    [
        (EXPIRED_CAUSE, MQFB_EXPIRATION),
        (POISON_CAUSE, MQRC_BACKOUT_THRESHOLD_REACHED),
        ("java.lang.Throwable: Exceeded RedeliveryPolicy limit: 3", MQRC_BACKOUT_THRESHOLD_REACHED),
        ("java.lang.Throwable: duplicate from store", MQRC_UNEXPECTED_ERROR),
    ],
)
def test_activemq_causes_map_to_reasons(cause: str, reason: int):
    message = pyjms.TextMessage("x")
    message.set_property(ACTIVEMQ_CAUSE, cause)
    header = DeadLetterHeader.from_message(
        message, queue_manager="QM1", original_destination="queue://APP.IN"
    )
    assert header is not None
    assert (header.reason, header.dest_q, header.dest_q_mgr) == (reason, "APP.IN", "QM1")
    assert (header.put_appl_name, header.put_appl_type, header.format) == ("ActiveMQ", 7, "MQSTR")
    assert header.cause == cause
    if reason == MQFB_EXPIRATION:  # stamped with the expiration ActiveMQ reports
        assert (header.put_date, header.put_time) == put_stamp(1795305744745)


def test_activemq_topic_and_unknown_destinations():
    message = pyjms.BytesMessage(b"x")
    message.set_property(ACTIVEMQ_CAUSE, POISON_CAUSE)
    topic = DeadLetterHeader.from_message(message, original_destination="topic://PRICES")
    unknown = DeadLetterHeader.from_message(message)
    assert topic is not None and unknown is not None
    assert (topic.dest_q, topic.format, unknown.dest_q) == ("topic://PRICES", "", "")


def test_message_fields_give_the_rules_table_its_view():
    header = DeadLetterHeader.create(2085, "APP.IN", dest_q_mgr="QM1", format="MQSTR")
    datagram = pyjms.TextMessage("d")
    fields = message_fields(datagram, header, "QM1")
    assert fields["msgtype"] == 8 and fields["replyq"] == "" and fields["replyqm"] == ""
    assert (fields["destq"], fields["destqm"], fields["reason"], fields["format"]) == (
        "APP.IN",
        "QM1",
        2085,
        "MQSTR",
    )
    assert fields["persist"] == 1
    request = pyjms.TextMessage("r")
    request.set_jms_reply_to(pyjms.Queue("REPLIES"))
    request.set_jms_delivery_mode(pyjms.NON_PERSISTENT)
    fields = message_fields(request, header, "QM1")
    assert (fields["msgtype"], fields["replyq"], fields["replyqm"], fields["persist"]) == (
        1,
        "REPLIES",
        "QM1",
        0,
    )
    request.set_property("JMS_IBM_MQMD_ReplyToQMgr", "AAAA.1")
    request.set_property("JMSXUserID", "alice")
    fields = message_fields(request, header, "QM1")
    assert (fields["replyqm"], fields["userid"]) == ("AAAA.1", "alice")


def test_handler_connects_without_activemq_redelivery_limit():
    def url(connection: object) -> str:
        return handler_factory(connection).url  # type: ignore[arg-type]

    options = "jms.redeliveryPolicy.maximumRedeliveries=-1"
    assert url("tcp://127.0.0.1:1") == "tcp://127.0.0.1:1?" + options
    assert url("vm://b?create=false") == "vm://b?create=false&" + options
    assert url("failover:(tcp://h:1?x=1)") == "failover:(tcp://h:1?x=1)?" + options
    mine = "tcp://h:1?jms.redeliveryPolicy.maximumRedeliveries=3"
    assert url(mine) == mine
    other = pyjms.ConnectionFactory("amqp://h", factory_class="org.example.Factory")
    assert handler_factory(other) is other


def test_e14_dead_letter_keeps_message_and_remaining_expiry(url: str, qname: str):
    factory = pyjms.ConnectionFactory(url)
    with factory.create_context() as ctx, ctx.create_context(pyjms.SESSION_TRANSACTED) as tx:
        app = ctx.create_queue(qname)
        ctx.create_producer().set_time_to_live(60_000).set_priority(8).set_jms_correlation_id(
            "c-1"
        ).set_property("n", 5).send(app, "body")
        got = tx.create_consumer(app).receive(5000)
        assert got is not None
        header = dead_letter(
            tx, got, qname + ".DLQ", MQRC.Q_FULL, put_appl_name="test"
        )  # get + put: one unit
        tx.commit()
        dlq = ctx.create_consumer(ctx.create_queue(qname + ".DLQ")).receive(5000)
    assert dlq is not None and dlq.get_text() == "body"
    assert DeadLetterHeader.from_message(dlq) == header
    assert (header.dest_q, header.reason, header.put_appl_name) == (qname, 2053, "test")
    assert abs(dlq.get_jms_expiration() - got.get_jms_expiration()) < 200  # E14: the same expiry
    assert 0 < dlq.get_remaining_expiry() <= 600
    assert (dlq.get_jms_priority(), dlq.get_jms_correlation_id(), dlq.get_int_property("n")) == (8, "c-1", 5)
    assert dlq.get_jms_timestamp() == got.get_jms_timestamp()  # the original send time is carried


def test_for_failure_names_the_target_and_a_reason_for_the_error():
    full = pyjms.ResourceAllocationRuntimeException("no room")
    header = DeadLetterHeader.for_failure(pyjms.Queue("APP.IN"), full, message=pyjms.TextMessage("x"))
    assert (header.reason, header.dest_q, header.format) == (MQRC.Q_FULL, "APP.IN", "MQSTR")
    inhibited = pyjms.JMSRuntimeException("put disabled", reason=MQRC.PUT_INHIBITED)
    assert DeadLetterHeader.for_failure(pyjms.Topic("T"), inhibited).reason == MQRC.PUT_INHIBITED
    assert DeadLetterHeader.for_failure(pyjms.Topic("T"), inhibited).dest_q == "topic://T"
    assert reason_for(pyjms.InvalidDestinationRuntimeException("?")) == MQRC.UNKNOWN_OBJECT_NAME
    assert reason_for(pyjms.JMSRuntimeException("?")) == MQRC_UNEXPECTED_ERROR
    typed = header.typed_properties()
    assert typed[REASON] == (C.T_INT, 2053) and typed["JMS_PYJMS_DLH_DestQ"] == (C.T_STRING, "APP.IN")


def test_a_handler_needs_a_queue_where_the_provider_has_no_default():
    other = pyjms.ConnectionFactory("amqp://h", factory_class="org.example.Factory")
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="no dead-letter queue"):
        DLQHandler(other, None, "ACTION(DISCARD)")
    assert DLQHandler(other, None, "INPUTQ(DLQ.IN)\nACTION(DISCARD)").queue == "DLQ.IN"
    assert DLQHandler("tcp://127.0.0.1:1", None, "ACTION(DISCARD)").queue == "ActiveMQ.DLQ"  # ActiveMQ's
