"""Delivery delay through a staging queue and the delay processor (IBM MQ's design, spec 002)."""

from __future__ import annotations

import time
import uuid

import pytest

import pyjms
from pyjms.delay import staging
from pyjms.delay.processor import DelayProcessor, processor_answers
from tests.conftest import drain

# provider-independent: each test runs on ActiveMQ Classic and on Apache Artemis
pytestmark = pytest.mark.providers("activemq", "artemis")
#: ActiveMQ over TCP only, for the slower tests of what a processor does with the slots it finds
#: (recovery, slot lengths) and with a put-disabled staging queue: processors in this process,
#: the same client and broker code over either transport, which none of them depends on
TCP_ONLY = pytest.mark.activemq_tcp_only


@pytest.fixture
def staged(url):
    """A factory whose delayed messages go through its own staging queue, and its processor."""
    queue = f"STAGE.{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=queue)
    processor = DelayProcessor(
        pyjms.ConnectionFactory(url, staging_queue=queue), record_lateness=True
    ).start()
    assert processor.wait_until_active(10)  # lateness counts from the election on
    yield factory, processor
    processor.stop()


def receive_noting_early(consumer, n: int, timeout_s: float) -> tuple[list, list]:
    """Up to n messages within timeout_s, and those of them received before their delivery time."""
    got: list = []
    early: list = []
    deadline = time.time() + timeout_s
    while len(got) < n and time.time() < deadline:
        batch = consumer.receive_batch(100, 200)
        now = int(time.time() * 1000)
        early += [m for m in batch if now < m.get_jms_delivery_time()]
        got += batch
    return got, early


def test_d01_d03_staged_message_arrives_when_due_never_early(staged, qname):
    factory, processor = staged
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        consumer = ctx.create_consumer(q)
        m = ctx.create_text_message("later")
        m.set_string_property("k", "v")
        p = ctx.create_producer().set_delivery_delay(1000).set_priority(7).set_jms_correlation_id("mine")
        p.send(q, m)
        assert consumer.receive(600) is None
        got = consumer.receive(5000)
        received = int(time.time() * 1000)
        assert got.get_text() == "later" and got.get_string_property("k") == "v"
        assert received >= m.get_jms_delivery_time()
        assert got.get_jms_message_id() == m.get_jms_message_id()  # the id the sender saw
        assert got.get_jms_correlation_id() == "mine"  # restored at delivery
        assert got.get_jms_priority() == 7
        assert got.get_jms_delivery_time() == m.get_jms_timestamp() + 1000
        assert not any(name in got.get_property_names() for name in staging.STAGING_HEADER)
    assert processor.stats.early == 0


def test_d02_d12_staged_message_carries_target_time_and_original_id(url, qname):
    queue = f"STAGE.{uuid.uuid4().hex[:8]}"  # no processor: look at the staging queue itself
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=queue)
    with factory.create_context() as ctx:
        m = ctx.create_text_message("x")
        ctx.create_producer().set_delivery_delay(60_000).send(ctx.create_queue(qname), m)
        with ctx.create_browser(
            ctx.create_queue(queue), f"JMSCorrelationID = '{m.get_jms_message_id()}'"
        ) as b:
            (stagedm,) = list(b)
        assert stagedm.get_string_property(staging.TARGET) == f"queue://{qname}"
        assert stagedm.get_long_property(staging.DELIVERY_TIME) == m.get_jms_timestamp() + 60_000
        assert stagedm.get_message_token() != m.get_jms_message_id()  # a new id on the wire
        assert stagedm.get_jms_correlation_id() == m.get_jms_message_id()
        # a mistaken delay can be pulled back
        c = ctx.create_consumer(ctx.create_queue(queue), f"JMSCorrelationID = '{m.get_jms_message_id()}'")
        assert c.receive(2000) is not None


def test_staging_is_chosen_when_a_processor_answers(staged):
    factory, _ = staged
    auto = pyjms.ConnectionFactory(factory.url, delivery_delay="auto", staging_queue=factory.staging_queue)
    with auto.create_context() as ctx:
        # a generous wait: on a loaded machine a processor took more than the default second
        # to answer (the answer is what counts here, not its speed)
        assert processor_answers(ctx, 10_000)
    with pyjms.ConnectionFactory(factory.url, staging_queue="NOBODY.HERE").create_context() as nobody:
        assert not processor_answers(nobody, 300)


