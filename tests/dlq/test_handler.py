"""The DLQ handler on real brokers, by checklist ID (Q01-Q11; the parser's own are in tests/unit)."""

from __future__ import annotations

import logging
import threading
import time

import pytest

import pyjms
from pyjms.bridge import codec as C
from pyjms.dlq import DLQHandler, HandlerStats, RulesTable, RulesTableError, dead_letter
from pyjms.dlq.handler import XQH_REMOTE_Q, XQH_REMOTE_Q_MGR
from pyjms.dlq.header import HEADER_PROPERTIES, REASON
from pyjms.rules.reasons import MQRC
from tests.dlq.conftest import FULL_PREFIX, browse, drain_all, put_dead_letters
from tests.unit.test_dlq_rules import IBM_EXAMPLE

UNKNOWN_OBJECT = MQRC.UNKNOWN_OBJECT_NAME

# IBM's published example table (DESIGN.md), the one the parser tests use.

# provider-independent: the url tests run on ActiveMQ Classic and on Apache Artemis (the full_url
# ones need ActiveMQ's memory limit to fill a queue)
pytestmark = pytest.mark.providers("activemq", "artemis", "amqp")


def texts(messages: list[pyjms.Message]) -> list[str]:
    return sorted(m.get_text() for m in messages)


def has_header(message: pyjms.Message) -> bool:
    return any(message.property_exists(name) for name in HEADER_PROPERTIES)


def test_q01_q06_ibm_example_table_on_real_messages(factory: pyjms.ConnectionFactory, url: str, qname: str):
    p = qname
    table = IBM_EXAMPLE.replace("DEADQ", f"{p}.DEADQ").replace("ALARM", f"{p}.ALARM")
    xmit = {"AAAA.1": f"{p}.XMIT.AAAA", "bbbb.2": f"{p}.XMIT.bbbb", "CCCC.1": f"{p}.XMIT.CCCC"}
    dlq = f"{p}.DLQ"
    with factory.create_context() as ctx:
        reply = ctx.create_queue(f"{p}.REPLY")

        def dead(
            body: str,
            reason: int,
            *,
            dest_q: str = f"{p}.APP",
            dest_q_mgr: str = "QM1",
            reply_to: bool = False,
            reply_qm: str | None = None,
            persistent: bool = True,
        ) -> None:
            message = pyjms.TextMessage(body)
            if reply_to:
                message.set_jms_reply_to(reply)
            if reply_qm:
                message.set_property("JMS_IBM_MQMD_ReplyToQMgr", reply_qm)
            if not persistent:
                message.set_jms_delivery_mode(pyjms.NON_PERSISTENT)
            dead_letter(ctx, message, dlq, reason, dest_q=dest_q, dest_q_mgr=dest_q_mgr)

        dead("full", MQRC.Q_FULL)  # rule 1: RETRY
        dead("inhibited", MQRC.PUT_INHIBITED)  # rule 2: RETRY
        dead("request-aaaa", UNKNOWN_OBJECT, reply_to=True, reply_qm="AAAA.1")  # rule 3
        dead("bbbb", UNKNOWN_OBJECT, dest_q=f"{p}.ORDERS", dest_q_mgr="bbbb.1")  # rule 4
        dead("cccc", UNKNOWN_OBJECT, reply_to=True, reply_qm="CCCC.7")  # rule 5
        dead("non-persistent", UNKNOWN_OBJECT, persistent=False)  # rule 6: DISCARD
        dead("local-request", UNKNOWN_OBJECT, reply_to=True)  # rule 7, REPLYQM = QM1
        dead("datagram", UNKNOWN_OBJECT)  # rule 8 (Q06: action only)

    handler = DLQHandler(url, dlq, table, "QM1", wait=False, transmission_queues=xmit)
    stats = handler.run()

    assert (stats.retried, stats.forwarded, stats.discarded, stats.ignored, stats.errors) == (2, 5, 1, 0, 0)
    with factory.create_context() as ctx:
        assert browse(ctx, dlq) == []
        app = browse(ctx, f"{p}.APP")
        assert texts(app) == ["full", "inhibited"] and not any(map(has_header, app))  # RETRY drops it
        [aaaa] = browse(ctx, xmit["AAAA.1"])
        assert aaaa.get_text() == "request-aaaa" and aaaa.get_int_property(REASON) == UNKNOWN_OBJECT
        assert (aaaa.get_string_property(XQH_REMOTE_Q), aaaa.get_string_property(XQH_REMOTE_Q_MGR)) == (
            f"{p}.DEADQ",
            "AAAA.1",
        )
        [bbbb] = browse(ctx, xmit["bbbb.2"])
        assert bbbb.get_text() == "bbbb" and not has_header(bbbb)  # HEADER(NO)
        assert (bbbb.get_string_property(XQH_REMOTE_Q), bbbb.get_string_property(XQH_REMOTE_Q_MGR)) == (
            f"{p}.ORDERS",
            "bbbb.2",
        )
        [cccc] = browse(ctx, xmit["CCCC.1"])
        assert cccc.get_text() == "cccc" and cccc.get_string_property(XQH_REMOTE_Q) == f"{p}.ALARM"
        manual = browse(ctx, f"{p}.DEADQ.MANUAL")
        assert texts(manual) == ["datagram", "local-request"] and all(map(has_header, manual))
        assert [m.get_jms_reply_to() for m in manual if m.get_text() == "local-request"] == [reply]


