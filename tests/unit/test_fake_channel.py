"""The fake channel (tests/fakes/channel.py) keeps the real channel's contract: what Python
sends comes back as the shim would hand it over, for every message kind and every value type
the codec carries, with the headers, delay, expiry, acknowledgement and transaction rules of
org.pyjms.shim.Channel. The tests of client logic rely on it, so it is tested itself."""

from __future__ import annotations

import inspect
import math

import pytest

import pyjms
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from pyjms.bridge.channel import Browser, Channel, Receiver
from pyjms.errors import IllegalStateRuntimeException
from tests.fakes.channel import (
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    SESSION_TRANSACTED,
    FakeBroker,
    FakeBrowser,
    FakeChannel,
    FakeReceiver,
    ManualClock,
    StoredMessage,
    decode_record,
    encode_record,
)

Q = "queue://Q"
T = "topic://T"
#: persistent, default priority, no TTL, no delay, no flags
PLAIN = (2, 4, 0, 0, 0)


def started(broker: FakeBroker, mode: int = AUTO_ACKNOWLEDGE) -> FakeChannel:
    channel = broker.open_channel(mode)
    channel.start()
    return channel


def send(
    channel: FakeChannel, message: pyjms.Message, key: str = Q, options: tuple[int, ...] = PLAIN
) -> None:
    channel.send(key, message.encode(), *options, "send")


def received(receiver: FakeReceiver, ack: bool = True) -> pyjms.Message | None:
    raw = receiver.receive(0, ack, "receive")
    return None if raw is None else pyjms.Message.from_record(C.IncomingRecord(raw, 0))


def texts(receiver: FakeReceiver) -> list[str | None]:
    out = []
    while (m := received(receiver)) is not None:
        out.append(m.get_text())  # type: ignore[attr-defined]
    return out


#: one property of every JMS type a Python sender can set, at its edges
EVERY_PROPERTY_TYPE = {
    "b": (C.T_BOOL, True),
    "y": (C.T_BYTE, -128),
    "s": (C.T_SHORT, 32767),
    "i": (C.T_INT, -(2**31)),
    "l": (C.T_LONG, 2**63 - 1),
    "f": (C.T_FLOAT, 0.25),
    "d": (C.T_DOUBLE, -1e300),
    "t": (C.T_STRING, "région 😀"),
    "e": (C.T_STRING, ""),
}


@pytest.mark.parametrize(
    "message",
    [
        pyjms.TextMessage("héllo 😀"),
        pyjms.TextMessage(""),
        pyjms.TextMessage(None),
        pyjms.BytesMessage(b"\x00\xff" * 10_000),
        pyjms.BytesMessage(b""),
        pyjms.MapMessage({"n": 1, "big": 2**40, "x": 1.5, "ok": False, "s": "é", "raw": b"\x01"}),
        pyjms.MapMessage(),
        pyjms.Message(),
    ],
    ids=["text", "empty-text", "null-text", "bytes", "empty-bytes", "map", "empty-map", "message"],
)
def test_every_message_kind_round_trips(broker: FakeBroker, message: pyjms.Message) -> None:
    channel = started(broker)
    for name, (tag, value) in EVERY_PROPERTY_TYPE.items():
        message._set(name, tag, value)
    message.set_jms_correlation_id("corr-1")
    message.set_jms_type("order")
    message.set_jms_reply_to(pyjms.Queue("R"))
    send(channel, message)
    got = received(channel.consumer(Q, None, False, "consumer"))
    assert got is not None and type(got) is type(message)
    assert dict(got.typed_properties()) == EVERY_PROPERTY_TYPE
    assert (got.get_jms_correlation_id(), got.get_jms_type(), got.get_jms_reply_to()) == (
        "corr-1",
        "order",
        pyjms.Queue("R"),
    )
    assert got.get_body() == message.get_body()