def test_d10_staged_only_at_commit(staged, qname):
    factory, _ = staged
    with factory.create_context(pyjms.SESSION_TRANSACTED) as tx:
        q = tx.create_queue(qname)
        consumer = tx.create_consumer(q)
        p = tx.create_producer().set_delivery_delay(300)
        p.send(q, "rolled back")
        tx.rollback()
        p.send(q, "committed")
        time.sleep(0.8)
        assert consumer.receive(100) is None
        tx.commit()
        assert consumer.receive(5000).get_text() == "committed"
        tx.commit()
        assert consumer.receive(800) is None


def test_d17_expiry_is_preserved_across_the_delay(staged, qname):
    factory, _ = staged
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        m = ctx.create_text_message("x")
        ctx.create_producer().set_time_to_live(5000).set_delivery_delay(1000).send(q, m)
        got = ctx.create_consumer(q).receive(5000)
        assert got.get_jms_expiration() == m.get_jms_timestamp() + 5000
        assert 0 < got.get_remaining_expiry() <= 40


def test_d18_e07_e15_expired_while_staged_is_discarded_with_a_report(staged, qname):
    factory, processor = staged
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        reports = ctx.create_temporary_queue()
        m = ctx.create_text_message("too late")
        m.set_int_property("JMS_IBM_Report_Expiration", 1)
        p = ctx.create_producer().set_time_to_live(400).set_delivery_delay(400).set_jms_reply_to(reports)
        p.send(q, m)
        report = ctx.create_consumer(reports).receive(5000)
        assert report is not None
        assert report.get_int_property("JMS_IBM_Feedback") == 258  # MQFB_EXPIRATION
        assert report.get_jms_correlation_id() == m.get_jms_message_id()
        assert not any(n in report.get_property_names() for n in staging.STAGING_HEADER)
        assert (
            report.get_jms_expiration() == 0 and report.get_remaining_expiry() == pyjms.MQEI_UNLIMITED
        )  # E15
        assert ctx.create_consumer(q).receive(300) is None
    assert processor.stats.expired == 1