def test_q02_q03_retry_until_the_count_runs_out_then_the_next_rule(full_url: str, qname: str):
    full, dlq, manual = FULL_PREFIX + qname, qname + ".DLQ", qname + ".MANUAL"
    factory = pyjms.ConnectionFactory(full_url)
    with factory.create_context() as ctx:
        ctx.create_producer().send(ctx.create_queue(full), "filler")  # the queue is full now
        put_dead_letters(ctx, dlq, ["m"], MQRC.Q_FULL, full)
    table = f"REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(3)\nACTION(FWD) FWDQ({manual})"

    started = time.monotonic()
    stats = DLQHandler(full_url, dlq, table, wait=False, retry_interval_s=0.3).run()
    elapsed = time.monotonic() - started

    assert (stats.failed_attempts, stats.retried, stats.forwarded) == (3, 0, 1)
    assert elapsed >= 0.6  # RETRYINT spaces the three attempts
    with factory.create_context() as ctx:
        [forwarded] = browse(ctx, manual)
        assert forwarded.get_text() == "m" and forwarded.get_int_property(REASON) == MQRC.Q_FULL
        assert texts(browse(ctx, full)) == ["filler"] and browse(ctx, dlq) == []


def test_q04_ignore_when_every_matching_rule_failed_or_none_matches(full_url: str, qname: str):
    full, dlq = FULL_PREFIX + qname, qname + ".DLQ"
    factory = pyjms.ConnectionFactory(full_url)
    with factory.create_context() as ctx:
        ctx.create_producer().send(ctx.create_queue(full), "filler")
        put_dead_letters(ctx, dlq, ["exhausted"], MQRC.Q_FULL, full)
        put_dead_letters(ctx, dlq, ["unmatched"], UNKNOWN_OBJECT, qname)
    table = "WAIT(NO)\nREASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)"

    stats = DLQHandler(full_url, dlq, table, retry_interval_s=0.1).run()  # ends: nothing left to try

    assert (stats.failed_attempts, stats.ignored, stats.processed) == (2, 2, 2)
    with factory.create_context() as ctx:
        left = browse(ctx, dlq)
        assert texts(left) == ["exhausted", "unmatched"] and all(map(has_header, left))


def test_q05_q10_messages_without_header_stay_reported_while_others_read_the_dlq(
    factory: pyjms.ConnectionFactory, url: str, qname: str, caplog: pytest.LogCaptureFixture
):
    dlq, target = qname + ".DLQ", qname + ".TARGET"
    handler = DLQHandler(url, dlq, f"ACTION(FWD) FWDQ({target})", poll_interval_s=0.1, report_interval_s=0.2)
    thread = threading.Thread(target=handler.run)
    with caplog.at_level(logging.ERROR, logger="pyjms.dlq"), factory.create_context() as ctx:
        ctx.create_producer().send(ctx.create_queue(dlq), "no header 1")
        ctx.create_producer().send(ctx.create_queue(dlq), "no header 2")
        thread.start()
        put_dead_letters(ctx, dlq, ["with header"], UNKNOWN_OBJECT, qname)
        deadline = time.monotonic() + 10
        while handler.stats.forwarded < 1 or len(caplog.records) < 2:
            assert time.monotonic() < deadline, (handler.stats, caplog.records)
            time.sleep(0.05)
        # Q10: the DLQ is shared; another reader takes a message while the handler runs
        with ctx.create_consumer(ctx.create_queue(dlq), f"{REASON} IS NULL") as reader:
            other = reader.receive(5000)  # closed: what its prefetch holds goes back (Artemis)
        handler.stop()
        thread.join(10)
        assert other is not None and other.get_text().startswith("no header")
        assert texts(browse(ctx, target)) == ["with header"]
        left = browse(ctx, dlq)
    assert len(left) == 1 and left[0].get_text().startswith("no header")
    assert handler.stats.without_header == 2 and handler.stats.errors == 2
    assert (
        "have no dead-letter header and stay there" in caplog.records[0].getMessage()
    )  # reported again later


