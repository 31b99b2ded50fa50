"""Issue 32, part 1 and 3 for the delay processor: poison anywhere in the delay path is
quarantined, never fatal, and the processor writes only where the user who staged a message may.

The poison is put through the provider's own JMS client (the shim's session), as any client
allowed to write the staging, slot or marker queue can: pyjms's producers never set JMS_PYJMS_*
properties. Each bad message goes to the dead-letter queue with IBM MQ's reason and a
JMS_PYJMS_DLQDetail, and every other delayed message keeps its normal lateness.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import pyjms
from pyjms.api.destination import Destination
from pyjms.bridge import jvm
from pyjms.bridge.contract import (
    CONTROL_PREFIX,
    DEAD_LETTER_QUEUE,
    DELIVERY_TIME,
    DLQ_DETAIL,
    QUARANTINE_REASON,
    SLOT_PREFIX,
    SLOTS_PREFIX,
    STAGED_TARGET,
    STAGING_QUEUE,
)
from pyjms.broker import AccessRule, EmbeddedBroker
from pyjms.broker.admin import Admin, BrokerWriteCheck
from pyjms.delay.processor import FEEDBACK, REPORT_EXCEPTION, DelayProcessor
from pyjms.delay.processor_log import processor_log
from pyjms.delay.processor_moves import MOST_DELIVERIES
from pyjms.dlq import header as dlh
from pyjms.dlq.forward import handler_factory
from pyjms.providers.artemis import EmbeddedArtemisBroker
from pyjms.reasons import MQRC
from tests.conftest import drain

pytestmark = pytest.mark.providers("activemq", "artemis", "amqp")

#: how late a delayed message may arrive here: a slot plus the work, and the first delivery to a
#: new target asks the admin service for its attributes (D15), on a test machine that runs two
#: workers' brokers at once (the CI's runs met 1.57 and 1.82 s). Poison that held the processor
#: up (the issue: nothing after 60 s; a retry loop: MOST_DELIVERIES redeliveries) is far later;
#: the lateness itself is bench_delay.py's to measure.
LATE_MS = 3000


def now_ms() -> int:
    return int(time.time() * 1000)


def put_raw(ctx: pyjms.JMSContext, queue: str, body: str, **props: Any) -> None:
    """Puts a text message through the provider's own client: str properties as strings, ints
    as longs (JMS_PYJMS_DeliveryTime is a long)."""
    session = ctx.channel.java.session()
    m = session.createTextMessage(body)
    for name, value in props.items():
        if isinstance(value, int):
            m.setLongProperty(name, value)
        else:
            m.setStringProperty(name, value)
    session.createProducer(session.createQueue(queue)).send(m)


def dead_letters(
    ctx: pyjms.JMSContext, case: str, n: int, dlq: str = DEAD_LETTER_QUEUE
) -> list[pyjms.Message]:
    consumer = ctx.create_consumer(ctx.create_queue(dlq), f"case = '{case}'")
    found: list[pyjms.Message] = []
    deadline = time.monotonic() + 15
    while len(found) < n and time.monotonic() < deadline:
        m = consumer.receive(500)
        if m is not None:
            found.append(m)
    found += drain(consumer, 300)
    consumer.close()
    return found


def on_time(
    ctx: pyjms.JMSContext, factory: pyjms.ConnectionFactory, target: str, case: str, late_ms: int = LATE_MS
) -> None:
    """A normal delayed send of 500 ms arrives, not early and at most late_ms late."""
    with factory.create_context() as sender:
        sent = now_ms()
        sender.create_producer().set_delivery_delay(500).set_property("case", case).send(
            sender.create_queue(target), "on time"
        )
    consumer = ctx.create_consumer(ctx.create_queue(target), f"case = '{case}'")
    got = consumer.receive(15_000)
    arrived = now_ms()
    consumer.close()
    assert got is not None and got.get_text() == "on time"
    assert sent + 500 <= arrived <= sent + 500 + late_ms, arrived - sent - 500


def test_a_staged_target_that_is_no_destination_key_is_quarantined_and_delay_goes_on(url, qname):
    """The issue's case: two staged messages to "bogus" (due now, due in 1.5 s) no longer stop
    the broker's processor; a 500 ms delayed send still arrives on time; both poison messages
    are dead-lettered with MQRC_FORMAT_ERROR (the staging header is malformed: no key names the
    target, so nothing was looked up that could be unknown, 2085)."""
    case = f"bogus-{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging")
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        put_raw(ctx, STAGING_QUEUE, "now", **{STAGED_TARGET: "bogus", DELIVERY_TIME: now_ms(), "case": case})
        put_raw(
            ctx,
            STAGING_QUEUE,
            "soon",
            **{STAGED_TARGET: "bogus", DELIVERY_TIME: now_ms() + 1500, "case": case},
        )
        on_time(ctx, factory, qname, case)
        dead = dead_letters(ctx, case, 2)
    assert sorted(m.get_text() for m in dead) == ["now", "soon"]
    for m in dead:
        header = dlh.DeadLetterHeader.from_message(m)
        assert header is not None and header.reason == QUARANTINE_REASON
        assert "'bogus'" in m.get_string_property(DLQ_DETAIL)
        assert "not a destination key" in m.get_string_property(DLQ_DETAIL)


@pytest.mark.providers("activemq")
def test_a_temporary_target_that_is_gone_is_dead_lettered_with_2085(url, qname):
    """A key of a temporary queue that is gone (its connection closed, or it never was): the
    put fails for that message alone, which is dead-lettered with MQRC_UNKNOWN_OBJECT_NAME,
    whether the sorter puts it (due soon) or the deliverer (from its slot). (ActiveMQ's client
    tells a gone temporary queue; Artemis's routes the put to no queue.)"""
    case = f"gone-{uuid.uuid4().hex[:8]}"
    gone = "temp-queue://ID:gone-1:1:1"
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        for delay in (0, 1500):
            due = now_ms() + delay
            put_raw(
                ctx, STAGING_QUEUE, f"gone {delay}", **{STAGED_TARGET: gone, DELIVERY_TIME: due, "case": case}
            )
        dead = dead_letters(ctx, case, 2)
    assert sorted(m.get_text() for m in dead) == ["gone 0", "gone 1500"]
    for m in dead:
        header = dlh.DeadLetterHeader.from_message(m)
        assert header is not None and header.reason == MQRC.UNKNOWN_OBJECT_NAME, header
        assert "gone-1" in m.get_string_property(DLQ_DETAIL)


def test_a_delayed_message_to_a_live_temporary_queue_arrives(url):
    """A temporary destination has no attributes to check: its delayed messages arrive."""
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging")
    with factory.create_context() as ctx:
        temporary = ctx.create_temporary_queue()
        consumer = ctx.create_consumer(temporary)
        ctx.create_producer().set_delivery_delay(300).send(temporary, "soon")
        ctx.create_producer().set_delivery_delay(5).send(temporary, "now")
        got = sorted(
            m.get_text() for m in (consumer.receive(10_000), consumer.receive(10_000)) if m is not None
        )
    assert got == ["now", "soon"]


def test_object_and_stream_bodies_are_dead_lettered_never_fatal(url, qname):
    """Bodies pyjms never decodes (object, stream), staged by a plain JMS client (due soon, and
    from a slot), go to the dead-letter queue (MQRC_FORMAT_ERROR): pyjms's producers never stage
    them, and the processor cannot copy them. A body-less message reaches its target; a delayed
    send beside them keeps its lateness."""
    case = f"bodies-{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging")
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        session = ctx.channel.java.session()
        producer = session.createProducer(session.createQueue(STAGING_QUEUE))
        for delay in (0, 700):
            for kind, made in (
                ("object", session.createObjectMessage(jvm.shim().jclass("java.lang.String")("x"))),
                ("stream", session.createStreamMessage()),
                ("empty", session.createMessage()),
            ):
                made.setStringProperty(STAGED_TARGET, f"queue://{qname}")
                made.setLongProperty(DELIVERY_TIME, now_ms() + delay)
                made.setStringProperty("case", case)
                made.setStringProperty("kind", f"{kind} {delay}")
                producer.send(made)
        on_time(ctx, factory, qname, f"{case}-beside")
        landed = drain(ctx.create_consumer(ctx.create_queue(qname), f"case = '{case}'"), 2000)
        dead = dead_letters(ctx, case, 4)
    assert sorted(m.get_string_property("kind") for m in landed) == ["empty 0", "empty 700"]
    assert sorted(m.get_string_property("kind") for m in dead) == [
        "object 0",
        "object 700",
        "stream 0",
        "stream 700",
    ]
    for m in dead:
        header = dlh.DeadLetterHeader.from_message(m)
        assert header is not None and header.reason == QUARANTINE_REASON
        assert "body, which pyjms never copies" in m.get_string_property(DLQ_DETAIL)