def test_batches_spread_over_slots_arrive_in_delivery_order(staged, qname):
    factory, processor = staged
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        consumer = ctx.create_consumer(q)
        p = ctx.create_producer()
        # 600 ms apart: a loaded machine may take a few hundred ms to send a batch
        for delay in (1800, 600, 1200):
            p.set_delivery_delay(delay).send_batch(q, [f"{delay}-{i}" for i in range(20)])
        got = []
        deadline = time.time() + 12
        while len(got) < 60 and time.time() < deadline:
            got += consumer.receive_batch(100, 500)
        assert len(got) == 60
        # by delivery time, to a slot: on a loaded machine the three sends may take longer than
        # the 600 ms between the delays, which changes which batch is due first
        due = [m.get_jms_delivery_time() // processor.slot_ms for m in got]
        assert due == sorted(due), [(m.get_text(), m.get_jms_delivery_time()) for m in got]
    assert processor.stats.early == 0


def test_a_slot_bigger_than_a_broker_page_arrives_whole_and_on_time(staged, qname):
    """ActiveMQ gives one transaction at most a page (maxPageSize, 200 by default) of a queue:
    a slot of 1,000 messages is moved in several transactions, none stalls, none is left."""
    factory, processor = staged
    n = 1000
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        consumer = ctx.create_consumer(q)
        ctx.create_producer().set_delivery_delay(1000).send_batch(q, [str(i) for i in range(n)])
        due = int(time.time() * 1000) + 1000
        got = []
        deadline = time.time() + 8
        while len(got) < n and time.time() < deadline:
            got += consumer.receive_batch(1000, 200)
        last = int(time.time() * 1000)
        got += drain(consumer, 300)
    assert sorted(int(m.get_text()) for m in got) == list(range(n))
    assert last - due < 3000  # a stalled drain waited 10 s
    assert processor.stats.early == 0


def test_shim_moves_keep_what_the_python_path_keeps(staged, qname):
    """A target's first chunk goes through Python, which finds it has no rules; later chunks
    are moved by the shim (DueMover.deliverDue) and must arrive the same."""
    factory, processor = staged
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        consumer = ctx.create_consumer(q)
        p = ctx.create_producer()
        p.set_delivery_delay(1500).send(q, "first")  # far enough ahead to be filed in a slot
        assert consumer.receive(5000).get_text() == "first"
        deadline = time.time() + 2  # the deliverer notes the target right after its commit
        while f"queue://{qname}" not in processor.plain_targets and time.time() < deadline:
            time.sleep(0.01)
        assert f"queue://{qname}" in processor.plain_targets
        m = ctx.create_text_message("second")
        m.set_string_property("k", "v")
        m.set_int_property("n", 7)
        p.set_delivery_delay(300).set_priority(7).set_time_to_live(60_000).set_jms_correlation_id(
            "mine"
        ).send(q, m)
        got = consumer.receive(5000)
        assert int(time.time() * 1000) >= m.get_jms_delivery_time()
        assert (
            got.get_text() == "second"
            and got.get_string_property("k") == "v"
            and got.get_int_property("n") == 7
        )
        assert got.get_jms_message_id() == m.get_jms_message_id()
        assert got.get_jms_correlation_id() == "mine"
        assert got.get_jms_priority() == 7
        assert got.get_jms_delivery_time() == m.get_jms_timestamp() + 300
        assert got.get_jms_expiration() == m.get_jms_timestamp() + 60_000
        assert not any(name in got.get_property_names() for name in staging.STAGING_HEADER)
    assert processor.stats.early == 0


@TCP_ONLY
def test_processor_killed_mid_run_loses_and_duplicates_nothing(url, qname):
    queue = f"STAGE.{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=queue)
    n = 300
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        p = ctx.create_producer().set_delivery_mode(pyjms.PERSISTENT)
        for i in range(n):
            p.set_delivery_delay(200 + (i % 30) * 50).send(q, str(i))
        first = DelayProcessor(pyjms.ConnectionFactory(url, staging_queue=queue)).start()
        time.sleep(0.8)  # part delivered, part filed in slots, part still staged
        first.stop()  # stops between transactions; a crash is the SIGKILL test in tests/integration
        delivered_before = first.stats.delivered
        second = DelayProcessor(pyjms.ConnectionFactory(url, staging_queue=queue)).start()
        try:
            consumer = ctx.create_consumer(q)
            got = []
            deadline = time.time() + 15
            while len(got) < n and time.time() < deadline:
                got += consumer.receive_batch(500, 500)
            time.sleep(0.5)
            got += drain(consumer, 300)
        finally:
            second.stop()
    texts = sorted(int(m.get_text()) for m in got)
    assert texts == list(range(n)), f"{len(texts)} of {n}; first processor delivered {delivered_before}"


@TCP_ONLY
def test_a_restarted_processor_reads_a_recovered_slot_again_only_after_its_end(url, qname):
    """A restarted processor reads the slots it found again a few seconds after its start (for
    what a dead processor's transaction held); a slot still to come then is not read early."""
    queue = f"STAGE.{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=queue)
    n = 50
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().set_delivery_delay(5000).send_batch(q, [str(i) for i in range(n)])
        first = DelayProcessor(pyjms.ConnectionFactory(url, staging_queue=queue)).start()
        deadline = time.time() + 3
        while first.stats.staged < n and time.time() < deadline:
            time.sleep(0.02)
        first.stop()  # its slot is filed, due in about 4.5 s
        second = DelayProcessor(pyjms.ConnectionFactory(url, staging_queue=queue)).start()
        try:
            consumer = ctx.create_consumer(q)
            got, early = receive_noting_early(consumer, n, 10)
        finally:
            second.stop()
    assert sorted(int(m.get_text()) for m in got) == list(range(n))
    assert not early and second.stats.early == 0


@TCP_ONLY
def test_a_processor_with_another_slot_length_files_old_slots_again_never_early(url, qname):
    """Slots recorded by a processor with another slot length (50 ms, as pyjms had before) mean
    other times: a processor taking over files their messages again under its own slots, and
    delivers each when due, none early, none lost."""
    queue = f"STAGE.{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=queue)
    n = 60
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        p = ctx.create_producer()
        for i in range(3):  # three slots of the old length, due in 2.5-3.5 s
            p.set_delivery_delay(2500 + 500 * i).send_batch(q, [str(i * 20 + k) for k in range(20)])
        old = DelayProcessor(pyjms.ConnectionFactory(url, staging_queue=queue), slot_ms=50).start()
        deadline = time.time() + 3
        while old.stats.staged < n and time.time() < deadline:
            time.sleep(0.02)
        old.stop()
        assert old.stats.staged == n and old.stats.delivered == 0
        new = DelayProcessor(pyjms.ConnectionFactory(url, staging_queue=queue)).start()
        try:
            consumer = ctx.create_consumer(q)
            got, early = receive_noting_early(consumer, n, 10)
            assert consumer.receive(500) is None  # nothing twice
        finally:
            new.stop()
    assert sorted(int(m.get_text()) for m in got) == list(range(n))
    assert not early and new.stats.early == 0


@TCP_ONLY
def test_a_processor_files_under_its_providers_slot_length(url, qname):
    """Each slot is a queue, and brokers differ in what a queue costs: a processor makes 20 ms
    slots on Artemis and 10 ms ones elsewhere (ProviderPlugin.delay_slot_ms), and its markers
    say so."""
    from pyjms.delay.processor import parse_marker

    queue = f"STAGE.{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=queue)
    expected = 20 if factory.provider.provider_name == "artemis" else 10
    processor = DelayProcessor(pyjms.ConnectionFactory(url, staging_queue=queue)).start()
    try:
        with factory.create_context() as ctx:
            q = ctx.create_queue(qname)
            ctx.create_producer().set_delivery_delay(3000).send(q, "later")
            deadline = time.time() + 5
            while processor.stats.staged < 1 and time.time() < deadline:
                time.sleep(0.02)
            with ctx.create_browser(processor.slots_queue) as markers:
                assert {parse_marker(m.get_text())[1] for m in markers} == {expected}
            got = ctx.create_consumer(q).receive(10_000)
            assert got is not None and got.get_text() == "later"
    finally:
        processor.stop()


def test_slot_markers_without_a_length_are_50_ms_slots():
    from pyjms.delay.processor import parse_marker

    assert parse_marker("35000000000") == (35_000_000_000, 50)
    assert parse_marker("88000000000/20") == (88_000_000_000, 20)


def test_slot_length_out_of_range_is_refused(url):
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="slot_ms 0"):
        DelayProcessor(pyjms.ConnectionFactory(url), slot_ms=0)


