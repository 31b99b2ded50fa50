"""Message properties and headers by the Jakarta Messaging rules (3.5 and the conversion table
of 3.5.4), with IBM MQ's reason codes where it has one; received messages come through the
fake channel, so they are decoded from the shim's own record format."""

from __future__ import annotations

import math
import re

import pytest

import pyjms
from pyjms import BytesMessage, MapMessage, Message, Queue, TextMessage, Topic
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from pyjms.errors import (
    InvalidArgumentRuntimeException,
    MessageFormatRuntimeException,
    MessageNotWriteableRuntimeException,
)
from pyjms.rules.reasons import MQEI_UNLIMITED, MQRC
from tests.fakes.channel import StoredMessage, encode_record


def received(properties: dict[str, tuple[int, object]], **headers: object) -> Message:
    """A message as a receiver gets it: its record as the shim writes it."""
    stored = StoredMessage(C.KIND_TEXT, "x", properties, **headers)  # type: ignore[arg-type]
    return Message.from_record(C.IncomingRecord(encode_record(stored), 0))


@pytest.mark.parametrize(
    "name", ["a", "région", "_x", "$y", "a1", "JMSXGroupID", "JMS_IBM_Format", "Ünïcode"]
)
def test_a_java_identifier_is_a_property_name(name: str) -> None:
    m = TextMessage()
    m.set_string_property(name, "v")
    assert m.get_property_names() == [name] and m.get_string_property(name) == "v"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "not a valid Java identifier"),
        ("1a", "not a valid Java identifier"),
        ("a-b", "not a valid Java identifier"),
        ("a b", "not a valid Java identifier"),
        ("😀", "not a valid Java identifier"),
        ("AND", "reserved selector word"),
        ("null", "reserved selector word"),
        ("Between", "reserved selector word"),
        ("JMSCorrelationID", "only JMSX* and JMS_<vendor>_*"),
        ("JMS_PYJMS_DeliveryTime", "pyjms's own"),
        ("JMS_PYJMS_Anything", "pyjms's own"),
    ],
)
def test_property_names_outside_the_jms_rules_are_property_name_error_2442(name: str, why: str) -> None:
    with pytest.raises(InvalidArgumentRuntimeException, match=re.escape(why)) as e:
        TextMessage().set_int_property(name, 1)
    assert e.value.reason == MQRC.PROPERTY_NAME_ERROR == 2442
    assert e.value.values == {"property_name": name}


def test_a_non_str_property_name_is_refused_too() -> None:
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        TextMessage().set_object_property(5, 1)  # type: ignore[arg-type]
    assert e.value.reason == MQRC.PROPERTY_NAME_ERROR


def test_jmsx_properties_a_sender_sets_must_have_their_jms_type() -> None:
    m = TextMessage()
    m.set_int_property("JMSXGroupSeq", 3)
    m.set_short_property("JMSXGroupSeq", 3)  # a narrower int is still an int
    with pytest.raises(MessageFormatRuntimeException):
        m.set_string_property("JMSXGroupSeq", "3")
    with pytest.raises(MessageFormatRuntimeException):
        m.set_object_property("JMSXGroupID", 5.0)
    m.set_object_property("JMSXGroupID", "g")
    assert m.get_string_property("JMSXGroupID") == "g"


@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("set_byte_property", 128),
        ("set_byte_property", -129),
        ("set_short_property", 2**15),
        ("set_int_property", 2**31),
        ("set_long_property", 2**63),
        ("set_float_property", 3.5e38),
        ("set_object_property", 2**63),
    ],
)
def test_a_value_outside_its_jms_type_is_refused(setter: str, value: object) -> None:
    with pytest.raises(InvalidArgumentRuntimeException):
        getattr(TextMessage(), setter)("p", value)


@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("set_int_property", True),
        ("set_int_property", 1.0),
        ("set_boolean_property", 1),
        ("set_string_property", b"x"),
        ("set_double_property", "1.0"),
        ("set_object_property", b"bytes"),
        ("set_object_property", None),
        ("set_object_property", [1]),
    ],
)
def test_a_value_of_another_type_is_message_format_error(setter: str, value: object) -> None:
    with pytest.raises(MessageFormatRuntimeException):
        getattr(TextMessage(), setter)("p", value)


