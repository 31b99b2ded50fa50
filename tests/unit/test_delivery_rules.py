"""IBM MQ's send-time rules for delayed messages (pyjms.rules.delivery, spec 002) and the
expiry arithmetic (pyjms.rules.expiry, spec 000), without a broker: each rule's reason code
and the values it names."""

from __future__ import annotations

import pytest

from pyjms import BytesMessage, MapMessage, Message, TextMessage
from pyjms.bridge import codec as C
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    JMSRuntimeException,
    NotSupportedRuntimeException,
    ResourceAllocationRuntimeException,
)
from pyjms.rules import delivery, expiry
from pyjms.rules.attributes import QueueAttributes, TopicAttributes, from_values
from pyjms.rules.reasons import MQEI_UNLIMITED, MQRC


def test_d04_a_delay_without_a_mechanism_is_function_not_supported() -> None:
    error = delivery.delay_not_supported(250, "AMQP")
    assert isinstance(error, NotSupportedRuntimeException)
    assert error.reason == MQRC.FUNCTION_NOT_SUPPORTED and error.values == {"delivery_delay": 250}
    assert "AMQP" in str(error)


@pytest.mark.parametrize(("delay", "ttl"), [(1, 1), (0, 1), (5, 0), (0, 0), (10**12, 0)])
def test_d06_a_delay_within_the_ttl_or_an_unlimited_ttl_passes(delay: int, ttl: int) -> None:
    delivery.check_delay_within_ttl(delay, ttl)


def test_d06_a_delay_one_ms_past_the_ttl_is_expiry_error() -> None:
    with pytest.raises(JMSRuntimeException) as e:
        delivery.check_delay_within_ttl(1001, 1000)
    assert e.value.reason == MQRC.EXPIRY_ERROR


@pytest.mark.parametrize(
    ("properties", "named"),
    [
        ({"JMS_IBM_RETAIN": 1}, "JMS_IBM_RETAIN"),
        ({"JMS_IBM_RETAIN": "1"}, "JMS_IBM_RETAIN"),
        ({"JMSXGroupID": "g"}, "JMSXGroupID"),
    ],
)
def test_d07_d08_a_retained_or_grouped_message_cannot_be_delayed(properties: dict, named: str) -> None:
    with pytest.raises(JMSRuntimeException) as e:
        delivery.check_delayed_message(100, properties)
    assert e.value.reason == MQRC.OPTIONS_ERROR and named in e.value.values
    delivery.check_delayed_message(0, properties)  # without a delay, both are fine


def test_d07_retain_zero_is_no_retained_publication() -> None:
    delivery.check_delayed_message(100, {"JMS_IBM_RETAIN": 0, "other": 1})


def test_d05_a_clustered_queue_needs_defbind_notfixed_for_a_delay() -> None:
    clustered = QueueAttributes(clustered=True, default_bind="OPEN")
    with pytest.raises(JMSRuntimeException) as e:
        delivery.check_delayed_target("queue://C", clustered, persistent=True, size=0, delay_ms=1)
    assert e.value.reason == MQRC.OPTIONS_ERROR and e.value.values["DEFBIND"] == "OPEN"
    notfixed = QueueAttributes(clustered=True, default_bind="NOTFIXED")
    delivery.check_delayed_target("queue://C", notfixed, persistent=True, size=0, delay_ms=1)
    delivery.check_delayed_target("queue://C", clustered, persistent=True, size=0, delay_ms=0)


@pytest.mark.parametrize(
    ("attributes", "size", "error", "reason"),
    [
        (QueueAttributes(put_enabled=False), 0, IllegalStateRuntimeException, MQRC.PUT_INHIBITED),
        (QueueAttributes(max_msg_length=10), 11, JMSRuntimeException, MQRC.MSG_TOO_BIG_FOR_Q),
        (QueueAttributes(max_depth=2, depth=2), 0, ResourceAllocationRuntimeException, MQRC.Q_FULL),
        (QueueAttributes(max_depth=0), 0, ResourceAllocationRuntimeException, MQRC.Q_FULL),
    ],
    ids=["put-inhibited-2051", "too-big-2030", "full-2053", "maxdepth-0"],
)
def test_d22_a_target_that_cannot_take_the_message_refuses_it(attributes, size, error, reason) -> None:
    with pytest.raises(error) as e:
        delivery.check_delayed_target("queue://T", attributes, persistent=True, size=size, delay_ms=5)
    assert e.value.reason == reason


def test_d22_limits_are_inclusive_and_minus_one_is_none() -> None:
    delivery.check_target_accepts(
        "queue://T", QueueAttributes(max_msg_length=10, max_depth=3, depth=2), size=10
    )
    delivery.check_target_accepts("queue://T", QueueAttributes(depth=10**9), size=10**9)
    delivery.check_target_accepts("queue://T", None, size=10**9)