def test_processor_process_killed_with_sigkill_loses_and_duplicates_nothing(tcp_broker, qname):
    """`pyjms delay-processor` as a separate process, killed with SIGKILL mid-run, then restarted."""
    import signal
    import subprocess
    import sys

    from tests.conftest import ROOT

    queue = f"STAGE.{uuid.uuid4().hex[:8]}"
    url = tcp_broker.tcp_url
    n = 2000
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=queue)
    cmd = [
        sys.executable,
        "-m",
        "pyjms",
        "delay-processor",
        "--url",
        url,
        "--staging-queue",
        queue,
        "--report-every",
        "0.2",
    ]

    def start() -> subprocess.Popen[str]:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        assert "running" in proc.stdout.readline()
        return proc

    # the processor runs before the messages are sent: sent first, they could all be due by the
    # time a loaded machine had started its JVM, and be delivered between two reports
    first = start()
    try:
        with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
            q = ctx.create_queue(qname)
            p = ctx.create_producer().set_delivery_mode(pyjms.PERSISTENT)
            for i in range(n):
                p.set_delivery_delay(300 + (i % 40) * 50).send(q, str(i))
            ctx.commit()
        # kill it once it is mid-run: some delivered, some filed in slots, some still staged
        for line in first.stdout:
            if "delivered" in line and 0 < int(line.split("delivered ")[1].split()[0]) < n:
                break
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        second = start()
        try:
            with pyjms.ConnectionFactory(url).create_context() as ctx:
                consumer = ctx.create_consumer(ctx.create_queue(qname))
                got = []
                deadline = time.time() + 30
                while len(got) < n and time.time() < deadline:
                    got += consumer.receive_batch(1000, 500)
                got += drain(consumer, 500)  # anything duplicated would show up here
        finally:
            second.send_signal(signal.SIGINT)
            second.wait(20)
    finally:
        if first.poll() is None:
            first.kill()
    texts = sorted(int(m.get_text()) for m in got)
    assert texts == list(range(n)), f"got {len(texts)} of {n}, {len(set(texts))} distinct"