def test_malformed_slot_messages_and_markers_are_quarantined(url, qname, caplog):
    """A slot message naming no key, one whose delivery time is no long, and slot markers that
    cannot be parsed (present when a processor starts, and put while it runs): each goes to the
    dead-letter queue; the processor starts healthy and delivers the rest on time."""
    caplog.set_level(logging.WARNING)
    case = f"slot-{uuid.uuid4().hex[:8]}"
    staging = f"SYSTEM.DDELAY.T{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=staging)
    slot_ms = factory.provider.delay_slot_ms or 10
    markers = SLOTS_PREFIX + staging
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        due = now_ms() + 1000
        slot = due // slot_ms
        slot_queue = f"{SLOT_PREFIX}{slot}.{staging}"
        put_raw(ctx, slot_queue, "no key", **{STAGED_TARGET: "queue:/X", DELIVERY_TIME: due, "case": case})
        put_raw(
            ctx, slot_queue, "good", **{STAGED_TARGET: f"queue://{qname}", DELIVERY_TIME: due, "case": case}
        )
        for text in ("garbage", "12/0", "", f"{slot}/{slot_ms}"):
            put_raw(ctx, markers, text, case=case)
        processor = DelayProcessor(factory).start()
        try:
            assert processor.wait_until_active(10)
            put_raw(ctx, markers, "x/y", case=case)  # while it runs: dead-lettered at a compaction
            consumer = ctx.create_consumer(ctx.create_queue(qname), f"case = '{case}'")
            got = consumer.receive(10_000)
            consumer.close()
            assert got is not None and got.get_text() == "good" and now_ms() >= due
            on_time(ctx, factory, qname, case)
            status = processor.status()
            assert status["active"] and status["healthy"], status
            # the marker queue is compacted when idle, after the slots drained
            dead = dead_letters(ctx, case, 5)
        finally:
            processor.stop()
    texts = sorted(m.get_text() for m in dead)
    assert texts == sorted(["no key", "garbage", "12/0", "", "x/y"]), texts
    for m in dead:
        header = dlh.DeadLetterHeader.from_message(m)
        assert header is not None and header.reason == QUARANTINE_REASON and m.get_string_property(DLQ_DETAIL)
    assert not [r for r in caplog.records if "cannot start" in r.getMessage()]


