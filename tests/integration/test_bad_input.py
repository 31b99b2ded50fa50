"""Bad input gets a clear pyjms error naming the value and the rule, and loses nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest

import pyjms
from pyjms import MQRC
from tests.conftest import drain

# provider-independent: each test runs on ActiveMQ Classic and on Apache Artemis
pytestmark = pytest.mark.providers("activemq", "artemis")


@pytest.mark.parametrize("priority", [-1, 10, "5", 4.0, True])
def test_priority_outside_0_to_9_is_refused(ctx, priority):
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="priority") as e:
        ctx.create_producer().set_priority(priority)
    assert e.value.reason == MQRC.PRIORITY_ERROR == 2050 and e.value.values == {"priority": priority}


def test_e08_negative_time_to_live_is_mqrc_expiry_error(ctx):
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        ctx.create_producer().set_time_to_live(-1)
    assert e.value.reason == MQRC.EXPIRY_ERROR == 2013
    assert e.value.reason_name == "MQRC_EXPIRY_ERROR"
    assert e.value.values == {"time_to_live": -1}
    assert "-1" in str(e.value)


def test_d04_nonzero_delivery_delay_is_function_not_supported(url):
    ctx = pyjms.ConnectionFactory(url, delivery_delay="none").create_context()
    p = ctx.create_producer()
    with pytest.raises(pyjms.NotSupportedRuntimeException) as e:
        p.set_delivery_delay(timedelta(seconds=1))
    assert e.value.reason == 2298 and e.value.reason_name == "MQRC_FUNCTION_NOT_SUPPORTED"
    assert p.get_delivery_delay() == 0
    p.set_delivery_delay(0)  # zero is the default and always fine
    ctx.close()
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="delivery_delay 'later'"):
        pyjms.ConnectionFactory(url, delivery_delay="later")


def test_delivery_mode_and_session_mode_are_checked(ctx, factory):
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="delivery mode 3") as e:
        ctx.create_producer().set_delivery_mode(3)
    assert e.value.reason == MQRC.PERSISTENCE_ERROR == 2047
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="session mode 7"):
        factory.create_context(7)


def test_wrong_body_and_property_types(ctx, qname):
    q = ctx.create_queue(qname)
    p = ctx.create_producer()
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="object"):
        p.send(q, object())
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="list"):
        p.set_property("tags", ["a"])
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="range"):
        ctx.create_text_message("x").set_byte_property("b", 300)
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="64 bits"):
        p.set_property("huge", 2**70)
    with pytest.raises(pyjms.MessageFormatRuntimeException):
        ctx.create_text_message().set_text(b"bytes")
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="send_batch"):
        p.send_batch(q, ["ok", 3])
    assert ctx.create_consumer(q).receive(300) is None  # nothing half-sent


@pytest.mark.parametrize("name", ["1abc", "a-b", "", "AND", "JMSFoo", None])
def test_invalid_property_names(ctx, name):
    with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
        ctx.create_text_message("x").set_string_property(name, "v")
    assert e.value.reason == MQRC.PROPERTY_NAME_ERROR == 2442 and repr(name) in str(e.value)


def test_received_message_is_read_only_until_cleared(ctx, qname):
    q = ctx.create_queue(qname)
    ctx.create_producer().send(q, "x")
    m = ctx.create_consumer(q).receive(5000)
    with pytest.raises(pyjms.MessageNotWriteableRuntimeException):
        m.set_string_property("a", "b")
    with pytest.raises(pyjms.MessageNotWriteableRuntimeException):
        m.set_text("y")
    m.clear_properties()
    m.set_string_property("a", "b")
    m.clear_body()
    m.set_text("y")
    assert m.get_text() == "y"


def test_property_conversions_follow_the_jms_table(ctx):
    m = ctx.create_text_message("x")
    m.set_string_property("num", "12")
    m.set_double_property("d", 1.5)
    m.set_boolean_property("flag", True)
    assert m.get_int_property("num") == 12
    assert m.get_string_property("flag") == "true"
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="double"):
        m.get_int_property("d")
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="not set"):
        m.get_int_property("missing")
    assert m.get_string_property("missing") is None
    assert m.get_boolean_property("missing") is False


def test_bad_selector(ctx, qname):
    with pytest.raises(pyjms.InvalidSelectorRuntimeException) as e:
        ctx.create_consumer(ctx.create_queue(qname), "color = = 'red'")
    assert "color" in str(e.value)


def test_bad_destinations(ctx):
    with pytest.raises(pyjms.InvalidDestinationRuntimeException):
        ctx.create_queue("")
    with pytest.raises(pyjms.InvalidDestinationRuntimeException):
        ctx.create_producer().send("ORDERS", "x")  # a str is not a Queue
    with pytest.raises(pyjms.InvalidDestinationRuntimeException):
        ctx.create_consumer(None)
    with pytest.raises(pyjms.InvalidDestinationRuntimeException):
        ctx.create_browser(ctx.create_topic("T"))


def test_closed_context_and_consumer(factory, qname):
    ctx = factory.create_context()
    q = ctx.create_queue(qname)
    c = ctx.create_consumer(q)
    p = ctx.create_producer()
    c.close()
    with pytest.raises(pyjms.IllegalStateRuntimeException, match="consumer is closed"):
        c.receive(10)
    ctx.close()
    ctx.close()  # closing twice is allowed
    with pytest.raises(pyjms.IllegalStateRuntimeException, match="closed"):
        p.send(q, "x")
    with pytest.raises(pyjms.IllegalStateRuntimeException):
        ctx.create_consumer(q)
    with pytest.raises(pyjms.IllegalStateRuntimeException):
        ctx.commit()


def test_transaction_calls_in_the_wrong_mode(ctx, factory):
    with pytest.raises(pyjms.IllegalStateRuntimeException, match="SESSION_TRANSACTED"):
        ctx.commit()
    with pytest.raises(pyjms.IllegalStateRuntimeException, match="SESSION_TRANSACTED"):
        ctx.rollback()
    with factory.create_context(pyjms.SESSION_TRANSACTED) as tx:
        with pytest.raises(pyjms.IllegalStateRuntimeException):
            tx.recover()


def test_bad_timeouts_and_batch_sizes(ctx, qname):
    c = ctx.create_consumer(ctx.create_queue(qname))
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="negative"):
        c.receive(-5)
    ctx.create_producer().send(ctx.create_queue(qname), "kept")
    for bad in (0, -1, True, 2.0, "10"):
        with pytest.raises(
            pyjms.InvalidArgumentRuntimeException, match=f"max_messages must be a positive int, got {bad!r}"
        ):
            c.receive_batch(bad)
    # nothing was taken by a refused call
    assert [m.get_text() for m in c.receive_batch(5, 2000)] == ["kept"]


def test_unreachable_broker_is_a_clear_error():
    cf = pyjms.ConnectionFactory("tcp://127.0.0.1:1?maxReconnectAttempts=0")
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        cf.create_context()
    assert "127.0.0.1:1" in str(e.value)
    assert not type(e.value).__module__.startswith("jpype")


def test_unknown_url_scheme():
    with pytest.raises(pyjms.JMSRuntimeException, match="no provider for URL 'mqtt://.*amqp://"):
        pyjms.ConnectionFactory("mqtt://127.0.0.1:1883").create_context()


def test_object_message_is_never_deserialized(ctx, qname):
    # sent by a plain Java client in tests/interop; here: the facade refuses outright
    m = pyjms.ObjectMessage()
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="deserialize"):
        m.get_object()
    assert drain(ctx.create_consumer(ctx.create_queue(qname)), 50) == []