def test_d15_d20_failed_put_at_delivery_goes_to_the_dead_letter_queue_with_a_header(url, qname):
    """The target is resolved again at delivery (D15): put-inhibited after the send, it refuses
    the put, and the message is dead-lettered with an exception report (D20)."""
    from pyjms.broker.admin import Admin
    from pyjms.dlq.header import DeadLetterHeader

    queue = f"STAGE.{uuid.uuid4().hex[:8]}"
    dlq = f"DLQ.{uuid.uuid4().hex[:8]}"
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging", staging_queue=queue)
    processor = DelayProcessor(
        pyjms.ConnectionFactory(url, staging_queue=queue), dead_letter_queue=dlq
    ).start()
    try:
        with factory.create_context() as ctx:
            q = ctx.create_queue(qname)
            reports = ctx.create_temporary_queue()
            m = ctx.create_text_message("cannot land")
            m.set_int_property("JMS_IBM_Report_Exception", 1)
            ctx.create_producer().set_delivery_delay(800).set_jms_reply_to(reports).send(q, m)
            Admin(factory).define_queue(q, put_enabled=False)  # inhibited after staging, before delivery
            dead = ctx.create_consumer(ctx.create_queue(dlq)).receive(6000)
            assert dead is not None and dead.get_text() == "cannot land"
            header = DeadLetterHeader.from_message(dead)
            assert header.reason == 2051 and header.dest_q == qname
            report = ctx.create_consumer(reports).receive(3000)
            assert report is not None and report.get_int_property("JMS_IBM_Feedback") == 2051
            assert report.get_jms_correlation_id() == m.get_jms_message_id()
        assert processor.stats.failed == 1
    finally:
        processor.stop()


@TCP_ONLY
def test_d19_d09_a_put_disabled_staging_queue_stops_the_processor_until_enabled(staged, qname):
    """IBM MQ's way to stop its delay processor is PUT(DISABLED) on the staging queue, and
    PUT(ENABLED) starts it again; meanwhile a delayed send fails naming the staging queue (D09)."""
    from pyjms.broker.admin import Admin

    factory, processor = staged
    admin = Admin(factory)
    staging_queue = pyjms.Queue(factory.staging_queue)
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        consumer = ctx.create_consumer(q)
        # long enough that the processor is stopped before it is due, even on a loaded machine
        p = ctx.create_producer().set_delivery_delay(4000)
        p.send(q, "held")
        due = time.time() + 4.0
        deadline = time.time() + 3
        while processor.stats.staged < 1 and time.time() < deadline:
            time.sleep(0.02)
        admin.define_queue(staging_queue, put_enabled=False)
        try:
            deadline = time.time() + 5
            while not processor.suspended and time.time() < deadline:
                time.sleep(0.05)
            assert processor.suspended
            with pytest.raises(pyjms.JMSRuntimeException) as refused:
                p.send(q, "refused")
            assert refused.value.reason == 2051 and factory.staging_queue in str(refused.value)
            assert time.time() < due, "the processor stopped only after the message was due"
            wait_s = due + 1.0 - time.time()
            assert consumer.receive(int(wait_s * 1000)) is None  # due by now, but the processor is stopped
        finally:
            admin.define_queue(staging_queue, put_enabled=True)
        got = consumer.receive(5000)
        assert got is not None and got.get_text() == "held"
        assert not processor.suspended
        assert consumer.receive(300) is None
    admin.delete(staging_queue)


def test_d24_coa_cod_pan_nan_report_options_pass_through_to_the_target(staged, qname):
    factory, processor = staged
    options = ("JMS_IBM_Report_COA", "JMS_IBM_Report_COD", "JMS_IBM_Report_PAN", "JMS_IBM_Report_NAN")
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        reports = ctx.create_temporary_queue()
        m = ctx.create_text_message("with options")
        for i, name in enumerate(options):
            m.set_int_property(name, 256 + i)
        ctx.create_producer().set_delivery_delay(300).set_jms_reply_to(reports).send(q, m)
        got = ctx.create_consumer(q).receive(5000)
        assert {name: got.get_int_property(name) for name in options} == {
            n: 256 + i for i, n in enumerate(options)
        }
        assert got.get_jms_reply_to() == reports
        assert ctx.create_consumer(reports).receive(300) is None  # the processor reports none of them