def test_q08_forwarded_unchanged_with_or_without_header(
    factory: pyjms.ConnectionFactory, url: str, qname: str
):
    dlq, keep, strip = qname + ".DLQ", qname + ".KEEP", qname + ".STRIP"
    with factory.create_context() as ctx, ctx.create_context(pyjms.SESSION_TRANSACTED) as tx:
        app = ctx.create_queue(qname)
        text = pyjms.TextMessage("text")
        for setter, value in (
            (text.set_short_property, 7),
            (text.set_byte_property, -3),
            (text.set_float_property, 1.5),
            (text.set_long_property, 2**40),
            (text.set_boolean_property, True),
            (text.set_string_property, "s"),
        ):
            setter(f"p_{setter.__name__[4:-9]}", value)
        text.set_jms_type("order")
        text.set_jms_reply_to(ctx.create_queue(qname + ".REPLY"))
        mapped = pyjms.MapMessage()
        mapped.set_int("i", 1)
        mapped.set_short("sh", 2)
        mapped.set_bytes("b", b"\x00\x01")
        (
            ctx.create_producer()
            .set_priority(7)
            .set_time_to_live(60_000)
            .set_jms_correlation_id("corr")
            .send(app, text)
            .send(app, pyjms.BytesMessage(b"\x00bin"))
            .send(app, mapped)
            .set_delivery_mode(pyjms.NON_PERSISTENT)
            .send(app, None)
        )
        consumer = tx.create_consumer(app)
        originals = [consumer.receive(5000) for _ in range(4)]
        for i, original in enumerate(originals):  # two with DESTQ(a) ... HEADER(NO), two kept
            dead_letter(tx, original, dlq, UNKNOWN_OBJECT, dest_q="a" if i % 2 else "b")
        tx.commit()
    table = f"DESTQ(a) ACTION(FWD) FWDQ({strip}) HEADER(NO)\nACTION(FWD) FWDQ({keep})"

    stats = DLQHandler(url, dlq, table, wait=False).run()

    assert stats.forwarded == 4
    with factory.create_context() as ctx:
        kept, stripped = browse(ctx, keep), browse(ctx, strip)
    assert len(kept) == len(stripped) == 2
    assert all(map(has_header, kept)) and not any(map(has_header, stripped))  # HEADER(NO)
    moved = {type(m).__name__: m for m in kept + stripped}  # one message of each kind
    for original in originals:
        copy = moved[type(original).__name__]
        user_props = {k: v for k, v in copy.typed_properties().items() if k not in HEADER_PROPERTIES}
        assert user_props == dict(original.typed_properties()) | {
            "JMS_PYJMS_Timestamp": (C.T_LONG, original.get_jms_timestamp())
        }
        assert type(copy) is type(original)
        if isinstance(original, pyjms.MapMessage):
            assert copy.typed_map() == original.typed_map()  # the JMS types of map entries too
        else:
            assert copy.get_body() == original.get_body()
        for getter in (
            "get_jms_correlation_id",
            "get_jms_type",
            "get_jms_reply_to",
            "get_jms_priority",
            "get_jms_delivery_mode",
            "get_jms_timestamp",
        ):
            assert getattr(copy, getter)() == getattr(original, getter)(), getter
        assert abs(copy.get_jms_expiration() - original.get_jms_expiration()) < 500  # E14


def test_q11_several_handlers_on_one_dlq_process_each_message_once(
    factory: pyjms.ConnectionFactory, url: str, qname: str
):
    dlq, target, count = qname + ".DLQ", qname + ".TARGET", 600
    with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:  # JMS_PYJMS_* headers: pyjms's route
        for i in range(count):
            dead_letter(ctx, pyjms.TextMessage(f"m{i}"), dlq, UNKNOWN_OBJECT, dest_q=qname)
        ctx.commit()
    handlers = [
        DLQHandler(url, dlq, f"WAIT(NO)\nACTION(FWD) FWDQ({target})", poll_interval_s=0.2) for _ in range(3)
    ]
    threads = [threading.Thread(target=h.run) for h in handlers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)

    assert sum(h.stats.forwarded for h in handlers) == count
    assert all(h.stats.errors == 0 for h in handlers)
    with factory.create_context() as ctx:
        moved = texts(drain_all(ctx, target))
        assert moved == sorted(f"m{i}" for i in range(count))  # every one, exactly once
        assert drain_all(ctx, dlq) == []


