"""The codec against the real Java side (issue 15 finding 7 and item 5): every body and property
type, sent through a real broker and received back, arrives as it was set, for every Unicode
string (outside the BMP too) and every value its Java type holds, on ActiveMQ Classic (in-vm and
over TCP, where its client marshals strings as modified UTF-8) and on Artemis."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyjms
from pyjms.bridge import codec as C

pytestmark = pytest.mark.providers("activemq", "artemis")

NON_BMP = "😀\U0010ffff\U0001f600𝄞"
#: typed values: (codec tag, the MapMessage setter, the Message property setter, values)
INTS = {
    C.T_BYTE: st.integers(-(2**7), 2**7 - 1),
    C.T_SHORT: st.integers(-(2**15), 2**15 - 1),
    C.T_INT: st.integers(-(2**31), 2**31 - 1),
    C.T_LONG: st.integers(-(2**63), 2**63 - 1),
}
TYPED = st.one_of(
    st.booleans().map(lambda v: (C.T_BOOL, v)),
    *[s.map(lambda v, t=t: (t, v)) for t, s in INTS.items()],
    st.floats(width=32).map(lambda v: (C.T_FLOAT, v)),
    st.floats().map(lambda v: (C.T_DOUBLE, v)),
    st.text().map(lambda v: (C.T_STRING, v)),
    st.sampled_from(["", "\x00", NON_BMP, NON_BMP * 3000, "é" * 9000]).map(lambda v: (C.T_STRING, v)),
)
PROPERTY_SETTERS = {
    C.T_BOOL: "set_boolean_property",
    C.T_BYTE: "set_byte_property",
    C.T_SHORT: "set_short_property",
    C.T_INT: "set_int_property",
    C.T_LONG: "set_long_property",
    C.T_FLOAT: "set_float_property",
    C.T_DOUBLE: "set_double_property",
    C.T_STRING: "set_string_property",
}
MAP_SETTERS = {
    C.T_BOOL: "set_boolean",
    C.T_BYTE: "set_byte",
    C.T_SHORT: "set_short",
    C.T_INT: "set_int",
    C.T_LONG: "set_long",
    C.T_FLOAT: "set_float",
    C.T_DOUBLE: "set_double",
    C.T_STRING: "set_string",
    C.T_BYTES: "set_bytes",
}
#: property names: Java identifiers, Unicode letters included
NAMES = st.sampled_from(["p", "région", "数量", "_x", "$y", "Größe", "a1", "JMS_IBM_Format_x", "ñ"])
MAP_VALUES = st.one_of(TYPED, st.binary(max_size=300).map(lambda v: (C.T_BYTES, v)))
QUICK = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def same(tag: int, sent: object, got: object) -> bool:
    if tag == C.T_FLOAT:
        return (math.isnan(sent) and math.isnan(got)) or struct.pack(">f", sent) == struct.pack(">f", got)
    if tag == C.T_DOUBLE:
        return (math.isnan(sent) and math.isnan(got)) or struct.pack(">d", sent) == struct.pack(">d", got)
    return type(got) is type(sent) and got == sent


def assert_same_typed(sent: dict, got: dict) -> None:
    assert sorted(got) == sorted(sent)
    for name, (tag, value) in sent.items():
        got_tag, got_value = got[name]
        assert got_tag == tag, (name, got_tag, tag)
        assert same(tag, value, got_value), (name, value, got_value)


@pytest.fixture
def loop(ctx, qname):
    """One queue, one producer, one consumer for all examples of a test."""
    q = ctx.create_queue(qname)
    producer = ctx.create_producer()
    consumer = ctx.create_consumer(q)

    def send_and_receive(message: pyjms.Message) -> pyjms.Message:
        producer.send(q, message)
        got = consumer.receive(10000)
        assert got is not None
        return got

    yield send_and_receive
    consumer.close()


@QUICK
@given(
    body=st.one_of(st.text(), st.sampled_from([NON_BMP, NON_BMP * 5000, "\x00" * 3, ""])),
    props=st.dictionaries(NAMES, TYPED, max_size=5),
    correlation_id=st.none() | st.text(min_size=1),
    jms_type=st.none() | st.text(min_size=1),
)
def test_text_message_headers_and_properties_round_trip(loop, body, props, correlation_id, jms_type):
    m = pyjms.TextMessage(body)
    for name, (tag, value) in props.items():
        getattr(m, PROPERTY_SETTERS[tag])(name, value)
    m.set_jms_correlation_id(correlation_id)
    m.set_jms_type(jms_type)
    got = loop(m)
    assert got.get_text() == body
    assert got.get_jms_correlation_id() == correlation_id and got.get_jms_type() == jms_type
    assert_same_typed(props, dict(got.typed_properties()))


@QUICK
@given(
    entries=st.dictionaries(st.text(min_size=1) | st.sampled_from(["😀", "k" * 300]), MAP_VALUES, max_size=6)
)
def test_map_message_entries_round_trip(loop, entries):
    m = pyjms.MapMessage()
    for name, (tag, value) in entries.items():
        getattr(m, MAP_SETTERS[tag])(name, value)
    got = loop(m)
    assert_same_typed(entries, dict(got.typed_map()))


@QUICK
@given(body=st.binary(max_size=2000), props=st.dictionaries(NAMES, TYPED, max_size=3))
def test_bytes_message_and_properties_round_trip(loop, body, props):
    m = pyjms.BytesMessage(body)
    for name, (tag, value) in props.items():
        getattr(m, PROPERTY_SETTERS[tag])(name, value)
    got = loop(m)
    assert got.read_bytes() == body
    assert_same_typed(props, dict(got.typed_properties()))


def test_finding_7_map_message_emoji_arrives_intact(loop):
    """The reproduction: {'k': '😀'} arrived as {'k': '\\ufffd\\ufffd'} on ActiveMQ Classic."""
    got = loop(pyjms.MapMessage({"k": "😀", "big": "😀" * 9000, "😀": "v"}))
    assert got.get_body() == {"k": "😀", "big": "😀" * 9000, "😀": "v"}
    m = pyjms.TextMessage("x")
    m.set_string_property("p", "😀")
    assert loop(m).get_string_property("p") == "😀"


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "😀\ud83d"])
def test_a_lone_surrogate_is_refused_not_replaced(ctx, qname, text):
    """A Python str may hold a surrogate without its pair; UTF-8 cannot carry it: refused at
    once (every provider would replace it with U+FFFD), naming where it is."""
    q = ctx.create_queue(qname)
    p = ctx.create_producer()
    m = pyjms.TextMessage("x")
    attempts = [
        lambda: pyjms.TextMessage(text),
        lambda: m.set_string_property("p", text),
        lambda: pyjms.MapMessage({"k": text}),
        lambda: pyjms.MapMessage({text: "v"}),
        lambda: m.set_jms_correlation_id(text),
        lambda: p.set_jms_type(text),
        lambda: p.send(q, text),
        lambda: p.set_property("p", text),
    ]
    for attempt in attempts:
        with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="lone surrogate"):
            attempt()
    assert ctx.create_consumer(q).receive(200) is None