def test_e06_e10_an_expiry_report_comes_when_the_message_is_discarded_not_when_it_expires(staged, qname):
    """A staged message that expires while its processor is stopped (staging queue
    PUT(DISABLED), D19) is eligible but not discarded: no report yet. When the processor starts
    again it discards the message and sends the report, in its own transaction, not the sender's."""
    from pyjms.broker.admin import Admin

    factory, processor = staged
    admin = Admin(factory)
    staging_queue = pyjms.Queue(factory.staging_queue)
    with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
        q = ctx.create_queue(qname)
        reports = ctx.create_temporary_queue()
        m = ctx.create_text_message("expires while held")
        m.set_int_property("JMS_IBM_Report_Expiration", 1)
        # due 4 s after the send: the processor must be suspended before then, and it notices
        # PUT(DISABLED) only at its next look (attributes_max_age_s / 2); with 1 s a loaded
        # fresh-clone run delivered the message before the suspension, and no report came
        sent = time.monotonic()
        ctx.create_producer().set_time_to_live(4200).set_delivery_delay(4000).set_jms_reply_to(reports).send(
            q, m
        )
        ctx.commit()
        deadline = time.time() + 10
        while processor.stats.staged < 1 and time.time() < deadline:
            time.sleep(0.02)
        assert processor.stats.staged >= 1  # staged before the processor stops
        admin.define_queue(staging_queue, put_enabled=False)
        report_consumer = ctx.create_consumer(reports)
        try:
            deadline = time.time() + 5
            while not processor.suspended and time.time() < deadline:
                time.sleep(0.05)
            assert processor.suspended
            assert time.monotonic() < sent + 4.0, "the processor stopped only after the message was due"
            time.sleep(max(0.0, sent + 4.5 - time.monotonic()))  # expired now, but nothing has discarded it
            assert report_consumer.receive(300) is None
        finally:
            admin.define_queue(staging_queue, put_enabled=True)
        # the processor notices PUT(ENABLED) at its next look (ProviderPlugin.attributes_max_age_s
        # / 2), then reads the overdue slot; on a loaded fresh-clone run 5 s were not enough
        report = report_consumer.receive(15_000)
        assert report is not None and report.get_int_property("JMS_IBM_Feedback") == 258
        assert report.get_jms_correlation_id() == m.get_jms_message_id()
        ctx.commit()  # the sender's transaction had no part in it
        assert ctx.create_consumer(q).receive(300) is None
    admin.delete(staging_queue)
    assert processor.stats.expired == 1


def test_messages_held_in_a_slot_arrive_with_every_property_and_body_exact(staged, qname, url):
    """A slot queue keeps a held message only in its marshalled form (ActiveMQ: CompactSlots
    and reduceMemoryFootprint): what comes out of the slot must equal what went in, for every
    property type, every body kind, and strings outside the BMP."""
    factory, processor = staged
    odd = "snow \u2603, clef \U0001d11e, nul \x00 end"
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        consumer = ctx.create_consumer(q)
        text = ctx.create_text_message(odd * 50)
        blob = ctx.create_bytes_message()
        blob.write_bytes(bytes(range(256)) * 4)
        entries = ctx.create_map_message()
        entries.set_object("s", odd)
        entries.set_object("\U0001f600", "key outside the BMP")
        entries.set_object("n", -(2**40))
        sent = [text, blob, entries, ctx.create_message()]
        for i, m in enumerate(sent):
            m.set_string_property("s", odd)
            m.set_string_property("name_\u00e9", "key outside ASCII")
            m.set_boolean_property("b", True)
            m.set_int_property("i", -7)
            m.set_long_property("l", 2**62 + i)
            m.set_double_property("d", 1.5e300)
            m.set_float_property("f", 0.25)
            m.set_short_property("h", -3)
            m.set_byte_property("y", 5)
        p = ctx.create_producer().set_delivery_delay(1500)  # far enough ahead to be filed in a slot
        for m in sent:
            p.send(q, m)
        got = []
        while len(got) < len(sent) and (m := consumer.receive(10_000)) is not None:
            got.append(m)
        got.sort(key=lambda m: m.get_long_property("l"))
        assert len(got) == len(sent)
        for i, m in enumerate(got):
            assert m.get_string_property("s") == odd
            assert m.get_string_property("name_\u00e9") == "key outside ASCII"
            assert m.get_boolean_property("b") is True
            assert (m.get_int_property("i"), m.get_long_property("l")) == (-7, 2**62 + i)
            assert (m.get_double_property("d"), m.get_float_property("f")) == (1.5e300, 0.25)
            assert (m.get_short_property("h"), m.get_byte_property("y")) == (-3, 5)
            assert m.get_jms_message_id() == sent[i].get_jms_message_id()
        assert got[0].get_text() == odd * 50
        assert got[1].read_bytes() == bytes(range(256)) * 4
        assert got[2].get_body(dict) == {"s": odd, "n": -(2**40), "\U0001f600": "key outside the BMP"}
    assert processor.stats.early == 0