def test_every_value_tag_the_codec_carries_round_trips_in_a_map() -> None:
    """Map entries carry every tag, char and null included (a Java sender's)."""
    entries = {
        **EVERY_PROPERTY_TYPE,
        "raw": (C.T_BYTES, b"\x00\x01\xfe"),
        "c": (C.T_CHAR, "Z"),
        "none": (C.T_NULL, None),
        "nan": (C.T_DOUBLE, math.inf),
    }
    stored = StoredMessage(C.KIND_MAP, entries, {"p": (C.T_CHAR, "é")}, message_id="ID:1", destination=Q)
    rec = C.IncomingRecord(encode_record(stored), 0)
    headers, props = rec.headers_and_properties()
    assert rec.body() == entries and props == {"p": (C.T_CHAR, "é")}
    assert headers["message_id"] == "ID:1" and headers["destination"] == Q


def test_a_record_python_packs_decodes_as_the_shim_decodes_it() -> None:
    props = C.pack_properties({"a": (C.T_INT, 5)})
    record = C.pack_record(C.KIND_TEXT, "hi", C.pack_headers("c", None, "queue://R"), props)
    message, end = decode_record(record)
    assert end == len(record)
    assert (message.kind, message.body, message.properties) == (C.KIND_TEXT, "hi", {"a": (C.T_INT, 5)})
    assert (message.correlation_id, message.jms_type, message.reply_to) == ("c", None, "queue://R")
    with pytest.raises(ValueError, match="kind 4"):
        decode_record(bytes((C.KIND_OBJECT, 0)))


def test_a_send_gets_the_providers_headers(broker: FakeBroker, clock: ManualClock) -> None:
    channel = started(broker)
    headers, _ = C.read_headers(
        channel.send_described(Q, pyjms.TextMessage("x").encode(), 1, 7, 5000, 0, 0, "send"), 0
    )
    assert headers["message_id"].startswith("ID:") and headers["timestamp"] == clock.now
    assert (headers["delivery_mode"], headers["priority"], headers["expiration"]) == (1, 7, clock.now + 5000)
    assert headers["destination"] == Q and headers["delivery_time"] == clock.now
    flags = contract.SEND_NO_MESSAGE_ID | contract.SEND_NO_TIMESTAMP
    headers, _ = C.read_headers(
        channel.send_described(Q, pyjms.TextMessage("y").encode(), 2, 4, 0, 0, flags, "s"), 0
    )
    assert (headers["message_id"], headers["timestamp"], headers["expiration"]) == (None, 0, 0)


def test_a_native_delay_holds_the_message_until_its_delivery_time(
    broker: FakeBroker, clock: ManualClock
) -> None:
    channel = started(broker)
    receiver = channel.consumer(Q, None, False, "consumer")
    send(channel, pyjms.TextMessage("later"), options=(2, 4, 0, 1000, contract.SEND_DELAY_NATIVE))
    assert received(receiver) is None
    clock.now += 999
    assert received(receiver) is None
    clock.now += 1
    got = received(receiver)
    assert got is not None and got.get_jms_delivery_time() == clock.now
    assert contract.DELIVERY_TIME not in got.typed_properties()  # the client carries it itself


def test_a_scheduler_delay_records_pyjms_times(broker: FakeBroker, clock: ManualClock) -> None:
    channel = started(broker)
    sent_at = clock.now
    send(channel, pyjms.TextMessage("x"), options=(2, 4, 5000, 1000, contract.SEND_DELAY_SCHEDULER))
    clock.now += 1000
    raw = channel.consumer(Q, None, False, "consumer").receive(0, True, "receive")
    assert raw is not None
    got = pyjms.Message.from_record(C.IncomingRecord(raw, 0))
    assert got.wire_headers()["timestamp"] == sent_at  # the send time, not the scheduler's
    props = got.typed_properties()
    assert props[contract.DELIVERY_TIME] == (C.T_LONG, sent_at + 1000)
    assert props[contract.SEND_TIME] == (C.T_LONG, sent_at)
    assert got.get_jms_expiration() == sent_at + 5000 and got.get_jms_timestamp() == sent_at


def test_a_delay_without_a_mechanism_is_only_recorded(broker: FakeBroker, clock: ManualClock) -> None:
    channel = started(broker)
    send(channel, pyjms.TextMessage("now"), options=(2, 4, 0, 60_000, 0))
    got = received(channel.consumer(Q, None, False, "consumer"))  # at once: a processor holds it
    assert got is not None and got.get_jms_delivery_time() == clock.now + 60_000


