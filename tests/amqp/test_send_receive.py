"""Send and receive over AMQP 1.0 (Qpid JMS): headers, typed properties and every body type,
AMQP to AMQP and across protocols on one broker (AMQP <-> the broker's own protocol).

Where ActiveMQ Classic's AMQP mapping (its ``jms`` transformer) differs from OpenWire, the
test says so: a body-less message becomes an empty BytesMessage, an OpenWire MapMessage
reaches an AMQP consumer as an AMQP-typed ObjectMessage (ActiveMQ sends the map as an AMQP
value without the JMS message-type annotation), and messages from AMQP senders carry the
broker's ``JMS_AMQP_*`` bookkeeping properties when read over OpenWire.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import pyjms
from tests.amqp.conftest import AmqpPeer
from tests.interop.test_java_peer import jms_type_of

TTL_MS = 60_000

#: property name -> (setter, value, JMS type)
PROPERTIES: dict[str, tuple[str, Any, str]] = {
    "pBoolean": ("set_boolean_property", True, "boolean"),
    "pByte": ("set_byte_property", -7, "byte"),
    "pShort": ("set_short_property", -12345, "short"),
    "pInt": ("set_int_property", 123_456_789, "int"),
    "pLong": ("set_long_property", 9_007_199_254_740_993, "long"),  # 2^53 + 1: not exact as a double
    "pFloat": ("set_float_property", 3.5, "float"),
    "pDouble": ("set_double_property", -2.5e-3, "double"),
    "pString": ("set_string_property", 'ünïcödé "quoted" ✓', "String"),
}

MAP = {"mInt": 1, "mLong": 2**40, "mDouble": 1.5, "mBoolean": True, "mString": "map ✓", "mBytes": b"\xde\xad"}


def _text(ctx: pyjms.JMSContext) -> pyjms.Message:
    return ctx.create_text_message("héllo over AMQP ✓ 😀")


def _bytes(ctx: pyjms.JMSContext) -> pyjms.Message:
    m = ctx.create_bytes_message()
    m.write_bytes(bytes([0x00, 0x01, 0x7F, 0x80, 0xFF]))
    return m


def _map(ctx: pyjms.JMSContext) -> pyjms.Message:
    m = ctx.create_map_message()
    m.set_int("mInt", MAP["mInt"])
    m.set_long("mLong", MAP["mLong"])
    m.set_double("mDouble", MAP["mDouble"])
    m.set_boolean("mBoolean", MAP["mBoolean"])
    m.set_string("mString", MAP["mString"])
    m.set_bytes("mBytes", MAP["mBytes"])
    return m


def _bodyless(ctx: pyjms.JMSContext) -> pyjms.Message:
    return ctx.create_message()


BODIES: dict[str, Callable[[pyjms.JMSContext], pyjms.Message]] = {
    "text": _text,
    "bytes": _bytes,
    "map": _map,
    "bodyless": _bodyless,
}


def _decorated(ctx: pyjms.JMSContext, kind: str, reply_to: pyjms.Queue) -> pyjms.Message:
    m = BODIES[kind](ctx)
    for name, (setter, value, _) in PROPERTIES.items():
        getattr(m, setter)(name, value)
    m.set_jms_correlation_id(f"corr-{kind}")
    m.set_jms_type(f"pyjms.{kind}")
    m.set_jms_reply_to(reply_to)
    return m


def _send(ctx: pyjms.JMSContext, queue: pyjms.Queue, m: pyjms.Message, mode: int = pyjms.PERSISTENT) -> None:
    ctx.create_producer().set_priority(8).set_time_to_live(TTL_MS).set_delivery_mode(mode).send(queue, m)


def _receive_one(ctx: pyjms.JMSContext, queue: pyjms.Queue) -> pyjms.Message:
    with ctx.create_consumer(queue) as consumer:
        got = consumer.receive(10_000)
    assert got is not None, f"nothing arrived on {queue}"
    return got


def _assert_headers_and_properties(
    sent: pyjms.Message,
    got: pyjms.Message,
    queue: pyjms.Queue,
    reply_to: pyjms.Queue,
    kind: str,
    mode: int,
    got_id: str | None = None,
) -> None:
    assert (got_id or got.get_jms_message_id()) == sent.get_jms_message_id()
    assert got.get_jms_timestamp() == sent.get_jms_timestamp()
    assert got.get_jms_correlation_id() == f"corr-{kind}"
    assert got.get_jms_type() == f"pyjms.{kind}"
    assert got.get_jms_reply_to() == reply_to
    assert got.get_jms_destination() == queue
    assert got.get_jms_priority() == 8
    assert got.get_jms_delivery_mode() == mode
    # Artemis's client reads the clock for the expiration apart from the timestamp: a ms or two apart
    assert abs(got.get_jms_expiration() - (sent.get_jms_timestamp() + TTL_MS)) <= 5
    assert got.get_jms_delivery_time() == sent.get_jms_timestamp()  # no delay
    assert not got.get_jms_redelivered() and got.get_delivery_count() == 1
    for name, (_, value, jms_type) in PROPERTIES.items():
        assert got.get_object_property(name) == value, name
        assert jms_type_of(got, name) == jms_type, name


def _assert_body(got: pyjms.Message, kind: str) -> None:
    if kind == "text":
        assert isinstance(got, pyjms.TextMessage) and got.get_text() == "héllo over AMQP ✓ 😀"
    elif kind == "bytes":
        assert isinstance(got, pyjms.BytesMessage) and got.get_body() == bytes([0x00, 0x01, 0x7F, 0x80, 0xFF])
    elif kind == "map":
        assert isinstance(got, pyjms.MapMessage) and got.get_body() == MAP
        assert got.get_int("mInt") == 1 and got.get_long("mLong") == 2**40
        with pytest.raises(pyjms.MessageFormatRuntimeException):
            got.get_int("mLong")  # still a long, not narrowed
    else:
        assert type(got) is pyjms.Message and got.get_body() is None


@pytest.mark.parametrize("kind", list(BODIES))
def test_every_body_header_and_property_type_round_trips_over_amqp(
    amqp: pyjms.JMSContext, qname: str, kind: str
) -> None:
    q, reply = amqp.create_queue(qname), amqp.create_queue(f"{qname}.REPLY")
    mode = pyjms.NON_PERSISTENT if kind == "bytes" else pyjms.PERSISTENT
    sent = _decorated(amqp, kind, reply)
    _send(amqp, q, sent, mode)
    got = _receive_one(amqp, q)
    _assert_headers_and_properties(sent, got, q, reply, kind, mode)
    _assert_body(got, kind)
    assert not [n for n in got.get_property_names() if n.startswith("JMS_AMQP_")]


@pytest.mark.parametrize("kind", list(BODIES))
def test_amqp_sender_to_native_receiver_keeps_headers_and_typed_properties(
    amqp: pyjms.JMSContext, native: pyjms.JMSContext, amqp_peer: AmqpPeer, qname: str, kind: str
) -> None:
    q, reply = amqp.create_queue(qname), amqp.create_queue(f"{qname}.REPLY")
    mode = pyjms.NON_PERSISTENT if kind == "bytes" else pyjms.PERSISTENT
    sent = _decorated(amqp, kind, reply)
    _send(amqp, q, sent, mode)
    got = _receive_one(native, q)
    _assert_headers_and_properties(sent, got, q, reply, kind, mode, amqp_peer.sent_id_as_native_sees_it(got))
    if kind == "bodyless" and (amqp_peer.product.startswith("ActiveMQ ") or amqp_peer.converts_for_native):
        # ActiveMQ Classic's and Artemis's AMQP mappings: a message without a body becomes an empty BytesMessage
        assert isinstance(got, pyjms.BytesMessage) and got.get_body() == b""
    else:
        _assert_body(got, kind)
    if amqp_peer.product.startswith("ActiveMQ "):
        # ActiveMQ Classic keeps the AMQP message's sections as JMS_AMQP_* properties
        assert got.get_boolean_property("JMS_AMQP_HEADER") is True


@pytest.mark.parametrize("kind", list(BODIES))
def test_native_sender_to_amqp_receiver_keeps_headers_and_typed_properties(
    amqp: pyjms.JMSContext, native: pyjms.JMSContext, amqp_peer: AmqpPeer, qname: str, kind: str
) -> None:
    q, reply = native.create_queue(qname), native.create_queue(f"{qname}.REPLY")
    mode = pyjms.NON_PERSISTENT if kind == "bytes" else pyjms.PERSISTENT
    sent = _decorated(native, kind, reply)
    _send(native, q, sent, mode)
    got = _receive_one(amqp, q)
    _assert_headers_and_properties(sent, got, q, reply, kind, mode)
    activemq = amqp_peer.product.startswith("ActiveMQ ")
    if kind == "map" and activemq:
        # ActiveMQ Classic sends an OpenWire map as an AMQP map value without the JMS type
        # annotation, which Qpid JMS reads as an (AMQP-typed) ObjectMessage; pyjms never
        # decodes object bodies, but its headers and properties are all there
        assert isinstance(got, pyjms.ObjectMessage)
        with pytest.raises(pyjms.MessageFormatRuntimeException):
            got.get_body()
    elif kind == "bodyless" and activemq:
        assert isinstance(got, pyjms.BytesMessage) and got.get_body() == b""
    else:
        _assert_body(got, kind)


def test_request_reply_through_a_temporary_queue_over_amqp(amqp: pyjms.JMSContext, qname: str) -> None:
    requests = amqp.create_queue(qname)
    replies = amqp.create_temporary_queue()
    request = amqp.create_text_message("ping")
    request.set_jms_reply_to(replies)
    amqp.create_producer().send(requests, request)
    with amqp.create_context() as server:
        got = _receive_one(server, requests)
        assert got.get_jms_reply_to() == replies
        server.create_producer().send_reply(got, "pong")
    with amqp.create_consumer(replies) as consumer:
        reply = consumer.receive(10_000)
    assert reply is not None and reply.get_body() == "pong"
    assert reply.get_jms_correlation_id() == request.get_jms_message_id()


def test_transacted_amqp_send_is_invisible_until_commit(
    amqp_peer: AmqpPeer, amqp: pyjms.JMSContext, qname: str
) -> None:
    q = amqp.create_queue(qname)
    with (
        pyjms.ConnectionFactory(amqp_peer.url).create_context(pyjms.SESSION_TRANSACTED) as tx,
        amqp.create_consumer(q) as consumer,
    ):
        tx.create_producer().send(q, "one")
        assert consumer.receive(500) is None
        tx.commit()
        got = consumer.receive(10_000)
        assert got is not None and got.get_body() == "one"


def test_batch_send_and_receive_over_amqp(amqp: pyjms.JMSContext, qname: str) -> None:
    q = amqp.create_queue(qname)
    bodies = [f"m{i}" if i % 2 else f"b{i}".encode() for i in range(50)]
    assert amqp.create_producer().set_property("n", 1).send_batch(q, bodies) == 50
    got: list[pyjms.Message] = []
    with amqp.create_consumer(q) as consumer:
        while len(got) < 50:
            batch = consumer.receive_batch(50, 10_000)
            assert batch, f"only {len(got)} of 50 arrived"
            got.extend(batch)
    assert [m.get_body() for m in got] == bodies
    assert all(m.get_int_property("n") == 1 for m in got)


def test_receive_no_wait_still_asks_the_peer_after_a_batch(amqp: pyjms.JMSContext, qname: str) -> None:
    """A batch takes the rest of what has arrived without asking the peer (Qpid JMS's drain,
    a round trip, is turned off for that call only): afterwards receive_no_wait still asks, so
    a message on the broker that has not reached a new consumer yet is returned, not None."""
    first, second = amqp.create_queue(qname), amqp.create_queue(f"{qname}.2")
    producer = amqp.create_producer()
    producer.send_batch(first, ["a", "b", "c"])
    with amqp.create_consumer(first) as consumer:
        got: list[str] = []
        while len(got) < 3:
            batch = consumer.receive_batch(10, 10_000)
            assert batch, f"only {got} of 3 arrived"
            got += [m.get_text() for m in batch]
        assert got == ["a", "b", "c"]
    producer.send(second, "d")  # persistent: on the broker when send returns
    with amqp.create_consumer(second) as consumer:
        m = consumer.receive_no_wait()
        assert m is not None and m.get_text() == "d"
