"""Validation at the door (issue 15 findings 6 and item 2, issue 16 findings 6, 13, 14): every
value a user passes is checked when it is set, refused in pyjms's error tree naming the value
and the rule, and nothing is silently changed or half-sent."""

from __future__ import annotations

import signal
import time
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest

import pyjms
from pyjms import MQRC
from pyjms.api.checks import MAX_DURATION_MS
from pyjms.api.forward import forward
from pyjms.broker import AccessRule, EmbeddedBroker
from pyjms.broker.admin import Admin
from pyjms.dlq import RulesTable
from pyjms.providers.activemq.dead_letters import without_redelivery_limit
from tests.conftest import BrokerProcess, delay_mode, drain

pytestmark = pytest.mark.providers("activemq", "artemis")

RESERVED = ["JMS_PYJMS_Expiration", "JMS_PYJMS_DeliveryTime", "JMS_PYJMS_DLH_Reason", "JMS_PYJMS_Anything"]


# ---------------------------------------------------------------- reserved names (issue 15 item 2)


@pytest.mark.parametrize("name", RESERVED)
def test_reserved_properties_are_refused_on_the_producer(ctx, qname, name):
    q = ctx.create_queue(qname)
    p = ctx.create_producer()
    for setter, value in (
        (p.set_property, "y"),
        (p.set_string_property, "y"),
        (p.set_long_property, 5),
        (p.set_object_property, 5),
    ):
        with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
            setter(name, value)
        assert e.value.reason == MQRC.PROPERTY_NAME_ERROR == 2442 and repr(name) in str(e.value)
    assert p.get_property_names() == set()
    p.send(q, "x")  # the producer still works, without the property
    got = ctx.create_consumer(q).receive(5000)
    assert got.get_text() == "x" and not got.property_exists(name)


@pytest.mark.parametrize("name", RESERVED)
def test_reserved_properties_are_refused_on_a_message(ctx, qname, name):
    m = ctx.create_text_message("x")
    for setter, value in (
        (m.set_string_property, "y"),
        (m.set_long_property, 1),
        (m.set_object_property, "y"),
        (m.set_property, 1.5),
        (m.set_boolean_property, True),
    ):
        with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
            setter(name, value)
        assert e.value.reason == 2442 and repr(name) in str(e.value)
    assert m.get_property_names() == []
    q = ctx.create_queue(qname)
    ctx.create_producer().send(q, m)
    assert ctx.create_consumer(q).receive(5000).get_property_names() == []  # nothing half-sent


def test_pyjms_still_writes_its_own_properties(ctx, qname):
    """The internal route (typed pairs through a forward) still writes JMS_PYJMS_* properties:
    a forwarded message keeps its original send time in JMS_PYJMS_Timestamp."""
    q = ctx.create_queue(qname)
    ctx.create_producer().send(q, "x")
    consumer = ctx.create_consumer(q)
    original = consumer.receive(5000)
    forward(ctx, q, original)
    again = consumer.receive(5000)
    assert "JMS_PYJMS_Timestamp" in again.get_property_names()
    assert again.get_jms_timestamp() == original.get_jms_timestamp()


# ---------------------------------------------------------------- property names (issue 16 finding 14)


@pytest.mark.parametrize("name", ["région", "Größe", "数量", "_x", "$y", "a1", "über_größe", "ñ$_9"])
def test_property_names_follow_the_java_identifier_rule(ctx, qname, name):
    q = ctx.create_queue(qname)
    ctx.create_producer().set_property(name, "v").send(q, "x")
    got = ctx.create_consumer(q).receive(5000)
    assert got.get_string_property(name) == "v"


@pytest.mark.parametrize(
    "name", ["1abc", "a-b", "a b", "", "é-", "😀", "a😀", "AND", "JMSFoo", "x.y", 5, b"ab"]
)
def test_names_that_are_not_java_identifiers_are_refused(ctx, name):
    with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
        ctx.create_producer().set_property(name, "v")
    assert e.value.reason == 2442 and repr(name) in str(e.value)


# ---------------------------------------------------------------- producer options (finding 6)


@pytest.mark.parametrize("mode", [Decimal("1"), 2.0, 1.0, True, False, [1], "2", None, 3, 0, {2: 1}])
def test_delivery_mode_is_1_or_2_as_an_int(ctx, mode):
    p = ctx.create_producer()
    with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
        p.set_delivery_mode(mode)
    assert e.value.reason == MQRC.PERSISTENCE_ERROR == 2047
    assert p.get_delivery_mode() == pyjms.PERSISTENT