def test_a_message_that_fails_again_and_again_is_dead_lettered_after_a_few_attempts(url, qname):
    """Bounded redelivery: a staged message the provider delivered more than MOST_DELIVERIES
    times in all (each attempt rolled back, as by processors that each died with it in hand)
    goes to the dead-letter queue with MQRC_BACKOUT_THRESHOLD_REACHED instead of looping; the
    others are delivered."""
    case = f"loop-{uuid.uuid4().hex[:8]}"
    staging = f"SYSTEM.DDELAY.T{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=staging)
    # no provider redelivery limit: the provider must hand it back every time
    raw = handler_factory(pyjms.ConnectionFactory(url))
    with raw.create_context() as ctx:
        put_raw(
            ctx,
            staging,
            "looping",
            **{STAGED_TARGET: f"queue://{qname}", DELIVERY_TIME: now_ms(), "case": case},
        )
    # a processor that fails with it in hand and restarts on a new connection, as often as the
    # bound allows
    for _ in range(MOST_DELIVERIES):
        with raw.create_context(pyjms.SESSION_TRANSACTED) as tx:
            assert tx.create_consumer(tx.create_queue(staging)).receive(5000) is not None
    with DelayProcessor(factory) as processor, pyjms.ConnectionFactory(url).create_context() as ctx:
        # lateness counts from the election on: before it, no processor serves (the CI's
        # loaded run once spent 1.8 s of the 1.5 s allowed here electing and starting)
        assert processor.wait_until_active(10)
        on_time(ctx, factory, qname, case)
        dead = dead_letters(ctx, case, 1)
        assert ctx.create_consumer(ctx.create_queue(qname), f"case = '{case}'").receive(300) is None
    assert [m.get_text() for m in dead] == ["looping"]
    header = dlh.DeadLetterHeader.from_message(dead[0])
    assert header is not None and header.reason == 2362  # MQRC_BACKOUT_THRESHOLD_REACHED
    assert "delivered" in dead[0].get_string_property(DLQ_DETAIL)