def test_set_object_property_picks_the_narrowest_of_int_and_long() -> None:
    m = TextMessage()
    m.set_object_property("small", 2**31 - 1)
    m.set_object_property("big", 2**31)
    m.set_object_property("f", 1.5)
    m.set_object_property("b", False)
    assert dict(m.typed_properties()) == {
        "small": (C.T_INT, 2**31 - 1),
        "big": (C.T_LONG, 2**31),
        "f": (C.T_DOUBLE, 1.5),
        "b": (C.T_BOOL, False),
    }


def test_a_lone_surrogate_is_refused_not_replaced() -> None:
    with pytest.raises(InvalidArgumentRuntimeException, match="lone surrogate"):
        TextMessage().set_string_property("p", "a\ud800b")
    with pytest.raises(InvalidArgumentRuntimeException, match="lone surrogate"):
        C.pack_string("\udfff")


#: the JMS conversion table (3.5.4): (stored tag, value, getter, what it reads, or the error)
CONVERSIONS = [
    (C.T_BOOL, True, "get_boolean_property", True),
    (C.T_BOOL, True, "get_string_property", "true"),
    (C.T_BOOL, False, "get_int_property", MessageFormatRuntimeException),
    (C.T_BYTE, -5, "get_short_property", -5),
    (C.T_BYTE, -5, "get_long_property", -5),
    (C.T_BYTE, -5, "get_string_property", "-5"),
    (C.T_BYTE, -5, "get_float_property", MessageFormatRuntimeException),
    (C.T_SHORT, 300, "get_byte_property", MessageFormatRuntimeException),
    (C.T_INT, 7, "get_long_property", 7),
    (C.T_INT, 7, "get_short_property", MessageFormatRuntimeException),
    (C.T_LONG, 2**40, "get_int_property", MessageFormatRuntimeException),
    (C.T_FLOAT, 0.5, "get_double_property", 0.5),
    (C.T_FLOAT, 0.5, "get_string_property", "0.5"),
    (C.T_DOUBLE, 0.5, "get_float_property", MessageFormatRuntimeException),
    (C.T_DOUBLE, 0.5, "get_long_property", MessageFormatRuntimeException),
    (C.T_STRING, "true", "get_boolean_property", True),
    (C.T_STRING, "TRUE", "get_boolean_property", True),
    (C.T_STRING, "yes", "get_boolean_property", False),  # Boolean.valueOf
    (C.T_STRING, "12", "get_byte_property", 12),
    (C.T_STRING, "300", "get_byte_property", MessageFormatRuntimeException),
    (C.T_STRING, "2.5", "get_double_property", 2.5),
    (C.T_STRING, "x", "get_int_property", MessageFormatRuntimeException),
    (C.T_STRING, "9", "get_object_property", "9"),
    (C.T_CHAR, "c", "get_string_property", "c"),
]


@pytest.mark.parametrize(("tag", "value", "getter", "expected"), CONVERSIONS)
def test_typed_getters_follow_the_jms_conversion_table(
    tag: int, value: object, getter: str, expected: object
) -> None:
    m = received({"p": (tag, value)})
    if isinstance(expected, type):
        with pytest.raises(expected):
            getattr(m, getter)("p")
    else:
        assert getattr(m, getter)("p") == expected


def test_an_absent_property_reads_as_java_does() -> None:
    m = TextMessage()
    assert m.get_boolean_property("none") is False  # Boolean.valueOf(null)
    assert m.get_string_property("none") is None and m.get_object_property("none") is None
    assert not m.property_exists("none")
    with pytest.raises(MessageFormatRuntimeException):
        m.get_int_property("none")  # Integer.valueOf(null) is a NumberFormatException
    with pytest.raises(MessageFormatRuntimeException):
        m.get_double_property("none")


def test_a_float_property_holds_the_nearest_java_float_on_the_wire() -> None:
    m = TextMessage()
    m.set_float_property("f", 0.1)
    decoded, _ = C.read_tagged_map(C.pack_properties(dict(m.typed_properties())), 0)
    tag, value = decoded["f"]
    assert tag == C.T_FLOAT and value != 0.1 and math.isclose(value, 0.1, rel_tol=1e-7)