def test_a_slot_filed_while_the_processor_looks_for_lost_markers_is_no_lost_marker(url, qname):
    """The sorter commits a new slot's marker with its first messages. A slot filed between the
    browse of the markers and the listing of the slot queues (a processor started while staged
    messages arrive) has its marker by then: it is left to the sorter, not reported as a slot
    queue found without a marker. A slot queue holding messages with no marker still is."""
    from pyjms.api.expiry import now_ms
    from pyjms.delay.processor_slots import SlotBook

    book = SlotBook(f"STAGE.{uuid.uuid4().hex[:8]}", 20)
    lost, filed_meanwhile = now_ms() // 20 + 1000, now_ms() // 20 + 2000
    with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as ctx:
        producer = ctx.create_producer()
        producer.send(book.slot_queue(lost), "its marker was lost")
        ctx.commit()

        def sorter_commits_meanwhile(queues: list[str]) -> list[str]:
            producer.send(book.slots_queue, book.marker(filed_meanwhile))
            producer.send(book.slot_queue(filed_meanwhile), "filed with its marker")
            ctx.commit()
            return queues  # both hold a message now

        names = [book.slot_queue(slot).name for slot in (lost, filed_meanwhile)]
        assert book.recover(ctx, names, sorter_commits_meanwhile) == [lost]


def test_a_slot_drained_while_the_processor_looks_for_lost_markers_is_no_lost_marker(url, qname):
    """A processor started while staged messages arrive asks, slot queue by slot queue, which of
    those without a marker hold messages (hundreds of browsers: seconds). A slot the sorter
    filed meanwhile can be due, drained and its marker compacted before the processor reads the
    markers again: the book forgets it then, its queue is left empty, and it is no lost marker.
    It is not reported as one (nor drained again); a slot queue holding messages with no marker
    still is."""
    from pyjms.api.expiry import now_ms
    from pyjms.delay.processor_slots import SlotBook

    book = SlotBook(f"STAGE.{uuid.uuid4().hex[:8]}", 20)
    lost, drained_meanwhile = now_ms() // 20 + 1000, now_ms() // 20 - 10  # the second is due
    with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as ctx:
        producer = ctx.create_producer()
        producer.send(book.slot_queue(lost), "its marker was lost")
        ctx.commit()

        def sorter_and_deliverer_meanwhile(queues: list[str]) -> list[str]:
            # the sorter files the slot, with its marker, and books it
            producer.send(book.slots_queue, book.marker(drained_meanwhile))
            producer.send(book.slot_queue(drained_meanwhile), "filed with its marker")
            ctx.commit()
            book.record_filed({drained_meanwhile: 1}, [drained_meanwhile])
            book.add(drained_meanwhile)
            held = list(queues)  # both held a message as they were browsed
            # the deliverer drains it, and a compaction drops its marker
            consumer = ctx.create_consumer(book.slot_queue(drained_meanwhile))
            assert consumer.receive(5000) is not None
            consumer.close()
            ctx.commit()
            book.record_moved(drained_meanwhile, 1)
            assert book.finish(drained_meanwhile, True) is not None
            book.compact_markers(ctx, set())
            return held

        names = [book.slot_queue(slot).name for slot in (lost, drained_meanwhile)]
        assert book.recover(ctx, names, sorter_and_deliverer_meanwhile) == [lost]
        assert book.first(5) == [lost]
