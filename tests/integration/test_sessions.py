"""Transactions, acknowledgement modes, listeners and async send on a real broker."""

from __future__ import annotations

import threading
import time

import pytest

import pyjms
from tests.conftest import drain, drain_expecting, take_batches

# provider-independent: each test runs on ActiveMQ Classic and on Apache Artemis
# Artemis in-vm too: the embedded Artemis broker is a supported way in (vm://N)
pytestmark = [pytest.mark.providers("activemq", "artemis"), pytest.mark.artemis_in_vm]


def test_transacted_send_is_invisible_until_commit(factory, qname):
    with factory.create_context(pyjms.SESSION_TRANSACTED) as tx, factory.create_context() as reader:
        q = tx.create_queue(qname)
        p = tx.create_producer()
        p.send(q, "one")
        p.send_batch(q, ["two", "three"])
        c = reader.create_consumer(q)
        assert c.receive(300) is None
        tx.commit()
        assert [m.get_text() for m in drain(c)] == ["one", "two", "three"]
        p.send(q, "rolled back")
        tx.rollback()
        assert c.receive(300) is None


def test_transacted_receive_rollback_redelivers(factory, qname):
    with factory.create_context(pyjms.SESSION_TRANSACTED) as tx:
        q = tx.create_queue(qname)
        tx.create_producer().send(q, "m")
        tx.commit()
        c = tx.create_consumer(q)
        assert c.receive(5000).get_jms_redelivered() is False
        tx.rollback()
        again = c.receive(5000)
        assert again.get_text() == "m" and again.get_jms_redelivered() is True
        assert again.get_delivery_count() == 2
        tx.commit()
        assert c.receive(300) is None


def test_client_acknowledge_and_recover(factory, qname):
    with factory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send_batch(q, ["a", "b"])
        c = ctx.create_consumer(q)
        assert c.receive(5000).get_text() == "a"
        ctx.recover()
        a = c.receive(5000)
        assert a.get_text() == "a" and a.get_jms_redelivered()
        b = c.receive(5000)
        b.acknowledge()  # acknowledges a and b
        ctx.recover()
        assert c.receive(300) is None
    with factory.create_context() as check:
        assert check.create_consumer(check.create_queue(qname)).receive(300) is None


def test_unacknowledged_messages_survive_close(factory, qname):
    with factory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send(q, "keep")
        assert ctx.create_consumer(q).receive(5000).get_text() == "keep"
    with factory.create_context() as ctx:
        m = ctx.create_consumer(ctx.create_queue(qname)).receive(5000)
        assert m is not None and m.get_jms_redelivered()


def test_a_client_acknowledge_listener_acknowledges_the_message_it_is_given(factory, qname):
    """message.acknowledge() inside a CLIENT_ACKNOWLEDGE listener covers that message, the
    first one included (the shim once counted a message consumed only after its listener)."""
    acknowledged = threading.Event()

    def listener(m: pyjms.Message) -> None:
        m.acknowledge()
        acknowledged.set()

    with factory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send(q, "only")
        ctx.create_consumer(q).set_message_listener(listener)
        assert acknowledged.wait(10)
    with factory.create_context() as check:
        assert check.create_consumer(check.create_queue(qname)).receive(500) is None


@pytest.mark.providers("activemq", "artemis", "amqp")
def test_a_client_acknowledge_batch_is_removed_only_once_acknowledged(factory, qname):
    """The bulk-consumer recipe (docs/api.md): receive_batch in a CLIENT_ACKNOWLEDGE context,
    then acknowledge() once the batch is handled. A batch its consumer never acknowledged (it
    died mid-batch) comes back whole and marked redelivered; an acknowledged one is gone."""
    texts = [f"m{i}" for i in range(10)]
    with factory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send_batch(q, texts)
        c = ctx.create_consumer(q)
        assert [m.get_text() for m in take_batches(c, 4)] == texts[:4]
        ctx.acknowledge()
        assert [m.get_text() for m in take_batches(c, 6)] == texts[4:]
        # closed without acknowledging the second batch
    with factory.create_context() as check:
        back = drain(check.create_consumer(check.create_queue(qname)), 1000)
        assert [m.get_text() for m in back] == texts[4:]
        assert all(m.get_jms_redelivered() for m in back)


