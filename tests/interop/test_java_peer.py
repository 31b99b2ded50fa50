"""Wire compatibility with a plain Jakarta JMS program (tests/interop/JavaPeer.java).

The peer uses only jakarta.jms and ActiveMQ's connection factory, runs in its own JVM via
Java's single-file source launcher, and talks to the standalone broker over TCP. Messages go
both ways; the tests check that bodies, headers and properties keep their values and their
JMS types (a short set from Python is a java.lang.Short in Java, and back).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import pyjms
from pyjms.bridge.classpath import provider_jars
from tests.conftest import ROOT, BrokerProcess
from tests.interop.conftest import loopback_url

PEER_SOURCE = Path(__file__).with_name("JavaPeer.java")
LOG4J_CONFIG = ROOT / "pyjms" / "bridge" / "log4j2.properties"
JAVA_TIMEOUT_S = 60  # compile + connect + receive; a hung peer must not hang the suite
RECEIVE_MS = 10_000

# What JavaPeer's "send" mode sends (kept in step with the constants in JavaPeer.java)
JAVA_TEXT = "héllo from Java ✓ 😀"
JAVA_BYTES = bytes([0x00, 0x01, 0x7F, 0x80, 0xFF])
JAVA_TTL_MS = 120_000


def _java_executable() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        pytest.fail("no 'java' on PATH or in JAVA_HOME: the interop tests need a Java 17+ launcher")
    return found


@dataclass(frozen=True)
class JavaPeer:
    """Runs JavaPeer.java in a fresh JVM and parses its JSON lines."""

    java: str
    classpath: str
    url: str

    def run(self, mode: str, queue: str, *args: str) -> list[dict[str, Any]]:
        cmd = [
            self.java,
            f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",  # provider logging to stderr, WARN only
            "-cp",
            self.classpath,
            str(PEER_SOURCE),
            mode,
            self.url,
            queue,
            *args,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, encoding="ascii", timeout=JAVA_TIMEOUT_S)
        assert proc.returncode == 0, (
            f"JavaPeer {mode} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
        return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]

    def receive(self, queue: str, count: int) -> list[dict[str, Any]]:
        lines = self.run("receive", queue, str(count))
        assert len(lines) == count
        for got in lines:
            # JMS 2.0 has the provider set JMSXDeliveryCount (ActiveMQ's client lists it from
            # 6.3); first deliveries all, so the tests compare only what pyjms sent
            count_seen = got["properties"].pop("JMSXDeliveryCount", {"type": "java.lang.Integer", "value": 1})
            assert count_seen == {"type": "java.lang.Integer", "value": 1}
        return lines


@pytest.fixture(scope="module")
def java_peer(tcp_broker: BrokerProcess) -> JavaPeer:
    return JavaPeer(_java_executable(), os.pathsep.join(provider_jars("activemq")), loopback_url(tcp_broker))


def typed(java_type: str, value: Any) -> dict[str, Any]:
    """A property or map entry as JavaPeer prints it: ("Short", 3) is a java.lang.Short."""
    return {"type": "[B" if java_type == "byte[]" else f"java.lang.{java_type}", "value": value}


def jms_type_of(m: pyjms.Message, name: str) -> str:
    """A received property's JMS type, found through the public typed getters only.

    The JMS conversion table lets the byte getter read only bytes, the short getter bytes and
    shorts, and so on, so the narrowest getter that accepts an integer is its type; floats
    likewise. Strings are told apart by their Python type.
    """
    value = m.get_object_property(name)
    if isinstance(value, str):
        return "String"
    if isinstance(value, bool):
        return "boolean"
    getters = (
        [
            ("byte", m.get_byte_property),
            ("short", m.get_short_property),
            ("int", m.get_int_property),
            ("long", m.get_long_property),
        ]
        if isinstance(value, int)
        else [("float", m.get_float_property), ("double", m.get_double_property)]
    )
    for jms_type, getter in getters:
        try:
            getter(name)
        except pyjms.MessageFormatRuntimeException:
            continue
        return jms_type
    raise AssertionError(f"property {name!r} = {value!r} is readable by no typed getter")


# ---------------------------------------------------------------------------- pyjms -> Java


def test_text_message_from_pyjms_arrives_in_java_with_headers_and_java_property_types(
    ctx: pyjms.JMSContext, qname: str, java_peer: JavaPeer
) -> None:
    q = ctx.create_queue(qname)
    reply = ctx.create_queue(f"{qname}.REPLY")
    text = 'héllo ✓ 😀 "quoted" \\ back\nnew line\ttab \x01'  # everything JSON must escape
    m = ctx.create_text_message(text)
    m.set_boolean_property("pBoolean", True)
    m.set_byte_property("pByte", -128)
    m.set_short_property("pShort", 300)
    m.set_int_property("pInt", 70_000)
    m.set_long_property("pLong", 2**53 + 1)  # not exact as a double: proves a real long
    m.set_float_property("pFloat", 0.1)  # Java prints a float's shortest form: 0.1 only if float32
    m.set_double_property("pDouble", 2.25)
    m.set_string_property("pString", 'ünï "q" ✓')
    m.set_int_property("pSmallInt", 5)  # an int that fits a byte stays an Integer
    (
        ctx.create_producer()
        .set_jms_correlation_id("py-corr-1")
        .set_jms_type("py.order")
        .set_jms_reply_to(reply)
        .set_priority(7)
        .set_time_to_live(timedelta(seconds=90))
        .set_delivery_mode(pyjms.NON_PERSISTENT)
        .send(q, m)
    )

    (got,) = java_peer.receive(qname, 1)

    assert got["type"] == "TextMessage"
    assert got["text"] == text
    assert got["JMSMessageID"] == m.get_jms_message_id()
    assert got["JMSCorrelationID"] == "py-corr-1"
    assert got["JMSType"] == "py.order"
    assert got["JMSReplyTo"] == f"queue://{qname}.REPLY"
    assert got["JMSDestination"] == f"queue://{qname}"
    assert got["JMSPriority"] == 7
    assert got["JMSDeliveryMode"] == 1  # jakarta.jms.DeliveryMode.NON_PERSISTENT
    assert got["JMSTimestamp"] == m.get_jms_timestamp()
    assert got["JMSExpiration"] == m.get_jms_expiration() == got["JMSTimestamp"] + 90_000
    assert got["JMSRedelivered"] is False
    # exactly these properties, each with the Java type its setter names
    assert got["properties"] == {
        "pBoolean": typed("Boolean", True),
        "pByte": typed("Byte", -128),
        "pShort": typed("Short", 300),
        "pInt": typed("Integer", 70_000),
        "pLong": typed("Long", 2**53 + 1),
        "pFloat": typed("Float", 0.1),
        "pDouble": typed("Double", 2.25),
        "pString": typed("String", 'ünï "q" ✓'),
        "pSmallInt": typed("Integer", 5),
    }


def test_producer_properties_map_python_types_to_java_types(
    ctx: pyjms.JMSContext, qname: str, java_peer: JavaPeer
) -> None:
    q = ctx.create_queue(qname)
    reply = ctx.create_topic(f"{qname}.EVENTS")
    p = (
        ctx.create_producer()
        .set_property("small", 7)
        .set_property("big", 2**40)
        .set_property("ratio", 1.5)
        .set_property("flag", False)
        .set_property("region", "eu")
        .set_long_property("asLong", 7)
        .set_double_property("asDouble", 3)
        .set_jms_reply_to(reply)
    )
    p.send(q, "via producer")

    (got,) = java_peer.receive(qname, 1)

    assert got["properties"] == {
        "small": typed("Integer", 7),  # a Python int picks int or long by size
        "big": typed("Long", 2**40),
        "ratio": typed("Double", 1.5),  # a Python float is a double
        "flag": typed("Boolean", False),
        "region": typed("String", "eu"),
        "asLong": typed("Long", 7),  # typed setters override the Python type
        "asDouble": typed("Double", 3.0),
    }
    assert got["JMSReplyTo"] == f"topic://{qname}.EVENTS"
    # the producer defaults
    assert got["JMSPriority"] == 4 and got["JMSDeliveryMode"] == 2 and got["JMSExpiration"] == 0
    assert got["JMSCorrelationID"] is None and got["JMSType"] is None


def test_bytes_map_and_bodyless_messages_from_pyjms_arrive_in_java(
    ctx: pyjms.JMSContext, qname: str, java_peer: JavaPeer
) -> None:
    q = ctx.create_queue(qname)
    p = ctx.create_producer().set_jms_correlation_id("batch-7")
    p.send(q, bytes(range(256)))
    mm = ctx.create_map_message()
    mm.set_object("n", 7)
    mm.set_object("big", 2**40)
    mm.set_object("f", 1.5)
    mm.set_object("ok", True)
    mm.set_object("s", "ü ✓")
    mm.set_object("raw", b"\x00\xff")
    mm.set_long("asLong", 1)
    mm.set_double("asDouble", 2)
    p.send(q, mm)
    p.send(q, None)

    raw, mapped, empty = java_peer.receive(qname, 3)  # equal priorities: FIFO

    assert raw["type"] == "BytesMessage" and raw["bytes"] == bytes(range(256)).hex()
    assert mapped["type"] == "MapMessage"
    assert mapped["map"] == {
        "n": typed("Integer", 7),
        "big": typed("Long", 2**40),
        "f": typed("Double", 1.5),
        "ok": typed("Boolean", True),
        "s": typed("String", "ü ✓"),
        "raw": typed("byte[]", "00ff"),
        "asLong": typed("Long", 1),
        "asDouble": typed("Double", 2.0),
    }
    assert empty["type"] == "Message"
    for got in (raw, mapped, empty):
        assert got["JMSCorrelationID"] == "batch-7"
        assert got["properties"] == {}


def test_empty_correlation_id_and_type_from_pyjms_reach_java_as_empty_strings(
    ctx: pyjms.JMSContext, qname: str, java_peer: JavaPeer
) -> None:
    q = ctx.create_queue(qname)
    # empty is not absent: a plain Java client keeps '' (pyjms once dropped a lone empty header)
    ctx.create_producer().set_jms_correlation_id("").send(q, "empty correlation id")
    ctx.create_producer().set_jms_type("").send(q, "empty type")
    on_message = ctx.create_text_message("empty on the message")
    on_message.set_jms_correlation_id("")
    ctx.create_producer().send(q, on_message)

    corr_only, type_only, message_level = java_peer.receive(qname, 3)

    assert (corr_only["JMSCorrelationID"], corr_only["JMSType"]) == ("", None)
    assert (type_only["JMSCorrelationID"], type_only["JMSType"]) == (None, "")
    assert message_level["JMSCorrelationID"] == ""


# ---------------------------------------------------------------------------- Java -> pyjms


@dataclass(frozen=True)
class FromJava:
    """What JavaPeer sent (its own report) and what pyjms received, by message kind."""

    sent: dict[str, dict[str, Any]]
    received: dict[str, pyjms.Message]
    queue: str
    reply_queue: str


@pytest.fixture(scope="module")
def from_java(java_peer: JavaPeer) -> FromJava:
    """JavaPeer sends its fixed set once; pyjms receives all four for the tests below."""
    queue = f"T.interop.from_java.{uuid.uuid4().hex[:8]}"
    reply = f"{queue}.REPLY"
    sent = {line["sent"]: line for line in java_peer.run("send", queue, reply)}
    assert set(sent) == {"TextMessage", "BytesMessage", "MapMessage", "ObjectMessage"}
    with pyjms.ConnectionFactory(java_peer.url).create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(queue))
        received = [consumer.receive(RECEIVE_MS) for _ in range(4)]
        assert None not in received, f"pyjms received only {received}"
        assert consumer.receive(300) is None
    # the broker delivers by priority, so index by kind rather than by position
    return FromJava(sent, {type(m).__name__: m for m in received}, queue, reply)


def test_text_message_from_java_keeps_headers_and_every_property_type(from_java: FromJava) -> None:
    m = from_java.received["TextMessage"]
    sent = from_java.sent["TextMessage"]
    assert isinstance(m, pyjms.TextMessage)
    assert m.get_text() == JAVA_TEXT
    assert m.get_jms_message_id() == sent["JMSMessageID"]
    assert m.get_jms_timestamp() == sent["JMSTimestamp"]
    assert m.get_jms_expiration() == sent["JMSExpiration"] == sent["JMSTimestamp"] + JAVA_TTL_MS
    assert m.get_jms_correlation_id() == "java-corr-1"
    assert m.get_jms_type() == "java.order"
    assert m.get_jms_priority() == 6
    assert m.get_jms_delivery_mode() == pyjms.PERSISTENT
    assert m.get_jms_reply_to() == pyjms.Queue(from_java.reply_queue)
    assert m.get_jms_destination() == pyjms.Queue(from_java.queue)
    assert m.get_jms_redelivered() is False and m.get_delivery_count() == 1

    assert set(m.get_property_names()) == {
        "pBoolean",
        "pByte",
        "pShort",
        "pInt",
        "pLong",
        "pFloat",
        "pDouble",
        "pString",
    }
    assert m.get_boolean_property("pBoolean") is True
    assert m.get_byte_property("pByte") == -7
    assert m.get_short_property("pShort") == -12345
    assert m.get_int_property("pInt") == 123_456_789
    assert m.get_long_property("pLong") == 9_007_199_254_740_993
    assert m.get_float_property("pFloat") == 3.5
    assert m.get_double_property("pDouble") == -2.5e-3
    assert m.get_string_property("pString") == 'ünïcödé "quoted" \\ ✓'
    # the Java types survived: each property reads through exactly its own narrowest getter
    assert {n: jms_type_of(m, n) for n in m.get_property_names()} == {
        "pBoolean": "boolean",
        "pByte": "byte",
        "pShort": "short",
        "pInt": "int",
        "pLong": "long",
        "pFloat": "float",
        "pDouble": "double",
        "pString": "String",
    }


def test_bytes_message_from_java_keeps_body_and_non_persistent_mode(from_java: FromJava) -> None:
    m = from_java.received["BytesMessage"]
    assert isinstance(m, pyjms.BytesMessage)
    assert m.get_jms_message_id() == from_java.sent["BytesMessage"]["JMSMessageID"]
    assert m.read_bytes() == m.get_body(bytes) == JAVA_BYTES
    assert m.get_body_length() == len(JAVA_BYTES)
    assert m.get_jms_delivery_mode() == pyjms.NON_PERSISTENT
    assert m.get_jms_priority() == 3
    assert m.get_jms_expiration() == 0
    assert m.get_jms_correlation_id() is None and m.get_jms_type() is None and m.get_jms_reply_to() is None
    assert m.properties == {"part": "bytes"}


def test_map_message_from_java_keeps_every_entry_type(from_java: FromJava) -> None:
    m = from_java.received["MapMessage"]
    assert isinstance(m, pyjms.MapMessage)
    assert m.get_jms_message_id() == from_java.sent["MapMessage"]["JMSMessageID"]
    body = m.get_body(dict)
    assert m.item_exists("mNull")  # its value is checked in the test below
    del body["mNull"]
    assert body == {
        "mBoolean": False,
        "mByte": 127,
        "mShort": -32768,
        "mChar": "ç",
        "mInt": -2_147_483_648,
        "mLong": 2**63 - 1,
        "mFloat": -0.25,
        "mDouble": 1.0e100,
        "mString": "map ✓",
        "mBytes": b"\xde\xad\xbe\xef",
    }
    assert m.get_long("mLong") == 2**63 - 1
    assert m.get_int("mByte") == 127 and m.get_int("mShort") == -32768  # byte/short widen to int
    assert m.get_double("mFloat") == -0.25  # float widens to double
    assert m.get_bytes("mBytes") == b"\xde\xad\xbe\xef"
    assert m.get_string("mChar") == "ç"
    # narrowing is refused, so the long and the char arrived as a long and a char
    with pytest.raises(pyjms.MessageFormatRuntimeException):
        m.get_int("mLong")
    with pytest.raises(pyjms.MessageFormatRuntimeException):
        m.get_int("mChar")
    assert m.get_int_property("part") == 3 and jms_type_of(m, "part") == "int"


def test_null_map_entry_from_java_reads_as_none(from_java: FromJava) -> None:
    m = from_java.received["MapMessage"]
    assert m.get_object("mNull") is None
    assert m.get_string("mNull") is None
    assert m.get_body(dict)["mNull"] is None


def test_object_message_from_java_is_never_deserialized_but_headers_and_properties_read(
    from_java: FromJava,
) -> None:
    m = from_java.received["ObjectMessage"]
    assert isinstance(m, pyjms.ObjectMessage)
    with pytest.raises(pyjms.MessageFormatRuntimeException, match="does not deserialize"):
        m.get_object()
    with pytest.raises(pyjms.MessageFormatRuntimeException):
        m.get_body()
    with pytest.raises(pyjms.MessageFormatRuntimeException):
        m.get_body(object)
    assert m.is_body_assignable_to(object) is False
    # everything but the body is readable
    assert m.get_jms_message_id() == from_java.sent["ObjectMessage"]["JMSMessageID"]
    assert m.get_jms_correlation_id() == "java-corr-object"
    assert m.get_jms_type() == "java.util.ArrayList"
    assert m.get_jms_delivery_mode() == pyjms.PERSISTENT and m.get_jms_priority() == 4
    assert m.get_long_property("size") == 2 and jms_type_of(m, "size") == "long"
    assert m.get_string_property("part") == "object"
    assert set(m.get_property_names()) == {"size", "part"}