@pytest.mark.parametrize("priority", [Decimal("4"), 4.0, True, [4], None, -1, 10, 2**70])
def test_priority_is_an_int_0_to_9(ctx, priority):
    with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
        ctx.create_producer().set_priority(priority)
    assert e.value.reason == MQRC.PRIORITY_ERROR == 2050


@pytest.mark.parametrize("setter", ["set_time_to_live", "set_delivery_delay"])
@pytest.mark.parametrize("value", [2**63, 2**70, 10**20, 2**63 - 1, 9223372036854775807 - 1000])
def test_e08_ttl_and_delay_whose_end_would_overflow_a_java_long_are_refused(ctx, setter, value):
    p = ctx.create_producer()
    with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
        getattr(p, setter)(value)
    assert e.value.reason == MQRC.EXPIRY_ERROR == 2013 and str(value) in str(e.value)
    assert "overflow" in str(e.value)
    assert p.get_time_to_live() == 0 and p.get_delivery_delay() == 0


@pytest.mark.parametrize("value", [1.5, Decimal("10"), "100", True, None, [1]])
def test_ttl_is_an_int_or_a_timedelta(ctx, value):
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="time_to_live"):
        ctx.create_producer().set_time_to_live(value)


def test_e08_the_largest_ttl_sends_and_its_expiration_is_positive(ctx, qname):
    """The largest accepted TTL gives an expiration inside a Java long: never a negative one."""
    q = ctx.create_queue(qname)
    largest = MAX_DURATION_MS
    p = ctx.create_producer().set_time_to_live(largest)
    m = ctx.create_text_message("x")
    p.send(q, m)
    assert m.get_jms_expiration() > 0
    got = ctx.create_consumer(q).receive(5000)
    assert got.get_text() == "x" and got.get_jms_expiration() > 0
    assert ctx.create_producer().set_time_to_live(timedelta(days=365)).get_time_to_live() == 365 * 86400000


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_disable_flags_take_a_bool(ctx, value):
    with pytest.raises(pyjms.InvalidArgumentRuntimeException):
        ctx.create_producer().set_disable_message_id(value)
    with pytest.raises(pyjms.InvalidArgumentRuntimeException):
        ctx.create_producer().set_disable_message_timestamp(value)


# ---------------------------------------------------------------- property values (finding 6)


@pytest.mark.parametrize(
    "setter,value",
    [
        ("set_float_property", 1e300),
        ("set_float_property", -3.5e38),
        ("set_float_property", 10**400),
        ("set_double_property", 10**400),
        ("set_byte_property", 128),
        ("set_byte_property", -129),
        ("set_short_property", 2**15),
        ("set_int_property", 2**31),
        ("set_int_property", -(2**31) - 1),
        ("set_long_property", 2**63),
        ("set_long_property", -(2**63) - 1),
    ],
)
def test_property_values_are_bounded_by_their_java_type(ctx, setter, value):
    m = ctx.create_text_message("x")
    p = ctx.create_producer()
    for target in (m, p):
        with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
            getattr(target, setter)("f", value)
        assert "f" in str(e.value)
    assert m.get_property_names() == [] and p.get_property_names() == set()


@pytest.mark.parametrize(
    "setter,value",
    [
        ("set_int_property", True),
        ("set_long_property", 1.0),
        ("set_byte_property", Decimal(1)),
        ("set_boolean_property", 1),
        ("set_string_property", 5),
        ("set_double_property", "1.5"),
        ("set_float_property", False),
        ("set_property", [1]),
        ("set_property", None),
        ("set_property", b"x"),
    ],
)
def test_property_values_of_the_wrong_type_are_refused(ctx, setter, value):
    with pytest.raises(pyjms.MessageFormatRuntimeException):
        getattr(ctx.create_text_message("x"), setter)("p", value)


@pytest.mark.parametrize("value", [5.0, 5, True, b"5"])
def test_jmsx_group_id_is_a_string(ctx, qname, value):
    """A float JMSXGroupID used to come back as '5.0': now it is refused, a str goes as set."""
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="JMSXGroupID"):
        ctx.create_producer().set_property("JMSXGroupID", value)
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="JMSXGroupID"):
        ctx.create_text_message("x").set_object_property("JMSXGroupID", value)
    q = ctx.create_queue(qname)
    ctx.create_producer().set_property("JMSXGroupID", "5").send(q, "x")
    assert ctx.create_consumer(q).receive(5000).get_object_property("JMSXGroupID") == "5"