def test_message_listener_receives_and_failures_redeliver(ctx, qname):
    q = ctx.create_queue(qname)
    seen: list[tuple[str, bool]] = []
    done = threading.Event()
    failed_once = []

    def listener(m: pyjms.Message) -> None:
        if m.get_text() == "boom" and not failed_once:
            failed_once.append(True)
            raise RuntimeError("listener failure")
        seen.append((m.get_text(), m.get_jms_redelivered()))
        if len(seen) == 3:
            done.set()

    c = ctx.create_consumer(q)
    c.set_message_listener(listener)
    assert c.get_message_listener() is listener
    with pytest.raises(pyjms.IllegalStateRuntimeException):
        c.receive(10)
    ctx.create_producer().send_batch(q, ["a", "boom", "b"])
    assert done.wait(10), seen
    assert ("boom", True) in seen and ("a", False) in seen
    c.set_message_listener(None)
    assert c.receive(300) is None


def test_listener_threads_do_not_leak_across_many_contexts(factory, qname):
    before = threading.active_count()
    for _ in range(5):
        with factory.create_context() as ctx:
            got = threading.Event()
            ctx.create_consumer(ctx.create_queue(qname)).set_message_listener(lambda m: got.set())
            ctx.create_producer().send(ctx.create_queue(qname), "x")
            assert got.wait(10)
    time.sleep(0.5)
    assert threading.active_count() <= before + 1


def test_async_send_completes_in_order(ctx, qname):
    q = ctx.create_queue(qname)
    completed: list[str] = []
    done = threading.Event()

    class Listener:
        def on_completion(self, message):
            completed.append(message.get_text())
            if len(completed) == 20:
                done.set()

        def on_exception(self, message, exception):
            completed.append(f"error {exception}")

    p = ctx.create_producer().set_async(Listener())
    sent = [ctx.create_text_message(str(i)) for i in range(20)]
    for m in sent:
        p.send(q, m)
    assert done.wait(10)
    assert completed == [str(i) for i in range(20)]
    assert all(m.get_jms_message_id() for m in sent)
    # a synchronous send after async ones keeps the order
    p.set_async(None).send(q, "last")
    assert [m.get_text() for m in drain(ctx.create_consumer(q))] == [str(i) for i in range(20)] + ["last"]


def test_async_send_failure_reaches_the_listener(ctx):
    errors = []
    done = threading.Event()

    def listener(message, exception):
        errors.append(exception)
        done.set()

    bad = pyjms.Queue("bad>name*")  # ActiveMQ rejects wildcard names for producers
    ctx.create_producer().set_async(listener).send(bad, ctx.create_text_message("x"))
    assert done.wait(10)
    assert errors[0] is None or isinstance(errors[0], pyjms.JMSRuntimeException)


def test_sibling_contexts_share_a_connection(factory, qname):
    with factory.create_context() as first:
        second = first.create_context(pyjms.SESSION_TRANSACTED)
        q = first.create_queue(qname)
        second.create_producer().send(q, "x")
        second.commit()
        second.close()
        assert first.create_consumer(q).receive(5000).get_text() == "x"


@pytest.mark.providers("activemq", "artemis", "amqp")
def test_individual_acknowledge_acknowledges_exactly_the_messages_named(factory, qname):
    """INDIVIDUAL_ACKNOWLEDGE (the providers' own mode): a message's acknowledge() and
    acknowledge_messages acknowledge those messages only; the close hands back the others, each
    once; ctx.acknowledge() acknowledges everything consumed."""
    bodies = [f"m{i}" for i in range(1, 11)]
    with factory.create_context(pyjms.INDIVIDUAL_ACKNOWLEDGE) as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send_batch(q, bodies)
        consumer = ctx.create_consumer(q)
        got = []
        while len(got) < len(bodies):
            more = consumer.receive_batch(10, 5000)
            assert more, "not every message arrived"
            got += more
        assert [m.get_text() for m in got] == bodies
        got[4].acknowledge()
        ctx.acknowledge_messages([got[1], got[7]])
    with factory.create_context(pyjms.INDIVIDUAL_ACKNOWLEDGE) as ctx:
        back = drain_expecting(ctx.create_consumer(q), 7)
        assert sorted(m.get_text() for m in back) == sorted(set(bodies) - {"m2", "m5", "m8"})
        ctx.acknowledge()
    with factory.create_context() as ctx:
        assert ctx.create_consumer(q).receive(300) is None
    with factory.create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
        with pytest.raises(pyjms.IllegalStateRuntimeException, match="INDIVIDUAL_ACKNOWLEDGE"):
            ctx.acknowledge_messages([])