def test_e03_an_expired_message_is_neither_received_nor_browsed(
    broker: FakeBroker, clock: ManualClock
) -> None:
    channel = started(broker)
    send(channel, pyjms.TextMessage("short"), options=(2, 4, 100, 0, 0))
    send(channel, pyjms.TextMessage("long"), options=(2, 4, 0, 0, 0))
    clock.now += 100
    browser = channel.browser(Q, None, "browse")
    assert [r.body() for r in C.iter_batch(browser.next(10, "browse"))] == ["long"]
    assert texts(channel.consumer(Q, None, False, "consumer")) == ["long"]
    assert broker.queue("Q") == []  # the broker dropped it


def test_a_transaction_sends_and_consumes_at_commit(broker: FakeBroker) -> None:
    sender = started(broker)
    send(sender, pyjms.TextMessage("a"))
    tx = started(broker, SESSION_TRANSACTED)
    receiver = tx.consumer(Q, None, False, "consumer")
    assert texts(receiver) == ["a"]
    send(tx, pyjms.TextMessage("b"))
    assert broker.queue("Q") == []
    tx.rollback()  # "a" comes back, redelivered; "b" was never sent
    again = received(receiver)
    assert again is not None and again.get_jms_redelivered() and again.get_delivery_count() == 2
    send(tx, pyjms.TextMessage("c"))
    tx.commit()
    assert [m.text() for m in broker.queue("Q")] == ["c"]
    with pytest.raises(IllegalStateRuntimeException):
        tx.recover()
    with pytest.raises(IllegalStateRuntimeException):
        sender.commit()


def test_client_acknowledge_covers_every_message_the_session_consumed(broker: FakeBroker) -> None:
    channel = started(broker, CLIENT_ACKNOWLEDGE)
    for text in "abc":
        send(channel, pyjms.TextMessage(text))
    receiver = channel.consumer(Q, None, False, "consumer")
    assert [received(receiver).get_text() for _ in range(2)] == ["a", "b"]  # type: ignore[union-attr]
    channel.recover()
    assert texts(receiver) == ["a", "b", "c"]
    channel.acknowledge()
    channel.recover()
    assert texts(receiver) == []


def test_an_auto_acknowledged_receive_without_ack_waits_for_ack_last(broker: FakeBroker) -> None:
    channel = started(broker)
    for text in "ab":
        send(channel, pyjms.TextMessage(text))
    receiver = channel.consumer(Q, None, False, "consumer")
    assert received(receiver).get_text() == "a"  # type: ignore[union-attr]
    channel.recover()  # "a" was acknowledged as it was received
    assert received(receiver, ack=False).get_text() == "b"  # type: ignore[union-attr]
    channel.recover()
    assert received(receiver, ack=False).get_text() == "b"  # type: ignore[union-attr]  # redelivered
    receiver.ack_last()
    channel.recover()
    assert received(receiver) is None


def test_a_consumer_starts_the_connection_and_a_stopped_one_delivers_nothing(broker: FakeBroker) -> None:
    channel = broker.open_channel()
    send(channel, pyjms.TextMessage("a"))
    assert not channel.connection.started
    receiver = channel.consumer(Q, None, False, "consumer")  # JMS 2.0 autostart
    channel.stop()
    assert received(receiver) is None
    channel.sibling(AUTO_ACKNOWLEDGE, "sibling").start()  # the connection is shared
    assert texts(receiver) == ["a"]


def test_every_subscriber_of_a_topic_gets_its_copy(broker: FakeBroker) -> None:
    channel = broker.open_channel(client_id="me")
    first, second = (channel.consumer(T, None, False, "consumer") for _ in range(2))
    durable = channel.durable_consumer(T, "d", None, False, "durable")
    durable.close()
    send(channel, pyjms.TextMessage("news"), key=T)
    assert texts(first) == ["news"] and texts(second) == ["news"]
    assert texts(channel.durable_consumer(T, "d", None, False, "durable")) == ["news"]  # kept while away
    with pytest.raises(IllegalStateRuntimeException):
        channel.unsubscribe("d", "unsubscribe")  # it has a consumer again


