"""An independent Java client over AMQP 1.0: Qpid JMS in a plain Java program that pyjms does
not drive (tests/interop/JavaPeer.java, run in its own JVM). It receives what pyjms sent over
AMQP, and pyjms receives what it sent, with typed properties, correlation id, type, priority,
delivery time and expiration intact.

ActiveMQ Classic's scheduler resends a delayed message with a new JMSTimestamp and its TTL
counted again (``AmqpPeer.restamps_delayed``). pyjms compensates for its own sends: it sends the
TTL left after the delay and carries the exact send time and expiration as JMS_PYJMS_*
properties, which pyjms receivers read; a plain Java client sees the broker's headers, whose
expiration is then the exact one plus the scheduler's lateness. A delayed message from the
plain client keeps its delivery time, while ActiveMQ Classic moves its timestamp and expiration.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import pytest

import pyjms
from pyjms.bridge import maven
from pyjms.bridge.classpath import provider_jars
from tests.amqp.conftest import AmqpPeer
from tests.interop.test_java_peer import (
    JAVA_BYTES,
    JAVA_TEXT,
    JAVA_TTL_MS,
    JavaPeer,
    _java_executable,
    jms_type_of,
    typed,
)

RECEIVE_MS = 10_000
DELAY = 1500

TYPED = {
    "pBoolean": ("set_boolean_property", True, typed("Boolean", True)),
    "pByte": ("set_byte_property", -128, typed("Byte", -128)),
    "pShort": ("set_short_property", 300, typed("Short", 300)),
    "pInt": ("set_int_property", 70_000, typed("Integer", 70_000)),
    "pLong": ("set_long_property", 2**53 + 1, typed("Long", 2**53 + 1)),
    "pFloat": ("set_float_property", 0.1, typed("Float", 0.1)),
    "pDouble": ("set_double_property", 2.25, typed("Double", 2.25)),
    "pString": ("set_string_property", 'ünï "q" ✓', typed("String", 'ünï "q" ✓')),
}


@pytest.fixture
def qpid_peer(amqp_peer: AmqpPeer) -> JavaPeer:
    """JavaPeer with Qpid JMS's jars (and ActiveMQ's, which it compiles against)."""
    classpath = os.pathsep.join(maven.merge(provider_jars("activemq"), provider_jars("amqp")))
    return JavaPeer(_java_executable(), classpath, amqp_peer.url)


def _typed_message(ctx: pyjms.JMSContext, text: str) -> pyjms.Message:
    m = ctx.create_text_message(text)
    for name, (setter, value, _) in TYPED.items():
        getattr(m, setter)(name, value)
    return m


def _application_properties(got: dict[str, Any]) -> dict[str, Any]:
    """What JavaPeer printed, less what the provider adds (JMSX*) and pyjms's own (JMS_PYJMS_*)."""
    return {
        k: v
        for k, v in got["properties"].items()
        if not k.startswith(("JMSX", "JMS_PYJMS_")) and k != "scheduledJobId"
    }


def test_message_from_pyjms_over_amqp_arrives_in_qpid_jms_intact(
    amqp: pyjms.JMSContext, qpid_peer: JavaPeer, qname: str
) -> None:
    q = amqp.create_queue(qname)
    m = _typed_message(amqp, "from pyjms over AMQP ✓")
    m.set_jms_reply_to(amqp.create_queue(f"{qname}.REPLY"))
    (
        amqp.create_producer()
        .set_jms_correlation_id("py-corr")
        .set_jms_type("py.order")
        .set_priority(7)
        .set_time_to_live(90_000)
        .set_delivery_mode(pyjms.NON_PERSISTENT)
        .send(q, m)
    )

    (got,) = qpid_peer.receive(qname, 1)

    assert got["type"] == "TextMessage" and got["text"] == "from pyjms over AMQP ✓"
    assert got["JMSMessageID"] == m.get_jms_message_id()
    assert got["JMSCorrelationID"] == "py-corr" and got["JMSType"] == "py.order"
    assert got["JMSPriority"] == 7 and got["JMSDeliveryMode"] == 1
    assert got["JMSTimestamp"] == m.get_jms_timestamp()
    assert got["JMSExpiration"] == m.get_jms_expiration() == m.get_jms_timestamp() + 90_000
    assert got["JMSDeliveryTime"] == m.get_jms_delivery_time() == m.get_jms_timestamp()
    assert got["JMSReplyTo"] == f"{qname}.REPLY"  # Qpid JMS prints a destination as its name
    assert _application_properties(got) == {name: want for name, (_, _, want) in TYPED.items()}