def test_a_put_inhibited_target_is_dead_lettered_with_2051_and_the_rest_go_on(url, qname):
    """A target put-inhibited after the message was staged refuses it at delivery (D15): the
    dead-letter queue gets it with MQRC_PUT_INHIBITED and why; the rest keep their lateness."""
    case = f"inhibit-{uuid.uuid4().hex[:8]}"
    staging = f"SYSTEM.DDELAY.T{uuid.uuid4().hex[:8]}"
    dlq = f"DLQ.{uuid.uuid4().hex[:8]}"
    blocked = f"{qname}.BLOCKED"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=staging)
    with DelayProcessor(factory, dead_letter_queue=dlq) as processor, factory.create_context() as ctx:
        assert processor.wait_until_active(10)
        ctx.create_producer().set_delivery_delay(800).set_property("case", case).send(
            ctx.create_queue(blocked), "refused"
        )
        Admin(factory).define_queue(pyjms.Queue(blocked), put_enabled=False)
        on_time(ctx, factory, qname, case)
        dead = dead_letters(ctx, case, 1, dlq)
    assert [m.get_text() for m in dead] == ["refused"]
    header = dlh.DeadLetterHeader.from_message(dead[0])
    assert header is not None and header.reason == MQRC.PUT_INHIBITED
    assert "put-inhibited" in dead[0].get_string_property(DLQ_DETAIL)


def test_log_output_is_rate_limited():
    """At most N lines per interval; then one line counts those left out."""
    log = logging.getLogger("pyjms.test.limit")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    log.addHandler(Keep())
    log.propagate = False
    limit = processor_log(most=5, every_s=0.2)
    for i in range(100):
        limit.line(log, logging.WARNING, "poison %d", i)
    assert [r.getMessage() for r in records] == [f"poison {i}" for i in range(5)]
    time.sleep(0.25)
    limit.line(log, logging.WARNING, "poison %d", 100)
    assert records[5].getMessage() == "poison 100 (95 similar line(s) held back)"


# ---------------------------------------------------------------------------- least privilege

PROCESSOR = ("proc", "proc-pw")