def test_batches_and_routed_entries_reach_their_destinations(broker: FakeBroker) -> None:
    channel = started(broker)
    records = [pyjms.TextMessage(t).encode() for t in ("a", "b")]
    assert channel.send_batch(Q, C.pack_batch(records, 2), *PLAIN, "send_batch") == 2
    routed = [C.pack_routed("queue://R", 1, 9, 0, 0, pyjms.TextMessage("r").encode())]
    assert channel.send_routed(C.pack_batch(routed, 1), 0, "send_routed") == 1
    assert [m.text() for m in broker.queue("Q")] == ["a", "b"]
    (r,) = broker.queue("R")
    assert (r.text(), r.delivery_mode, r.priority) == ("r", 1, 9)
    batch = channel.consumer(Q, None, False, "consumer").receive_batch(10, 0, "receive")
    assert [rec.body() for rec in C.iter_batch(batch)] == ["a", "b"]


def test_a_listener_that_fails_gets_the_message_again(broker: FakeBroker) -> None:
    channel = started(broker)
    receiver = channel.consumer(Q, None, False, "consumer")
    receiver.listen()
    send(channel, pyjms.TextMessage("a"))
    raw = channel.next_listened(0)
    assert raw is not None
    receiver_id, rec = C.read_listened(raw)
    assert receiver_id == receiver.id and rec.body() == "a"
    channel.listened_done(False)
    again = channel.next_listened(0)
    assert again is not None and C.read_listened(again)[1].headers_and_properties()[0]["redelivered"]
    channel.listened_done(True)
    channel.recover()  # nothing to give back: the processed message was acknowledged
    assert channel.next_listened(0) is None


def test_forward_consumed_copies_the_last_message_with_the_blocks_changes(broker: FakeBroker) -> None:
    channel = started(broker)
    original = pyjms.TextMessage("x")
    original.set_string_property("keep", "k")
    original.set_string_property("drop", "d")
    send(channel, original)
    got = received(channel.consumer(Q, None, False, "consumer"))
    assert got is not None
    message_id, block = got._forward_block(add_properties={"added": (C.T_INT, 1)}, correlation_id="c")  # type: ignore[misc]
    assert not channel.forward_consumed("ID:other", "queue://F", [], block, *PLAIN[:3], 0, "forward")
    assert channel.forward_consumed(message_id, "queue://F", ["drop"], block, *PLAIN[:3], 0, "forward")
    (copy,) = broker.queue("F")
    assert copy.text() == "x" and copy.correlation_id == "c"
    assert copy.properties == {"keep": (C.T_STRING, "k"), "added": (C.T_INT, 1)}


def test_receive_body_leaves_a_body_of_another_kind(broker: FakeBroker) -> None:
    channel = started(broker)
    send(channel, pyjms.BytesMessage(b"b"))
    receiver = channel.consumer(Q, None, False, "consumer")
    with pytest.raises(pyjms.JMSRuntimeException):
        receiver.receive_body(C.KIND_TEXT, 0, "receive_body")
    raw = receiver.receive_body(C.KIND_BYTES, 0, "receive_body")
    assert raw is not None and C.IncomingRecord(raw, 0).body() == b"b"


def test_a_closed_channel_refuses_every_call_and_gives_back_what_it_held(broker: FakeBroker) -> None:
    channel = started(broker, CLIENT_ACKNOWLEDGE)
    send(channel, pyjms.TextMessage("a"))
    assert received(channel.consumer(Q, None, False, "consumer")) is not None
    channel.close()
    with pytest.raises(IllegalStateRuntimeException, match="send"):
        send(channel, pyjms.TextMessage("b"))
    assert [m.text() for m in broker.queue("Q")] == ["a"]  # unacknowledged: redelivered later


def test_selectors_by_message_id_select_and_others_are_refused_not_ignored(broker: FakeBroker) -> None:
    channel = started(broker)
    for text in ("a", "b", "c"):
        send(channel, pyjms.TextMessage(text))
    first, second, third = (m.message_id for m in broker.queue("Q"))
    browser = channel.browser(Q, f"NOT (JMSMessageID IN ('{first}', '{third}'))", "browse")
    assert [r.body() for r in C.iter_batch(browser.next(10, "browse"))] == ["b"]
    assert texts(channel.consumer(Q, f"JMSMessageID = '{third}'", False, "consumer")) == ["c"]
    assert texts(channel.consumer(Q, f"JMSMessageID IN ('{first}','it''s')", False, "consumer")) == ["a"]
    assert [m.message_id for m in broker.queue("Q")] == [second]
    with pytest.raises(NotImplementedError):
        channel.consumer(Q, "x = 1", False, "consumer")


