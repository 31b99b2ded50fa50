"""JMS 2.0 features Qpid JMS has of its own, used as they are over AMQP: sends with a
CompletionListener, receive_body, and redelivery after a failed listener (where ActiveMQ
Classic's client lacks them, pyjms emulates them; tests/integration covers that)."""

from __future__ import annotations

import threading

import pytest

import pyjms
from tests.amqp.conftest import AmqpPeer
from tests.conftest import drain


def test_async_sends_complete_in_order_with_their_headers_on_a_pyjms_thread(
    amqp: pyjms.JMSContext, qname: str
) -> None:
    q = amqp.create_queue(qname)
    completed: list[tuple[str, str | None, str]] = []
    done = threading.Event()

    class Listener:
        def on_completion(self, message: pyjms.Message) -> None:
            completed.append(
                (message.get_text(), message.get_jms_message_id(), threading.current_thread().name)
            )
            if len(completed) == 20:
                done.set()

        def on_exception(self, message: pyjms.Message, exception: pyjms.JMSRuntimeException) -> None:
            completed.append((message.get_text(), f"error {exception}", threading.current_thread().name))

    p = amqp.create_producer().set_async(Listener())
    sent = [amqp.create_text_message(str(i)) for i in range(20)]
    for m in sent:
        p.send(q, m)
    assert done.wait(20), completed
    assert [text for text, _, _ in completed] == [str(i) for i in range(20)]
    assert [mid for _, mid, _ in completed] == [m.get_jms_message_id() for m in sent]
    assert all(mid and mid.startswith("ID:") for _, mid, _ in completed)
    # listeners run on a pyjms thread, never on the caller's or the client's own threads
    assert all(name.startswith("pyjms-") for _, _, name in completed)
    p.set_async(None).send(q, "last")  # a synchronous send after async ones keeps the order
    with amqp.create_consumer(q) as consumer:
        assert [m.get_text() for m in drain(consumer)] == [str(i) for i in range(20)] + ["last"]


def test_commit_waits_for_async_sends_in_a_transaction(amqp_peer: AmqpPeer, qname: str) -> None:
    factory = pyjms.ConnectionFactory(amqp_peer.url)
    completions: list[Exception | None] = []
    with factory.create_context(pyjms.SESSION_TRANSACTED) as tx, factory.create_context() as reader:
        q = tx.create_queue(qname)
        p = tx.create_producer().set_async(lambda m, e: completions.append(e))
        for i in range(5):
            p.send(q, tx.create_text_message(f"t{i}"))
        tx.commit()
        assert completions == [None] * 5  # all completed before the commit returned
        with reader.create_consumer(q) as consumer:
            assert [m.get_text() for m in drain(consumer, 2000)] == [f"t{i}" for i in range(5)]


@pytest.mark.parametrize("mode", [pyjms.AUTO_ACKNOWLEDGE, pyjms.DUPS_OK_ACKNOWLEDGE], ids=["auto", "dups-ok"])
def test_receive_body_returns_bodies_and_leaves_a_message_it_cannot_convert(
    amqp_peer: AmqpPeer, qname: str, mode: int
) -> None:
    with pyjms.ConnectionFactory(amqp_peer.url).create_context(mode) as ctx:
        q = ctx.create_queue(qname)
        p = ctx.create_producer()
        p.send(q, "text")
        p.send(q, b"bytes")
        p.send(q, {"k": 1, "s": "v", "raw": b"\x00"})
        with ctx.create_consumer(q) as c:
            assert c.receive_body(str, 10_000) == "text"
            with pytest.raises(pyjms.MessageFormatRuntimeException, match="receive_body"):
                c.receive_body(str, 10_000)
            # the message that could not be returned as str is still there
            assert c.receive_body(bytes, 10_000) == b"bytes"
            assert c.receive_body(dict, 10_000) == {"k": 1, "s": "v", "raw": b"\x00"}
            assert c.receive_body(str, 300) is None


def test_receive_body_as_object_and_bytearray(amqp: pyjms.JMSContext, qname: str) -> None:
    q = amqp.create_queue(qname)
    amqp.create_producer().send(q, "any")
    amqp.create_producer().send(q, b"\x01\x02")
    with amqp.create_consumer(q) as c:
        assert c.receive_body(object, 10_000) == "any"
        assert c.receive_body(bytearray, 10_000) == bytearray(b"\x01\x02")
        with pytest.raises(pyjms.MessageFormatRuntimeException, match="not"):
            c.receive_body(int, 10)


def test_receive_body_in_client_acknowledge_mode_is_acknowledged_by_the_application(
    amqp_peer: AmqpPeer, qname: str
) -> None:
    with pyjms.ConnectionFactory(amqp_peer.url).create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send(q, "first")
        with ctx.create_consumer(q) as c:
            assert c.receive_body(str, 10_000) == "first"
            ctx.recover()  # not acknowledged: delivered again
            assert c.receive_body(str, 10_000) == "first"
            ctx.acknowledge()
            ctx.recover()
            assert c.receive_body(str, 300) is None


def test_failed_listener_gets_its_message_again_marked_redelivered(
    amqp: pyjms.JMSContext, qname: str
) -> None:
    q = amqp.create_queue(qname)
    seen: list[tuple[str, bool]] = []
    done = threading.Event()
    failed_once: list[bool] = []

    def listener(m: pyjms.Message) -> None:
        if m.get_text() == "boom" and not failed_once:
            failed_once.append(True)
            raise RuntimeError("listener failure")
        seen.append((m.get_text(), m.get_jms_redelivered()))
        if len(seen) == 3:
            done.set()

    with amqp.create_consumer(q) as c:
        c.set_message_listener(listener)
        amqp.create_producer().send_batch(q, ["a", "boom", "b"])
        assert done.wait(20), seen
        c.set_message_listener(None)
        assert c.receive(300) is None
    assert ("boom", True) in seen and ("a", False) in seen and len(seen) == 3