@pytest.fixture(scope="module", params=["activemq", "artemis"])
def secured(request: pytest.FixtureRequest) -> Iterator[EmbeddedBroker | EmbeddedArtemisBroker]:
    """A broker with users: the broker lets mal and alice write ORDERS.> (so the broker's own
    check when a message is staged, D11, lets both through); ops reads the dead-letter queue;
    proc runs a processor (pyjms's admin group)."""
    users = {
        "mal": ("mal-pw", ["mal"]),
        "alice": ("alice-pw", ["senders"]),
        "ops": ("ops-pw", ["ops"]),
        PROCESSOR[0]: (PROCESSOR[1], ["pyjms-admins"]),
        "weak": ("weak-pw", ["weak"]),
        "svc": ("svc-pw", ["services"]),
    }
    access = [
        AccessRule("MAL.>", read=["mal"], write=["mal"], admin=["mal"]),
        AccessRule("ORDERS.>", read=["senders", "mal"], write=["senders", "mal"], admin=["senders", "mal"]),
        AccessRule("ALICE.>", read=["senders"], write=["senders"], admin=["senders"]),
        AccessRule(DEAD_LETTER_QUEUE, read=["ops"], write=["ops"], admin=["ops"]),
        # a processor's user that may stand for election and read staged messages, no more
        AccessRule("PYJMS.LEADER.>", read=["weak"], write=["weak"], admin=["weak"]),
        AccessRule("SYSTEM.DDELAY.WEAK.>", read=["weak"], write=["weak"], admin=["weak"]),
    ]
    broker: EmbeddedBroker | EmbeddedArtemisBroker
    if request.param == "artemis":
        broker = EmbeddedArtemisBroker(users=users, access=access)
    else:
        broker = EmbeddedBroker(name=f"pyjms-ddl-sec-{uuid.uuid4().hex[:6]}", users=users, access=access)
    yield broker
    broker.stop()


def orders_for_alice_only(user: str | None, destination: Destination) -> bool:
    """The processor's rules here: alice writes ORDERS.> and ALICE.>, mal only MAL.> (stricter
    than the broker's, as after mal's right to ORDERS.> was taken away)."""
    if user == "alice":
        return destination.name.startswith(("ORDERS.", "ALICE."))
    return user == "mal" and destination.name.startswith("MAL.")


def test_a_target_the_stager_may_not_write_is_dead_lettered_with_2035_and_reports_go_nowhere(secured):
    """The processor writes for the user who staged the message (JMSXUserID), never with its own
    rights: mal's delayed messages to ORDERS.X are dead-lettered with MQRC_NOT_AUTHORIZED; the
    exception report of the one whose reply-to is ALICE.REPORTS (mal may not write there) is not
    sent, that of the one whose reply-to is mal's own queue is; alice's delayed message to the
    same target is delivered on time."""
    case = f"auth-{uuid.uuid4().hex[:8]}"
    staging = f"SYSTEM.DDELAY.T{uuid.uuid4().hex[:8]}"
    target = f"ORDERS.{uuid.uuid4().hex[:6]}"
    mine = f"MAL.{uuid.uuid4().hex[:6]}"
    proc = pyjms.ConnectionFactory(secured.vm_url, *PROCESSOR, staging_queue=staging)
    processor = DelayProcessor(proc, may_write=orders_for_alice_only).start()
    try:
        assert processor.wait_until_active(10)
        mal = pyjms.ConnectionFactory(
            secured.vm_url, "mal", "mal-pw", delivery_delay="staging", staging_queue=staging
        )
        with mal.create_context() as ctx:
            p = ctx.create_producer().set_delivery_delay(300).set_property("case", case)
            for text, reply_to in (("to alice", "ALICE.REPORTS"), ("to mal", mine)):
                m = ctx.create_text_message(text)
                m.set_int_property(REPORT_EXCEPTION, 1)
                m.set_jms_reply_to(ctx.create_queue(reply_to))
                p.send(ctx.create_queue(target), m)
            report = ctx.create_consumer(ctx.create_queue(mine)).receive(10_000)
            assert report is not None and report.get_int_property(FEEDBACK) == MQRC.NOT_AUTHORIZED
        alice = pyjms.ConnectionFactory(
            secured.vm_url, "alice", "alice-pw", delivery_delay="staging", staging_queue=staging
        )
        with alice.create_context() as ctx:
            on_time(ctx, alice, target, case)
            assert ctx.create_consumer(ctx.create_queue(target), f"case = '{case}'").receive(500) is None
            assert ctx.create_consumer(ctx.create_queue("ALICE.REPORTS")).receive(500) is None
        with pyjms.ConnectionFactory(secured.vm_url, "ops", "ops-pw").create_context() as ops:
            dead = dead_letters(ops, case, 2)
    finally:
        processor.stop()
    assert sorted(m.get_text() for m in dead) == ["to alice", "to mal"]
    for m in dead:
        header = dlh.DeadLetterHeader.from_message(m)
        assert header is not None and header.reason == MQRC.NOT_AUTHORIZED
        assert "'mal'" in m.get_string_property(DLQ_DETAIL)