def test_q07_a_table_with_errors_does_not_start_the_handler():
    with pytest.raises(RulesTableError) as info:
        DLQHandler("tcp://127.0.0.1:1", "DLQ", "ACTION(FWD)\nREASON(NOPE) ACTION(DISCARD)")
    assert [line for line, _ in info.value.problems] == [1, 2]


def test_wait_no_and_wait_seconds_end_the_handler(url: str, qname: str):
    once = DLQHandler(url, qname, "WAIT(NO)\nACTION(DISCARD)").run()
    started = time.monotonic()
    waited = DLQHandler(url, qname, "WAIT(1)\nACTION(DISCARD)", poll_interval_s=0.2).run()
    assert once.passes == 1  # an empty queue: WAIT(NO) ends at once
    assert time.monotonic() - started >= 1.0 and waited.passes >= 3  # WAIT(1): polls for a second first
    assert isinstance(waited, HandlerStats) and waited.processed == 0


def test_stop_ends_a_waiting_handler(url: str, qname: str):
    handler = DLQHandler(url, qname, RulesTable.parse("ACTION(DISCARD)"), poll_interval_s=0.1)
    thread = threading.Thread(target=handler.run)
    thread.start()
    time.sleep(0.5)
    handler.stop()
    thread.join(5)
    assert not thread.is_alive() and handler.stopping


def test_a_target_that_is_the_dlq_itself_fails_instead_of_looping(
    factory: pyjms.ConnectionFactory, url: str, qname: str
):
    dlq = qname + ".DLQ"
    with factory.create_context() as ctx:
        put_dead_letters(ctx, dlq, ["m"], UNKNOWN_OBJECT, dlq)  # its destination was the DLQ
    stats = DLQHandler(url, dlq, "WAIT(NO)\nACTION(RETRY)\nACTION(FWD) FWDQ(&DESTQ)").run()
    assert (stats.failed_attempts, stats.ignored, stats.retried + stats.forwarded) == (2, 1, 0)
    with factory.create_context() as ctx:
        assert texts(browse(ctx, dlq)) == ["m"]


@pytest.mark.providers("activemq")  # the cause text is ActiveMQ's (issue finding 5)
def test_failover_duplicates_activemq_dead_lettered_are_dropped_not_forwarded(
    factory: pyjms.ConnectionFactory, url: str, qname: str
):
    """ActiveMQ's failover consumer dead-letters the duplicates its audit suppresses after a
    reconnect; a RETRY or FWD rule would put a second copy back. The handler drops them."""
    dlq, target = qname + ".DLQ", qname + ".TARGET"
    with factory.create_context() as ctx:
        put_dead_letters(ctx, dlq, ["real"], UNKNOWN_OBJECT, target)
        copy = pyjms.TextMessage("copy")  # as the broker dead-letters a suppressed duplicate
        copy.set_string_property(
            "dlqDeliveryFailureCause",
            "java.lang.Throwable: Suppressing duplicate delivery on connection, consumer ID:c-1:1:1:1",
        )
        ctx.create_producer().send(ctx.create_queue(dlq), copy)
    stats = DLQHandler(url, dlq, f"WAIT(NO)\nACTION(FWD) FWDQ({target})").run()
    assert (stats.duplicates, stats.discarded, stats.forwarded) == (1, 1, 1)
    assert "duplicates dropped 1" in stats.summary()
    with factory.create_context() as ctx:
        assert texts(drain_all(ctx, target)) == ["real"] and browse(ctx, dlq) == []