def test_delayed_message_from_pyjms_over_amqp_arrives_in_qpid_jms_at_its_delivery_time(
    amqp_peer: AmqpPeer, amqp: pyjms.JMSContext, qpid_peer: JavaPeer, qname: str
) -> None:
    q = amqp.create_queue(qname)
    m = _typed_message(amqp, "delayed from pyjms")
    (
        amqp.create_producer()
        .set_jms_correlation_id("py-delayed")
        .set_jms_type("py.delayed")
        .set_priority(2)
        .set_time_to_live(60_000)
        .set_delivery_delay(DELAY)
        .send(q, m)
    )

    (got,) = qpid_peer.receive(qname, 1)
    received_by = int(time.time() * 1000)

    assert m.get_jms_delivery_time() == m.get_jms_timestamp() + DELAY
    assert got["JMSMessageID"] == m.get_jms_message_id()
    assert got["JMSCorrelationID"] == "py-delayed" and got["JMSType"] == "py.delayed"
    assert got["JMSPriority"] == 2
    assert _application_properties(got) == {name: want for name, (_, _, want) in TYPED.items()}
    if amqp_peer.restamps_delayed:
        # the broker resent it: its timestamp is the resend's, not before the delivery time. The
        # times pyjms senders and receivers see travel as properties, from one reading of the
        # clock; Qpid JMS stamped its own headers a moment later, never earlier
        assert m.get_jms_delivery_time() <= got["JMSTimestamp"] <= received_by
        assert got["properties"]["JMS_PYJMS_Timestamp"] == typed("Long", m.get_jms_timestamp())
        assert got["properties"]["JMS_PYJMS_DeliveryTime"] == typed("Long", m.get_jms_delivery_time())
        assert got["properties"]["JMS_PYJMS_Expiration"] == typed("Long", m.get_jms_expiration())
        assert got["JMSDeliveryTime"] >= m.get_jms_delivery_time()
        assert got["JMSExpiration"] >= m.get_jms_expiration()
    else:
        assert got["JMSDeliveryTime"] == m.get_jms_delivery_time()
        assert got["JMSTimestamp"] == m.get_jms_timestamp()
        assert got["JMSExpiration"] == m.get_jms_expiration()


def test_messages_from_qpid_jms_arrive_in_pyjms_over_amqp_intact(
    amqp: pyjms.JMSContext, qpid_peer: JavaPeer
) -> None:
    queue = f"T.amqp.from_qpid.{uuid.uuid4().hex[:8]}"
    sent = {line["sent"]: line for line in qpid_peer.run("send", queue, f"{queue}.REPLY")}
    with amqp.create_consumer(amqp.create_queue(queue)) as consumer:
        received = [consumer.receive(RECEIVE_MS) for _ in range(4)]
    assert None not in received
    by_kind = {type(m).__name__: m for m in received if m is not None}
    assert set(by_kind) == set(sent) == {"TextMessage", "BytesMessage", "MapMessage", "ObjectMessage"}
    for kind, m in by_kind.items():
        assert m.get_jms_message_id() == sent[kind]["JMSMessageID"]
        assert m.get_jms_timestamp() == sent[kind]["JMSTimestamp"]
        assert m.get_jms_expiration() == sent[kind]["JMSExpiration"]
        assert m.get_jms_delivery_time() == sent[kind]["JMSDeliveryTime"]

    text = by_kind["TextMessage"]
    assert text.get_body() == JAVA_TEXT
    assert text.get_jms_expiration() == text.get_jms_timestamp() + JAVA_TTL_MS
    assert text.get_jms_correlation_id() == "java-corr-1" and text.get_jms_type() == "java.order"
    assert text.get_jms_priority() == 6 and text.get_jms_reply_to() == pyjms.Queue(f"{queue}.REPLY")
    assert {n: jms_type_of(text, n) for n in text.get_property_names()} == {
        "pBoolean": "boolean",
        "pByte": "byte",
        "pShort": "short",
        "pInt": "int",
        "pLong": "long",
        "pFloat": "float",
        "pDouble": "double",
        "pString": "String",
    }
    assert text.get_long_property("pLong") == 9_007_199_254_740_993

    raw = by_kind["BytesMessage"]
    assert raw.get_body() == JAVA_BYTES and raw.get_jms_delivery_mode() == pyjms.NON_PERSISTENT

    mapped = by_kind["MapMessage"]
    body = mapped.get_body(dict)
    assert body["mLong"] == 2**63 - 1 and body["mBytes"] == b"\xde\xad\xbe\xef" and body["mChar"] == "ç"
    with pytest.raises(pyjms.MessageFormatRuntimeException):
        mapped.get_int("mLong")  # still a long

    obj = by_kind["ObjectMessage"]  # a Java-serialized body: never deserialized by pyjms
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="does not deserialize"):
        obj.get_body()
    assert obj.get_jms_type() == "java.util.ArrayList" and obj.get_long_property("size") == 2


def test_delayed_message_from_qpid_jms_arrives_in_pyjms_not_before_its_delivery_time(
    amqp_peer: AmqpPeer, amqp: pyjms.JMSContext, qpid_peer: JavaPeer, qname: str
) -> None:
    q = amqp.create_queue(qname)
    with amqp.create_consumer(q) as consumer:
        (sent,) = qpid_peer.run("send-delayed", qname, str(DELAY))
        got = consumer.receive(RECEIVE_MS)
        received_at = int(time.time() * 1000)
    assert got is not None and got.get_body() == "delayed from Java"
    assert sent["JMSDeliveryTime"] == sent["JMSTimestamp"] + DELAY
    assert received_at >= got.get_jms_delivery_time() == sent["JMSDeliveryTime"]
    assert got.get_jms_message_id() == sent["JMSMessageID"]
    assert got.get_jms_correlation_id() == "java-delayed" and got.get_jms_type() == "java.delayed"
    assert got.get_jms_priority() == 6
    assert got.get_short_property("pShort") == -12345 and jms_type_of(got, "pShort") == "short"
    if amqp_peer.restamps_delayed:
        # ActiveMQ Classic resent it at its delivery time: the timestamp and the expiration
        # (TTL counted again) moved by at least the delay; a plain client does not compensate
        assert got.get_jms_timestamp() >= sent["JMSDeliveryTime"]
        assert got.get_jms_expiration() == got.get_jms_timestamp() + JAVA_TTL_MS
    else:
        assert got.get_jms_timestamp() == sent["JMSTimestamp"]
        assert got.get_jms_expiration() == sent["JMSExpiration"]