def test_a_processor_that_cannot_start_says_so_and_keeps_trying(secured, caplog):
    """Elected, but not allowed to read its slot markers: the processor logs an error, its
    status names the problem (its ping answers with it where it can), and it tries again with
    a growing pause instead of staying dead and silent."""
    caplog.set_level(logging.WARNING)
    staging = f"SYSTEM.DDELAY.WEAK.{uuid.uuid4().hex[:8]}"
    processor = DelayProcessor(
        pyjms.ConnectionFactory(secured.vm_url, "weak", "weak-pw", staging_queue=staging)
    ).start()
    try:
        assert processor.wait_until_active(10)
        deadline = time.monotonic() + 10
        while "start:" not in (processor.problem or "") and time.monotonic() < deadline:
            time.sleep(0.05)
        status = processor.status()
        assert not status["healthy"] and "start:" in status["problem"], status
        # it tries again: the first retry comes after 0.25 s, the next 0.5 s later (a loaded
        # machine stretches each attempt, so wait for the second try rather than a fixed time)
        deadline = time.monotonic() + 15
        while len(starts := [r for r in caplog.records if "cannot start" in r.getMessage()]) < 2:
            assert time.monotonic() < deadline, f"one start attempt in 15 s: {starts}"
            time.sleep(0.05)
        assert starts[0].levelno == logging.ERROR
        assert staging in starts[0].getMessage()
    finally:
        processor.stop()


@pytest.mark.parametrize("target", ["bogus://MAL.X", "MAL.X", "queuex://MAL.X", "queue:/MAL.X"])
def test_the_broker_refuses_to_stage_a_target_that_is_no_destination_key(secured, target):
    """D11 at staging reads the target key exactly: a text that merely contains a name the
    sender may write (MAL.X, mal's) is no destination key, so the broker refuses the put with
    MQRC_FORMAT_ERROR (2110) and nothing is staged; a key that names a queue the sender may not
    write is refused with 2035."""
    mal = pyjms.ConnectionFactory(secured.vm_url, "mal", "mal-pw")
    with mal.create_context() as ctx:
        with pytest.raises(Exception) as refused:
            put_raw(ctx, STAGING_QUEUE, "x", **{STAGED_TARGET: target, DELIVERY_TIME: now_ms() + 60_000})
        assert "2110" in str(refused.value) and "not a destination key" in str(refused.value)
        with pytest.raises(Exception) as denied:
            put_raw(
                ctx,
                STAGING_QUEUE,
                "x",
                **{STAGED_TARGET: "queue://ALICE.X", DELIVERY_TIME: now_ms() + 60_000},
            )
        assert "2035" in str(denied.value)


