"""The client's public extension points (issue 13): send policies, consumer observers,
transaction synchronizations, provider plug-ins, methods features provide, routed sends and
forwarding; each through public API against a real broker."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

import pyjms
from pyjms.api import extension
from pyjms.api.forward import forward, forward_entry
from pyjms.api.observers import ConsumerObserver, Listener, add_consumer_observer, remove_consumer_observer
from pyjms.api.policy import OutgoingSend, Proceed, ProducerOptions, SendPolicy, SendResult
from pyjms.api.provider import ProviderPlugin
from pyjms.api.synchronization import TransactionSynchronization
from pyjms.bridge import codec as C
from pyjms.bridge.contract import SEND_TIME
from pyjms.providers.activemq import ActiveMQPlugin
from tests.conftest import drain


class Stamp(SendPolicy):
    """Adds a property to sends at priority 9 and refuses those to queues named *.REFUSED."""

    def __init__(self) -> None:
        self.checked: list[ProducerOptions] = []
        self.sent: list[str] = []

    def applies(self, options: ProducerOptions) -> bool:
        return options.priority == 9

    def check_options(self, options: ProducerOptions, context: pyjms.JMSContext) -> None:
        self.checked.append(options)
        if options.time_to_live == 13:
            raise pyjms.InvalidArgumentRuntimeException("13 ms is unlucky")

    def check_send(self, send: OutgoingSend) -> None:
        if send.destination.name.endswith(".REFUSED"):
            raise pyjms.IllegalStateRuntimeException(f"{send.destination} refuses urgent messages")

    def send(self, send: OutgoingSend, proceed: Proceed) -> SendResult:
        self.sent.append(send.destination.name)
        stamped = {**send.properties, "urgent": (C.T_BOOL, True)}
        return proceed(send.replace(properties=stamped))


def test_a_send_policy_sees_the_sends_it_applies_to_and_may_change_or_refuse_them(url, qname):
    stamp = Stamp()
    factory = pyjms.ConnectionFactory(url).add_send_policy(stamp)
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        p = ctx.create_producer()
        p.send(q, "plain")  # priority 4: the policy does not apply
        m = ctx.create_text_message("urgent")
        p.set_priority(9).send(q, m)
        assert p.send_batch(q, ["u1", "u2"]) == 2
        with pytest.raises(pyjms.IllegalStateRuntimeException, match="refuses urgent"):
            p.send(ctx.create_queue(qname + ".REFUSED"), "no")
        with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="unlucky"):
            p.set_time_to_live(13)
        assert p.get_time_to_live() == 0  # a refused option is not set
        got = drain(ctx.create_consumer(q))
    assert stamp.sent == [qname, qname]  # the message and the batch; not the plain one, not the refused one
    by_text = {g.get_text(): g for g in got}
    assert {t: g.property_exists("urgent") for t, g in by_text.items()} == {
        "plain": False,
        "urgent": True,
        "u1": True,
        "u2": True,
    }
    assert m.get_jms_message_id() == by_text["urgent"].get_jms_message_id()  # the sender sees its headers
    assert any(o.time_to_live == 13 for o in stamp.checked)


def test_send_policies_are_the_factorys(url, qname):
    stamp = Stamp()
    pyjms.ConnectionFactory(url).add_send_policy(stamp)
    with pyjms.ConnectionFactory(url).create_context() as ctx:  # another factory: not in its chain
        ctx.create_producer().set_priority(9).send(ctx.create_queue(qname), "x")
    assert stamp.sent == []
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="SendPolicy"):
        pyjms.ConnectionFactory(url).add_send_policy(object())  # type: ignore[arg-type]


class Recorder(TransactionSynchronization):
    def __init__(self) -> None:
        self.events: list[str] = []

    def after_commit(self, context: pyjms.JMSContext) -> None:
        self.events.append("commit")

    def after_rollback(self, context: pyjms.JMSContext) -> None:
        self.events.append("rollback")

    def on_close(self, context: pyjms.JMSContext) -> None:
        self.events.append(f"close closed={context.closed}")


class Failing(TransactionSynchronization):
    def after_commit(self, context: pyjms.JMSContext) -> None:
        raise RuntimeError("a broken feature")


class Watcher(ConsumerObserver):
    """Notes what receives return and wraps listener deliveries; fails when told to."""

    def __init__(self, fail: bool = False) -> None:
        self.told: list[tuple[pyjms.JMSConsumer, list[str], int]] = []
        self.delivered: list[str] = []
        self.fail = fail

    def received(
        self, consumer: pyjms.JMSConsumer, messages: Sequence[pyjms.Message], started_ns: int
    ) -> None:
        if self.fail:
            raise RuntimeError("observer failed")
        self.told.append((consumer, [m.get_text() for m in messages], started_ns))

    def deliver(self, consumer: pyjms.JMSConsumer, message: pyjms.Message, listener: Listener) -> None:
        self.delivered.append(message.get_text())
        listener(message)


def test_consumer_observers_hear_of_what_receives_return_and_wrap_listeners(factory, qname):
    watcher, failing = Watcher(), Watcher(fail=True)
    add_consumer_observer(failing)
    add_consumer_observer(watcher)
    try:
        with factory.create_context() as ctx:
            q = ctx.create_queue(qname)
            producer = ctx.create_producer()
            consumer = ctx.create_consumer(q)
            assert consumer.receive(100) is None  # nothing returned: nobody is told
            producer.send(q, "pulled")
            before = time.time_ns()
            got = consumer.receive(5000)
            # a failing observer is logged: the message it was told of is not lost
            assert got is not None and got.get_text() == "pulled"
            # (observers are process-wide: an in-process broker's services are heard of too)
            ((bodies, started),) = [(t[1], t[2]) for t in watcher.told if t[0] is consumer]
            assert bodies == ["pulled"] and started >= before

            heard = threading.Event()
            consumer.set_message_listener(lambda m: heard.set())
            producer.send(q, "pushed")
            assert heard.wait(10)
            assert "pushed" in watcher.delivered
    finally:
        remove_consumer_observer(watcher)
        remove_consumer_observer(failing)

    with factory.create_context() as ctx:  # removed: told no more
        q = ctx.create_queue(qname)
        ctx.create_producer().send(q, "unwatched")
        assert ctx.create_consumer(q).receive(5000) is not None
    # (only this queue's receives count: a service thread of an in-process broker may have
    # taken its snapshot of the observers before the removal, and finish telling it after)
    assert not [t for t in watcher.told if "unwatched" in t[1]]


def test_transaction_synchronizations_hear_of_commits_rollbacks_and_the_close(factory, qname):
    recorder = Recorder()
    tx = factory.create_context(pyjms.SESSION_TRANSACTED)
    tx.add_synchronization(Failing())  # one that fails stops neither the others nor the commit
    tx.add_synchronization(recorder)
    tx.add_synchronization(recorder)  # once
    q = tx.create_queue(qname)
    tx.create_producer().send(q, "kept")
    tx.commit()
    tx.create_producer().send(q, "dropped")
    tx.rollback()
    tx.close()
    tx.close()
    assert recorder.events == ["commit", "rollback", "close closed=True"]
    with factory.create_context() as ctx:
        assert [m.get_text() for m in drain(ctx.create_consumer(q))] == ["kept"]
        removed = Recorder()
        ctx.add_synchronization(removed)
        ctx.remove_synchronization(removed)
    assert removed.events == []


def test_provider_plugins_are_chosen_by_url_or_factory_class(url, embedded_broker):
    assert isinstance(pyjms.ConnectionFactory(url).provider, ActiveMQPlugin)
    assert isinstance(pyjms.ConnectionFactory().provider, ActiveMQPlugin)  # the default provider
    other = pyjms.ConnectionFactory("amqp://h", factory_class="org.example.Factory")
    assert type(other.provider) is ProviderPlugin  # the generic answers
    assert other.provider.target_attributes(None, pyjms.Queue("Q")) is None  # type: ignore[arg-type]
    assert other.provider.without_redelivery_limit(other) is other


def test_the_activemq_plugin_answers_for_a_pyjms_broker(factory, ctx, qname):
    from pyjms.broker.admin import Admin

    q = ctx.create_queue(qname)
    assert ctx.provider.target_attributes(ctx, q) is None  # none defined: no limits
    Admin(factory).define_queue(q, max_depth=5)
    with factory.create_context() as fresh:  # attributes are kept a second per context
        assert fresh.provider.target_attributes(fresh, q).max_depth == 5
    topic = ctx.create_topic(qname)
    assert ctx.provider.subscriber_addresses(ctx, topic) == []
    consumer = ctx.create_consumer(topic)
    (address,) = ctx.provider.subscriber_addresses(ctx, topic)
    assert address.startswith("N:")  # a plain subscriber's address (D16)
    consumer.close()


def test_features_provide_only_the_methods_the_client_declares(ctx, qname):
    with pytest.raises(ValueError, match="not a method features provide"):
        extension.provide("create_queue", lambda *a: None)
    with ctx.create_marking_browser(ctx.create_queue(qname)) as browser:  # provided by pyjms.browse
        assert browser.get_or_none() is None


def test_routed_sends_and_forwards_keep_a_message_unchanged(ctx, qname):
    q, copies = ctx.create_queue(qname), ctx.create_queue(qname + ".COPIES")
    m = ctx.create_map_message()
    m.set_short("s", 3)
    m.set_float("f", 1.5)
    m.set_byte_property("b", -2)
    m.set_jms_correlation_id("corr")
    ctx.create_producer().set_priority(6).set_time_to_live(60_000).send(q, m)
    original = ctx.create_consumer(q).receive(5000)
    sent = ctx.send_routed(
        [
            forward_entry(copies, original, add_properties={"hop": (C.T_INT, 1)}),
            forward_entry(copies, original, drop_properties=("b",), correlation_id="other", time_to_live=0),
        ]
    )
    forward(ctx, copies, original)
    assert sent == 2
    first, second, third = drain(ctx.create_consumer(copies))
    for copy in (first, second, third):
        assert copy.typed_map() == original.typed_map()  # a short stays a short (Q08)
        assert copy.get_jms_priority() == 6
        assert copy.get_jms_timestamp() == original.get_jms_timestamp()  # kept in JMS_PYJMS_Timestamp
    assert first.typed_properties()["b"] == (C.T_BYTE, -2) and first.get_int_property("hop") == 1
    assert abs(first.get_jms_expiration() - original.get_jms_expiration()) < 1000  # E14
    assert not second.property_exists("b") and second.get_jms_correlation_id() == "other"
    assert second.get_jms_expiration() == 0
    assert third.get_jms_correlation_id() == "corr" and third.property_exists(SEND_TIME)
    with pytest.raises(pyjms.MessageNotWriteableRuntimeException):
        original.set_string_property("x", "y")  # the received message itself was not changed


def test_a_copy_is_a_new_message_and_object_bodies_are_not_copied():
    m = pyjms.TextMessage("t")
    m.set_int_property("n", 1)
    copy = m.copy(add_properties={"k": (C.T_STRING, "v")}, jms_type="kind")
    copy.set_text("changed")
    assert (m.get_text(), m.property_exists("k"), m.get_jms_type()) == ("t", False, None)
    assert (copy.get_int_property("n"), copy.get_string_property("k"), copy.get_jms_type()) == (
        1,
        "v",
        "kind",
    )
    with pytest.raises(pyjms.NotSupportedRuntimeException, match="ObjectMessage"):
        pyjms.ObjectMessage().copy()


@pytest.mark.providers("activemq", "artemis", "amqp")
def test_a_forward_that_reads_nothing_back_copies_the_consumed_message_in_the_jvm(factory, qname):
    """forward(..., sent_headers=False), as the DLQ handler moves a dead letter: the message the
    context consumed last is copied in the JVM (Channel.forwardConsumed), so that its properties
    do not cross twice; any other (an earlier one of a batch) is copied in Python. Either way
    the copy is the message unchanged (Q08): every body kind, typed properties (JMSXGroupID,
    strings with NUL and characters outside the BMP), correlation id, type, reply-to, priority,
    delivery mode and remaining lifetime, less the dropped properties, plus the added ones."""
    from pyjms.bridge.channel import Channel

    odd = "\x00😀\U0010ffff𝄞"  # NUL, and characters outside the BMP
    data, entries = pyjms.BytesMessage(), pyjms.MapMessage()
    data.write_bytes(bytes(range(256)))
    entries.set_short("s", 3)
    entries.set_string("t", odd)
    bodies = [
        pyjms.TextMessage(odd),
        data,
        entries,
        pyjms.Message(),
        pyjms.TextMessage("a"),
        pyjms.TextMessage("b"),
    ]
    in_jvm: list[bool] = []
    real = Channel.forward_consumed

    def counted(self: Channel, *args: Any) -> bool:
        in_jvm.append(real(self, *args))
        return in_jvm[-1]

    with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
        q, copies, replies = (ctx.create_queue(qname + s) for s in ("", ".COPIES", ".REPLIES"))
        producer = ctx.create_producer().set_priority(6).set_time_to_live(60_000)
        for i, m in enumerate(bodies):
            m.set_short_property("s", -2)
            m.set_string_property("odd", odd)
            m.set_string_property("JMSXGroupID", "group")
            m.set_string_property("dropped", "x")
            m.set_jms_correlation_id(f"corr-{i}")
            m.set_jms_type("kind")
            m.set_jms_reply_to(replies)
            producer.send(q, m)
        ctx.commit()
        consumer = ctx.create_consumer(q)

        def forward_on(original: pyjms.Message) -> None:
            forward(
                ctx,
                copies,
                original,
                drop_properties=("dropped",),
                add_properties={"hop": (C.T_INT, 1)},
                sent_headers=False,
            )

        Channel.forward_consumed = counted  # type: ignore[method-assign]
        try:
            originals = []
            for _ in range(4):  # each forwarded as soon as it is received
                originals.append(consumer.receive(5000))
                forward_on(originals[-1])
            originals += consumer.receive_batch(2, 5000)
            if len(originals) == 5:  # the second had not arrived yet
                originals.append(consumer.receive(5000))
            for original in originals[4:]:
                forward_on(original)
        finally:
            Channel.forward_consumed = real  # type: ignore[method-assign]
        ctx.commit()
        got = drain(ctx.create_consumer(copies), 2000)
        ctx.commit()
    assert in_jvm == [True, True, True, True, False, True]
    assert [c.get_jms_correlation_id() for c in got] == [f"corr-{i}" for i in range(6)]
    for original, copy in zip(originals, got, strict=True):
        assert type(copy) is type(original)
        assert copy.get_jms_message_id() != original.get_jms_message_id()
        expected = {k: v for k, v in original.typed_properties().items() if k != "dropped"}
        expected.update({"hop": (C.T_INT, 1), SEND_TIME: (C.T_LONG, original.get_jms_timestamp())})
        assert copy.typed_properties() == expected
        assert copy.get_jms_timestamp() == original.get_jms_timestamp()
        assert copy.get_jms_type() == "kind" and copy.get_jms_reply_to() == original.get_jms_reply_to()
        assert (copy.get_jms_priority(), copy.get_jms_delivery_mode()) == (6, pyjms.PERSISTENT)
        assert abs(copy.get_jms_expiration() - original.get_jms_expiration()) < 1000  # E14
    text, data, entries, plain = got[:4]
    assert text.get_text() == odd
    assert data.read_bytes() == bytes(range(256))
    assert entries.typed_map() == {"s": (C.T_SHORT, 3), "t": (C.T_STRING, odd)}
    assert type(plain) is pyjms.Message


def test_a_received_message_changed_since_is_forwarded_as_python_has_it(ctx, qname):
    """A received message whose properties or body were cleared and set again, or whose
    headers were set, is forwarded as it is now, not as the provider delivered it."""
    q, copies = ctx.create_queue(qname), ctx.create_queue(qname + ".COPIES")
    producer = ctx.create_producer()
    for text in ("one", "two", "three"):
        m = pyjms.TextMessage(text)
        m.set_int_property("p", 1)
        producer.send(q, m)
    consumer = ctx.create_consumer(q)
    first = consumer.receive(5000)
    first.clear_properties()
    first.set_int_property("p", 2)
    first.set_jms_correlation_id("set since")
    forward(ctx, copies, first, sent_headers=False)
    second = consumer.receive(5000)
    second.clear_body()
    second.set_text("changed")
    forward(ctx, copies, second, sent_headers=False)
    third = consumer.receive(5000)
    third.set_jms_correlation_id("header only")  # the copy is made in the JVM, with this header
    forward(ctx, copies, third, sent_headers=False)
    one, two, three = drain(ctx.create_consumer(copies))
    assert (one.get_text(), one.get_int_property("p"), one.get_jms_correlation_id()) == (
        "one",
        2,
        "set since",
    )
    assert (two.get_text(), two.get_int_property("p")) == ("changed", 1)
    assert (three.get_text(), three.get_int_property("p"), three.get_jms_correlation_id()) == (
        "three",
        1,
        "header only",
    )