def test_extreme_values_of_every_java_type_send_and_arrive_unchanged(ctx, qname):
    q = ctx.create_queue(qname)
    m = ctx.create_text_message("x")
    m.set_byte_property("b", -128)
    m.set_short_property("s", 32767)
    m.set_int_property("i", -(2**31))
    m.set_long_property("l", 2**63 - 1)
    m.set_float_property("f", 3.4028234663852886e38)
    m.set_double_property("d", 1e308)
    m.set_double_property("ninf", float("-inf"))
    ctx.create_producer().send(q, m)
    got = ctx.create_consumer(q).receive(5000)
    assert got.get_byte_property("b") == -128 and got.get_short_property("s") == 32767
    assert got.get_int_property("i") == -(2**31) and got.get_long_property("l") == 2**63 - 1
    assert got.get_float_property("f") == 3.4028234663852886e38 and got.get_double_property("d") == 1e308
    assert got.get_double_property("ninf") == float("-inf")


# ---------------------------------------------------------------- message headers


@pytest.mark.parametrize(
    "setter,value",
    [
        ("set_jms_priority", 11),
        ("set_jms_priority", 1.0),
        ("set_jms_delivery_mode", 2.0),
        ("set_jms_timestamp", "now"),
        ("set_jms_timestamp", 2**64),
        ("set_jms_expiration", 1.5),
        ("set_jms_delivery_time", None),
        ("set_jms_redelivered", 1),
        ("set_jms_message_id", 5),
        ("set_jms_destination", "queue://X"),
        ("set_jms_correlation_id", b"id"),
        ("set_jms_type", 3),
        ("set_jms_reply_to", "Q"),
    ],
)
def test_header_setters_check_type_and_range(ctx, setter, value):
    with pytest.raises(pyjms.JMSRuntimeException):
        getattr(ctx.create_text_message("x"), setter)(value)


# ---------------------------------------------------------------- the rules table


def test_q07_a_5000_digit_number_in_a_rules_table_is_one_clear_error():
    for text in ("REASON(" + "9" * 5000 + ") ACTION(DISCARD)", "ACTION(RETRY) RETRY(" + "1" * 5000 + ")"):
        with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
            RulesTable.parse(text)
        assert "line 1" in str(e.value) and "5000 characters" in str(e.value) and len(str(e.value)) < 300


def test_nothing_was_half_sent(ctx, qname):
    q = ctx.create_queue(qname)
    p = ctx.create_producer()
    for bad in (
        lambda: p.set_time_to_live(2**70),
        lambda: p.set_delivery_mode([1]),
        lambda: p.set_property("JMS_PYJMS_Expiration", "y"),
    ):
        with pytest.raises(pyjms.JMSRuntimeException):
            bad()
    assert drain(ctx.create_consumer(q), 100) == []


# ---------------------------------------------------------------- IBM MQ's reasons (issue 16 findings 12, 15, 20)


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:1", "artemis+tcp://127.0.0.1:1", "amqp://127.0.0.1:1"])
def test_an_unreachable_broker_is_mqrc_q_mgr_not_available(address):
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        pyjms.ConnectionFactory(address).create_context()
    assert e.value.reason == MQRC.Q_MGR_NOT_AVAILABLE == 2059 and "127.0.0.1:1" in str(e.value)


@pytest.mark.parametrize("provider", ["activemq", "artemis"])
def test_a_broken_connection_is_mqrc_connection_broken(provider):
    broker = BrokerProcess(provider=provider)
    try:
        ctx = pyjms.ConnectionFactory(broker.tcp_url).create_context()
        q = ctx.create_queue("BROKEN.Q")
        ctx.create_producer().send(q, "before")
        broker.stop(signal.SIGKILL)
        with pytest.raises(pyjms.JMSRuntimeException) as e:
            for _ in range(50):  # the client may learn of the loss only at the next write
                ctx.create_producer().send(q, "after")
                time.sleep(0.1)
        assert e.value.reason in (MQRC.CONNECTION_BROKEN, MQRC.Q_MGR_NOT_AVAILABLE), str(e.value)
        assert e.value.reason == MQRC.CONNECTION_BROKEN == 2009, str(e.value)
    finally:
        broker.stop()


def test_authorisation_and_authentication_failures_are_mqrc_not_authorized():
    users = {"alice": ("alice-pw", ["senders"]), "bob": ("bob-pw", ["readers"])}
    access = [AccessRule("ORDERS.>", read=["readers", "senders"], write=["senders"], admin=["senders"])]
    broker = EmbeddedBroker(name=f"pyjms-door-{uuid.uuid4().hex[:6]}", users=users, access=access)
    try:
        with pytest.raises(pyjms.JMSSecurityRuntimeException) as e:
            pyjms.ConnectionFactory(broker.vm_url, "alice", "wrong").create_context()
        assert e.value.reason == MQRC.NOT_AUTHORIZED == 2035
        with pyjms.ConnectionFactory(broker.vm_url, "bob", "bob-pw").create_context() as bob:
            with pytest.raises(pyjms.JMSSecurityRuntimeException) as e:
                bob.create_producer().send(bob.create_queue("ORDERS.A"), "bob may not")
            assert e.value.reason == 2035 and "ORDERS.A" in str(e.value)
    finally:
        broker.stop()