def test_a_message_killed_processors_held_is_delivered_by_the_next_not_dead_lettered(url, qname):
    """Takeovers count deliveries up through no fault of the message: one that ten processors
    each took and died with (ten rolled-back deliveries, more than MOST_ATTEMPTS) is delivered by
    the processor that takes over, not dead-lettered as poison."""
    case = f"held-{uuid.uuid4().hex[:8]}"
    staging = f"SYSTEM.DDELAY.T{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=staging)
    raw = handler_factory(pyjms.ConnectionFactory(url))
    with raw.create_context() as ctx:
        put_raw(
            ctx, staging, "held", **{STAGED_TARGET: f"queue://{qname}", DELIVERY_TIME: now_ms(), "case": case}
        )
    for _ in range(10):
        with raw.create_context(pyjms.SESSION_TRANSACTED) as tx:
            assert tx.create_consumer(tx.create_queue(staging)).receive(5000) is not None
    with DelayProcessor(factory), pyjms.ConnectionFactory(url).create_context() as ctx:
        got = ctx.create_consumer(ctx.create_queue(qname), f"case = '{case}'").receive(10_000)
        assert got is not None and got.get_text() == "held"
        assert dead_letters(ctx, case, 0) == []


def test_a_service_beside_the_broker_asks_the_broker_what_a_user_may_write(secured):
    """A service that runs beside a pyjms broker with users (group `services`) asks the broker's
    admin service what another user may write, and gets the broker's own answer; a user may
    ask about itself only (2035 otherwise). A standalone delay processor that checks with the
    broker (BrokerWriteCheck) answers mal's ping on mal's own queue, and not on alice's."""
    svc = pyjms.ConnectionFactory(secured.vm_url, "svc", "svc-pw")
    mal = pyjms.ConnectionFactory(secured.vm_url, "mal", "mal-pw")
    assert Admin(svc).may_write("alice", pyjms.Queue("ALICE.X"))
    assert not Admin(svc).may_write("mal", pyjms.Queue("ALICE.X"))
    assert Admin(mal).may_write("mal", pyjms.Queue("MAL.X"))
    with pytest.raises(pyjms.JMSSecurityRuntimeException) as refused:
        Admin(mal).may_write("alice", pyjms.Queue("ALICE.X"))
    assert refused.value.reason == MQRC.NOT_AUTHORIZED and "only pyjms's services" in str(refused.value)

    staging = f"SYSTEM.DDELAY.T{uuid.uuid4().hex[:8]}"
    check = BrokerWriteCheck(svc)
    assert check.answers()
    processor = DelayProcessor(
        pyjms.ConnectionFactory(secured.vm_url, *PROCESSOR, staging_queue=staging), may_write=check
    ).start()
    mine, alices = f"MAL.{uuid.uuid4().hex[:6]}", f"ALICE.{uuid.uuid4().hex[:6]}"
    try:
        assert processor.wait_until_active(10)
        with mal.create_context() as ctx:
            p = ctx.create_producer()
            for reply_to in (alices, mine):
                p.set_jms_reply_to(ctx.create_queue(reply_to)).send(
                    ctx.create_queue(CONTROL_PREFIX + staging), '{"op": "ping"}'
                )
            answer = ctx.create_consumer(ctx.create_queue(mine)).receive(10_000)
            assert answer is not None and '"active": true' in answer.get_text()
        with pyjms.ConnectionFactory(secured.vm_url, "alice", "alice-pw").create_context() as ctx:
            assert ctx.create_consumer(ctx.create_queue(alices)).receive(1000) is None
    finally:
        processor.stop()


def test_a_broker_without_users_has_no_rights_for_a_service_to_check():
    """Without users anyone may write anywhere: the broker says so, and a standalone delay
    processor has nothing to ask it (BrokerWriteCheck.answers is False)."""
    broker = EmbeddedBroker(name=f"pyjms-open-{uuid.uuid4().hex[:6]}")
    try:
        factory = pyjms.ConnectionFactory(broker.vm_url)
        assert Admin(factory).may_write("anyone", pyjms.Queue("ANY.Q"))
        assert not BrokerWriteCheck(factory).answers()
    finally:
        broker.stop()