def test_a_durable_subscription_needs_a_client_id(broker: FakeBroker) -> None:
    with pytest.raises(IllegalStateRuntimeException, match="client id"):
        started(broker).durable_consumer(T, "d", None, False, "durable")


def test_an_async_send_completes_under_its_ticket_with_the_providers_headers(broker: FakeBroker) -> None:
    channel = started(broker)
    assert channel.next_completion(0, "completion") is None
    channel.send_async((Q, pyjms.TextMessage("a").encode(), *PLAIN), 41, "send")
    done = channel.next_completion(0, "completion")
    assert done is not None
    ticket, (headers, error) = done
    assert ticket == 41 and error is None and headers is not None
    assert C.read_headers(headers, 0)[0]["message_id"] == broker.queue("Q")[0].message_id


def test_a_broker_told_to_refuse_a_destination_fails_its_sends(broker: FakeBroker) -> None:
    channel = started(broker)
    broker.refuse_sends("queue://FULL", pyjms.ResourceAllocationRuntimeException("full", reason=2053))
    with pytest.raises(pyjms.ResourceAllocationRuntimeException):
        send(channel, pyjms.TextMessage("x"), key="queue://FULL")
    broker.refuse_sends("queue://FULL", None)
    send(channel, pyjms.TextMessage("y"), key="queue://FULL")
    assert [m.text() for m in broker.queue("FULL")] == ["y"]


def test_a_browse_pages_through_the_queue_as_it_was_when_it_began(broker: FakeBroker) -> None:
    channel = started(broker)
    for text in "abc":
        send(channel, pyjms.TextMessage(text))
    browser = channel.browser(Q, None, "browse")
    assert [r.body() for r in C.iter_batch(browser.next(2, "browse"))] == ["a", "b"]
    send(channel, pyjms.TextMessage("d"))  # after the browse began: not in it
    assert [r.body() for r in C.iter_batch(browser.next(2, "browse"))] == ["c"]
    assert list(C.iter_batch(browser.next(2, "browse"))) == []  # the end
    assert len(broker.queue("Q")) == 4


def test_a_leader_queue_dispatches_to_its_oldest_open_consumer_only(broker: FakeBroker) -> None:
    channel = started(broker)
    key = "queue://" + contract.LEADER_PREFIX + "role"
    first, second = (channel.consumer(key, None, False, "consumer") for _ in range(2))
    send(channel, pyjms.TextMessage("token"), key=key)
    assert received(second) is None  # exclusive: the first consumer has it all
    first.close()
    assert texts(second) == ["token"]
    plain = channel.consumer(Q, None, False, "consumer"), channel.consumer(Q, None, False, "consumer")
    send(channel, pyjms.TextMessage("any"))
    assert texts(plain[1]) == ["any"]  # other queues share their messages


#: what the real channel has that the fake leaves out, and why
NOT_FAKED = {
    ("Channel", "open"): "a fake channel is opened by FakeBroker.open_channel (FakeProvider.open_channel)",
    ("Channel", "direct_buffer"): "Java memory the bridge's own receivers write records to",
    ("Channel", "ask_provider"): "a question to the Java provider's shim: fake providers answer themselves",
}


@pytest.mark.parametrize(
    ("real", "fake"),
    [(Channel, FakeChannel), (Receiver, FakeReceiver), (Browser, FakeBrowser)],
    ids=["Channel", "Receiver", "Browser"],
)
def test_the_fake_has_every_method_of_the_real_wire_with_its_parameters(real: type, fake: type) -> None:
    """So the fake keeps up when the channel's contract changes: a method added to the real
    channel fails here until the fake has it too (or NOT_FAKED says why it need not)."""
    differences = []
    for name, member in inspect.getmembers(real, callable):
        if name.startswith("_") or (real.__name__, name) in NOT_FAKED:
            continue
        faked = getattr(fake, name, None)
        if faked is None:
            differences.append(f"{name}: missing")
        elif list(inspect.signature(member).parameters) != list(inspect.signature(faked).parameters):
            differences.append(f"{name}: {inspect.signature(member)} != {inspect.signature(faked)}")
    assert differences == []