def test_a_missing_factory_class_says_it_is_not_on_the_classpath_and_how_to_add_it():
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        pyjms.ConnectionFactory(factory_class="com.ibm.mq.jakarta.jms.MQConnectionFactory").create_context()
    text = str(e.value)
    assert "com.ibm.mq.jakarta.jms.MQConnectionFactory is not on the classpath" in text
    assert "classpath=" in text and "--classpath" in text and "pyjms providers fetch ibmmq" in text


def test_internal_url_options_never_show_in_messages():
    """The DLQ handler's factory adds jms.redeliveryPolicy.maximumRedeliveries=-1 to the URL."""
    factory = without_redelivery_limit(pyjms.ConnectionFactory("tcp://127.0.0.1:1"))
    assert "maximumRedeliveries" in factory.url  # it is there, and used
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        factory.create_context()
    assert "maximumRedeliveries" not in str(e.value) and "127.0.0.1:1" in str(e.value)
    assert e.value.reason == 2059
    factory = without_redelivery_limit(
        pyjms.ConnectionFactory("tcp://127.0.0.1:1?wireFormat.maxInactivityDuration=0")
    )
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        factory.create_context()
    assert "maximumRedeliveries" not in str(e.value) and "maxInactivityDuration=0" in str(e.value)


# ---------------------------------------------------------------- MAXMSGL (issue 16 finding 13)


@pytest.mark.parametrize("delay", [0, 60_000])
def test_maxmsgl_counts_the_body_and_properties_as_ibm_mq_does(url, qname, delay):
    """MAXMSGL 100, then "a": it used to be refused as 1,029 bytes (the wire encoding). Now the
    body counts (UTF-8) and each property's name and value; headers and pyjms's own do not.
    Checked by the broker for a plain send, by pyjms at send for a delayed one (D22)."""
    factory = pyjms.ConnectionFactory(
        url,
        delivery_delay=delay_mode(url, "staging") if delay else "auto",
        staging_queue=f"STAGE.{uuid.uuid4().hex[:6]}",
    )
    q = pyjms.Queue(qname)
    Admin(factory).define_queue(q, max_msg_length=100)
    with factory.create_context() as ctx:
        p = (
            ctx.create_producer()
            .set_delivery_delay(delay)
            .set_jms_correlation_id("c" * 200)
            .set_time_to_live(600_000)
        )
        p.send(q, "a")
        p.send(q, "x" * 100)
        p.send(q, b"\x00" * 100)
        p.send(q, "😀" * 25)  # 4 bytes each in UTF-8
        with pytest.raises(pyjms.JMSRuntimeException) as e:
            p.send(q, "😀" * 25 + "a")
        assert e.value.reason == MQRC.MSG_TOO_BIG_FOR_Q == 2030 and "101 bytes" in str(e.value)
        m = pyjms.TextMessage("x" * 90)
        m.set_string_property("k", "v" * 9)  # 1 + 9: exactly 100
        p.send(q, m)
        m = pyjms.TextMessage("x" * 90)
        m.set_long_property("n", 1)  # 1 + 8
        m.set_int_property("i", 1)  # 1 + 4: 104
        with pytest.raises(pyjms.JMSRuntimeException) as e:
            p.send(q, m)
        assert e.value.reason == 2030 and "104 bytes" in str(e.value)
        with pytest.raises(pyjms.JMSRuntimeException) as e:
            p.send(q, {"key": "v" * 98})  # a map's names count too: 3 + 98
        assert e.value.reason == 2030 and "101 bytes" in str(e.value)
        p.send(q, {"key": "v" * 95, "b": True})  # 3 + 95 + 1 + 1: 100


def test_a_rules_table_file_that_is_not_utf8_or_cannot_be_read_is_one_error(tmp_path):
    bad = tmp_path / "rules.txt"
    bad.write_bytes(b"ACTION(DISCARD) * caf\xe9\n")
    with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
        RulesTable.read(bad)
    assert str(bad) in str(e.value) and "not UTF-8" in str(e.value) and "byte 21" in str(e.value)
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="cannot read the rules table"):
        RulesTable.read(tmp_path / "missing.txt")
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="cannot read the rules table"):
        RulesTable.read(tmp_path)  # a directory