def test_a_resent_copy_of_a_dead_letter_is_removed_not_retried_twice(url: str, qname: str):
    """Two copies of one dead letter (the same duplicate id, put twice, as a resend after an
    in-doubt commit leaves them on a broker without duplicate detection): the rules handle
    the first, the second is removed. The retried message gets an id of its own, so that its
    queue's receivers do not take it for a resend of the message that was dead-lettered."""
    dlq, target = qname + ".DLQ", qname + ".TARGET"
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        for body, duplicate_id in (("a", "id-a"), ("a", "id-a"), ("b", "id-b"), ("c", None)):
            message = pyjms.TextMessage(body)
            if duplicate_id is not None:
                message.set_duplicate_id(duplicate_id)
            dead_letter(ctx, message, dlq, MQRC.Q_FULL, dest_q=target)
        broker_drops = ctx.provider.detects_duplicates(ctx)  # Artemis (core or AMQP) drops the copy itself
        assert len(browse(ctx, dlq)) == (3 if broker_drops else 4)
    stats = DLQHandler(url, dlq, "ACTION(RETRY)", wait=False).run()
    assert (stats.retried, stats.resends_dropped) == (3, 0 if broker_drops else 1)
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        on_target = browse(ctx, target)  # a browser shows every copy there is
        assert texts(on_target) == ["a", "b", "c"] and browse(ctx, dlq) == []
        ids = {m.get_text(): m.get_duplicate_id() for m in on_target}
        assert ids["c"] is None and ids["a"].startswith("pyjms-dlq:") and ids["a"] != ids["b"]
        assert texts(drain_all(ctx, target)) == ["a", "b", "c"]


def test_q04_q05_messages_left_are_found_by_a_browse_not_got_one_by_one(
    factory: pyjms.ConnectionFactory, url: str, qname: str
):
    """The handler gets dead letters with a consumer; once it has got one it must leave (no
    header, IGNORE) and rolled it back, it browses for the others like it before getting
    more, so that those are never got, and the ones it moves are still moved, each once."""
    dlq, target = qname + ".DLQ", qname + ".TARGET"
    with factory.create_context() as ctx:
        for i in range(3):
            ctx.create_producer().send(ctx.create_queue(dlq), f"no header {i}")
        put_dead_letters(ctx, dlq, [f"unmatched {i}" for i in range(3)], UNKNOWN_OBJECT, qname)
        put_dead_letters(ctx, dlq, [f"full {i}" for i in range(4)], MQRC.Q_FULL, qname)
    stats = DLQHandler(url, dlq, f"WAIT(NO)\nREASON(MQRC_Q_FULL) ACTION(FWD) FWDQ({target})").run()
    assert (stats.forwarded, stats.ignored, stats.without_header) == (4, 3, 3)
    with factory.create_context() as ctx:
        assert texts(drain_all(ctx, target)) == [f"full {i}" for i in range(4)]
        left = drain_all(ctx, dlq)
    assert texts(left) == [f"no header {i}" for i in range(3)] + [f"unmatched {i}" for i in range(3)]
    got_before = [m.get_text() for m in left if m.get_delivery_count() > 1]  # got by the handler before
    assert len(got_before) <= 1, got_before  # the first one met; the browse found the others


@pytest.mark.providers("activemq")  # the consumer's prefetch limit is ActiveMQ's (Provider.prefetching)
def test_q11_a_second_handler_shares_the_work_of_the_first(
    factory: pyjms.ConnectionFactory, url: str, qname: str
):
    """A handler's consumer is sent only a few messages ahead, so a second handler started on
    a DLQ gets a share of it rather than waiting; each message is still moved once. (Fewer
    messages than ActiveMQ's default prefetch, 1,000, which the first would be sent at once.)"""
    dlq, target, count = qname + ".DLQ", qname + ".TARGET", 800
    with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
        for i in range(count):
            dead_letter(ctx, pyjms.TextMessage(f"m{i}"), dlq, UNKNOWN_OBJECT, dest_q=qname)
        ctx.commit()
    table = f"WAIT(NO)\nACTION(FWD) FWDQ({target})"
    first = DLQHandler(url, dlq, table, poll_interval_s=0.2)
    second = DLQHandler(url, dlq, table, poll_interval_s=0.2)
    threads = [threading.Thread(target=h.run) for h in (first, second)]
    threads[0].start()
    deadline = time.monotonic() + 30
    while first.stats.forwarded == 0:  # the first one is under way
        assert time.monotonic() < deadline and threads[0].is_alive(), first.stats
        time.sleep(0.01)
    threads[1].start()
    for t in threads:
        t.join(120)
    assert first.stats.forwarded + second.stats.forwarded == count
    assert first.stats.forwarded < count and second.stats.forwarded > 0, (first.stats, second.stats)
    with factory.create_context() as ctx:
        assert texts(drain_all(ctx, target)) == sorted(f"m{i}" for i in range(count))