@pytest.mark.parametrize(
    ("attributes", "persistent", "refused"),
    [
        (TopicAttributes(), True, "PMSGDLV"),  # IBM MQ's default PMSGDLV(ALLDUR)
        (TopicAttributes(), False, None),  # NPMSGDLV(ALLAVAIL)
        (TopicAttributes(persistent_delivery="ALLAVAIL"), True, None),
        (TopicAttributes(nonpersistent_delivery="ALL"), False, "NPMSGDLV"),
    ],
)
def test_d23_a_delayed_publication_needs_allavail(attributes, persistent: bool, refused: str | None) -> None:
    check = lambda: delivery.check_delayed_target(  # noqa: E731
        "topic://T", attributes, persistent=persistent, size=0, delay_ms=1
    )
    if refused is None:
        check()
        return
    with pytest.raises(JMSRuntimeException) as e:
        check()
    assert e.value.reason == MQRC.PUBLICATION_FAILURE and refused in e.value.values


def test_attributes_are_checked_and_built_from_broker_values() -> None:
    with pytest.raises(InvalidArgumentRuntimeException):
        QueueAttributes(default_bind="SOMETIMES")
    with pytest.raises(InvalidArgumentRuntimeException):
        QueueAttributes(max_depth=-2)
    with pytest.raises(InvalidArgumentRuntimeException):
        QueueAttributes(max_msg_length=True)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentRuntimeException):
        TopicAttributes(persistent_delivery="SOME")
    assert from_values("queue", {"max_depth": 5, "unknown": 1}) == QueueAttributes(max_depth=5)
    assert from_values("topic", {"persistent_delivery": "ALL"}) == TopicAttributes(persistent_delivery="ALL")
    # the current depth is read, not configured: two queues differing only in it are alike
    assert QueueAttributes(depth=3) == QueueAttributes(depth=9)


def test_message_length_counts_body_and_application_properties_as_ibm_mq_does() -> None:
    m = TextMessage("é" * 3)  # 6 bytes of UTF-8
    m.set_int_property("n", 1)  # 1 + 4
    m.set_string_property("JMS_IBM_Format", "MQSTR")  # 14 + 5: a JMS_<vendor> property counts
    m.set_string_property("JMSXGroupID", "g")  # JMSX* does not
    m.set_jms_correlation_id("not counted")
    assert delivery.message_length(m) == 6 + 5 + 19
    assert (
        delivery.message_length(
            m, {"JMS_PYJMS_DeliveryTime": (C.T_LONG, 1), "_AMQ_DUPL_ID": (C.T_STRING, "x")}
        )
        == 30
    )
    assert delivery.message_length(BytesMessage(b"1234")) == 4
    assert delivery.message_length(Message()) == 0


def test_message_length_of_a_map_counts_names_and_values() -> None:
    m = MapMessage()
    m.set_short("ab", 1)  # 2 + 2
    m.set_string("c", "xyz")  # 1 + 3
    m.set_bytes("d", b"\x00" * 7)  # 1 + 7
    assert delivery.message_length(m) == 4 + 4 + 8


def test_e01_e17_lifetimes_in_tenths_and_unlimited() -> None:
    assert expiry.tenths_to_ms(1) == 100 and expiry.tenths_to_ms(MQEI_UNLIMITED) == 0
    assert expiry.remaining_expiry(0) == expiry.remaining_expiry(-5) == MQEI_UNLIMITED


@pytest.mark.parametrize(("left_ms", "tenths"), [(1, 1), (100, 1), (101, 2), (20_000, 200), (-50, 1)])
def test_e02_e05_remaining_expiry_rounds_up_and_never_shows_zero(left_ms: int, tenths: int) -> None:
    assert expiry.remaining_expiry(1_000_000 + left_ms, at_ms=1_000_000) == tenths


def test_e03_a_message_is_expired_from_its_expiration_on() -> None:
    assert not expiry.is_expired(1000, at_ms=999)
    assert expiry.is_expired(1000, at_ms=1000)
    assert not expiry.is_expired(0, at_ms=10**15)  # 0: never
    assert expiry.now_ms() > 1_700_000_000_000  # epoch ms, not seconds


def test_e08_a_negative_ttl_is_expiry_error_and_zero_is_unlimited() -> None:
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        delivery.check_time_to_live(-1)
    assert e.value.reason == MQRC.EXPIRY_ERROR and e.value.values == {"time_to_live": -1}
    assert delivery.check_time_to_live(0) == 0