def test_a_received_messages_properties_are_read_only_until_cleared() -> None:
    m = received({"a": (C.T_INT, 1)})
    with pytest.raises(MessageNotWriteableRuntimeException):
        m.set_int_property("b", 2)
    m.clear_properties()
    assert m.get_property_names() == []
    m.set_int_property("b", 2)
    assert m.get_int_property("b") == 2


def test_jmsx_delivery_count_is_the_wire_count_and_one_for_a_new_message() -> None:
    m = received({}, delivery_count=3, redelivered=True)
    assert m.get_int_property("JMSXDeliveryCount") == 3 and m.get_delivery_count() == 3
    assert m.get_jms_redelivered()
    assert TextMessage().get_delivery_count() == 1


def test_headers_of_a_received_message_come_from_the_record() -> None:
    m = received(
        {},
        message_id="ID:1",
        timestamp=1000,
        destination="topic://T",
        reply_to="queue://R",
        delivery_mode=1,
        priority=9,
        expiration=5000,
        jms_type="t",
        correlation_id="c",
    )
    assert (m.get_jms_message_id(), m.get_jms_timestamp(), m.get_jms_destination()) == (
        "ID:1",
        1000,
        Topic("T"),
    )
    assert (m.get_jms_reply_to(), m.get_jms_delivery_mode(), m.get_jms_priority()) == (Queue("R"), 1, 9)
    assert (m.get_jms_expiration(), m.get_jms_type(), m.get_jms_correlation_id()) == (5000, "t", "c")
    assert m.get_jms_delivery_time() == 1000  # no delay: the send time


def test_pyjms_times_carried_as_properties_win_over_the_headers() -> None:
    m = received(
        {contract.DELIVERY_TIME: (C.T_LONG, 7000), contract.EXPIRATION: (C.T_LONG, 9000)},
        timestamp=1000,
        expiration=99_999,
        delivery_time=1000,
    )
    assert m.get_jms_delivery_time() == 7000 and m.get_jms_expiration() == 9000


def test_e17_a_new_message_never_expires_and_e02_counts_down() -> None:
    assert TextMessage().get_remaining_expiry() == MQEI_UNLIMITED
    m = TextMessage()
    m.set_jms_expiration(pyjms.rules.expiry.now_ms() + 60_000)
    assert 590 <= m.get_remaining_expiry() <= 600


@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("set_jms_priority", 10),
        ("set_jms_priority", -1),
        ("set_jms_delivery_mode", 3),
        ("set_jms_expiration", 2**63),
    ],
)
def test_header_setters_check_their_ranges(setter: str, value: int) -> None:
    with pytest.raises(InvalidArgumentRuntimeException):
        getattr(TextMessage(), setter)(value)


def test_a_duplicate_id_is_one_to_1024_bytes_of_text() -> None:
    m = TextMessage()
    m.set_duplicate_id("é" * 512)  # 1024 bytes
    assert m.get_duplicate_id() == "é" * 512
    assert m.typed_properties()[contract.DUPLICATE_ID] == (C.T_STRING, "é" * 512)
    with pytest.raises(InvalidArgumentRuntimeException):
        m.set_duplicate_id("x" * 1025)
    with pytest.raises(InvalidArgumentRuntimeException):
        m.set_duplicate_id("")
    with pytest.raises(MessageFormatRuntimeException):
        m.set_duplicate_id(5)  # type: ignore[arg-type]
    m.set_duplicate_id(None)
    assert m.get_duplicate_id() is None


def test_a_duplicate_id_a_java_client_set_as_bytes_reads_as_text() -> None:
    assert received({contract.DUPLICATE_ID: (C.T_BYTES, "é".encode())}).get_duplicate_id() == "é"


def test_bodies_keep_their_types() -> None:
    assert BytesMessage(bytearray(b"ab")).get_body() == b"ab"
    m = MapMessage({"i": 1})
    assert m.get_int("i") == 1 and m.get_long("i") == 1 and m.get_string("i") == "1"
    with pytest.raises(MessageFormatRuntimeException):
        m.get_bytes("i")
    with pytest.raises(MessageFormatRuntimeException):
        TextMessage("x").get_body(bytes)
