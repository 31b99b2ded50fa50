"""The expiry rules (E…) a client observes through a provider: remaining expiry in tenths,
expired messages never returned and discarded ahead of the first live one, reports, depth,
backed-out and browsed messages that expire, replies. E02, E07, E08 and E15 are with the
delay rules, which share their experiments."""

from __future__ import annotations

import time

from pyjms.api.constants import NON_PERSISTENT, SESSION_TRANSACTED
from pyjms.api.destination import Queue
from pyjms.browse import NoMessageAvailable, NoMessageUnderCursor, create_marking_browser
from pyjms.conformance.delay_rules import MARK
from pyjms.conformance.kit import Probe, rule, text_of
from pyjms.dlq import dead_letter
from pyjms.errors import JMSRuntimeException
from pyjms.reasons import MQEI_UNLIMITED, MQRC


def _send_short_and_long(p: Probe, q: Queue, short_ms: int) -> None:
    """'short' (TTL short_ms) then 'long' (unlimited), non-persistent (an expired persistent
    message would go to a broker's dead-letter queue); delayed 100 ms where a delay is offered,
    so that the mode's way of carrying expiry is what is tried."""
    producer = p.ctx.create_producer().set_delivery_mode(NON_PERSISTENT)
    if p.mechanism.available:
        producer.set_delivery_delay(100)
    producer.set_time_to_live(short_ms).send(q, "short")
    producer.set_time_to_live(0).send(q, "long")


@rule("E01", "a lifetime is the TTL in ms, shown in tenths of a second", "about 600 tenths for 60000 ms")
def e01(p: Probe) -> str:
    q = p.queue()
    p.ctx.create_producer().set_time_to_live(60_000).send(q, "sixty seconds")
    with p.ctx.create_consumer(q) as consumer:
        got = consumer.receive(5000)
    if got is None:
        return "not delivered"
    remaining = got.get_remaining_expiry()
    return "about 600 tenths for 60000 ms" if 590 <= remaining <= 600 else f"{remaining} tenths"


@rule("E17", "a lifetime is unlimited unless the sender sets one", "expiration 0, remaining -1")
def e17(p: Probe) -> str:
    q = p.queue()
    p.ctx.create_producer().send(q, "forever")
    with p.ctx.create_consumer(q) as consumer:
        got = consumer.receive(5000)
    if got is None:
        return "not delivered"
    return f"expiration {got.get_jms_expiration()}, remaining {got.get_remaining_expiry()}"


@rule("E03", "a receive or a browse never returns an expired message", "browse: long; receive: long")
def e03(p: Probe) -> str:
    q = p.delay_target("SHORTLONG")
    _send_short_and_long(p, q, 300)
    time.sleep(0.6)
    with p.ctx.create_browser(q) as browser:
        browsed = [text_of(m) for m in browser]
    with p.ctx.create_consumer(q) as consumer:
        received = []
        while (m := consumer.receive(300)) is not None:
            received.append(text_of(m))
    return f"browse: {', '.join(map(str, browsed))}; receive: {', '.join(map(str, received))}"


@rule(
    "E04",
    "a get discards the expired messages ahead of the first live one (FIFO and priority)",
    "FIFO: alive, then none; priority: low alive, then none",
)
def e04(p: Probe) -> str:
    seen = []
    # one after the other: with --queue both parts use the one queue
    for part in ("fifo", "priority"):
        q = p.queue()
        producer = p.ctx.create_producer().set_delivery_mode(NON_PERSISTENT)
        if part == "fifo":
            producer.set_time_to_live(200).send_batch(q, ["old-1", "old-2", "old-3"])
            producer.set_time_to_live(0).send(q, "alive")
        else:
            producer.set_priority(4).set_time_to_live(0).send(q, "low alive")
            producer.set_priority(9).set_time_to_live(200).send(q, "high expired")
        time.sleep(0.4)
        with p.ctx.create_consumer(q) as consumer:
            first = consumer.receive(2000)
            rest = consumer.receive(200)
        seen.append(f"{text_of(first)}, then {'none' if rest is None else text_of(rest)}")
    return f"FIFO: {seen[0]}; priority: {seen[1]}"


@rule("E05", "a received message's remaining expiry is positive or -1", "unlimited: -1; limited: positive")
def e05(p: Probe) -> str:
    q = p.queue()
    producer = p.ctx.create_producer()
    producer.set_time_to_live(0).send(q, "unlimited")
    producer.set_time_to_live(2000).send(q, "limited")
    with p.ctx.create_consumer(q) as consumer:
        got = {
            text_of(m): m.get_remaining_expiry()
            for m in (consumer.receive(5000), consumer.receive(5000))
            if m
        }
    limited = got.get("limited")
    unlimited = got.get("unlimited")
    return (
        f"unlimited: {unlimited}; limited: "
        f"{'positive' if limited is not None and 0 < limited <= 20 else limited}"
    )


@rule(
    "E06", "no expiry report when a lifetime runs out and nothing has discarded the message", "no report yet"
)
def e06(p: Probe) -> str:
    q, reports = p.queue(), p.queue()
    m = p.ctx.create_text_message("expires unread")
    m.set_int_property("JMS_IBM_Report_Expiration", 1)
    p.ctx.create_producer().set_delivery_mode(NON_PERSISTENT).set_time_to_live(200).set_jms_reply_to(
        reports
    ).send(q, m)
    time.sleep(0.5)
    with p.ctx.create_consumer(reports) as consumer:
        report = consumer.receive(300)
    return "no report yet" if report is None else "a report before any discard"


@rule("E09", "expired messages not yet discarded count towards the depth", f"depth 2; {MQRC.Q_FULL.mq_name}")
def e09(p: Probe) -> str:
    admin = p.needs_admin()
    q = p.named_queue("DEPTH")
    admin.define_queue(q, max_depth=2)
    try:
        # persistent, as a queue's depth counts them; a broker may dead-letter them when they
        # expire (ActiveMQ does): marked, they are taken off its dead-letter queue below
        producer = p.ctx.create_producer().set_property(MARK, p.tag)
        producer.set_time_to_live(200).send_batch(q, ["a", "b"])
        time.sleep(0.5)  # both expired, neither discarded: nobody has looked
        described = admin.describe(q)
        depth = getattr(described, "depth", None)
        try:
            producer.set_time_to_live(0).send(q, "c")
            full = "ok"
        except JMSRuntimeException as e:
            full = e.reason_name or str(e)
        with p.ctx.create_consumer(q) as consumer:
            consumer.receive(300)  # discards them (E03)
    finally:
        admin.delete(q)
        take_back(p)
    return f"depth {depth}; {full}"


def take_back(p: Probe) -> None:
    """Takes this run's expired messages off the broker's own dead-letter queue, if it has
    one and put them there."""
    dlq = p.ctx.provider.dead_letter_queue
    if dlq is None:
        return
    with p.ctx.create_consumer(Queue(dlq), f"{MARK} = '{p.tag}'") as consumer:
        while consumer.receive(500) is not None:
            pass


@rule("E11", "a message got in a rolled-back transaction may expire before it is got again", "gone")
def e11(p: Probe) -> str:
    tx = p.context(SESSION_TRANSACTED)
    q = p.queue()
    tx.create_producer().set_delivery_mode(NON_PERSISTENT).set_time_to_live(1000).send(q, "nearly expired")
    tx.commit()
    with tx.create_consumer(q) as consumer:
        first = consumer.receive(2000)
        time.sleep(1.1)
        tx.rollback()
        again = consumer.receive(500)
    if first is None:
        return "not delivered"
    return "gone" if again is None else "got again after it expired"


@rule(
    "E12",
    "a browsed message that expires before the get is no longer under the cursor",
    f"{MQRC.NO_MSG_UNDER_CURSOR.mq_name}",
)
def e12(p: Probe) -> str:
    q = p.queue()
    producer = p.ctx.create_producer().set_delivery_mode(NON_PERSISTENT)
    producer.set_time_to_live(1000).send(q, "short-lived")
    producer.set_time_to_live(0).send(q, "lasting")
    with create_marking_browser(p.ctx, q) as browser:
        short = browser.get()
        if text_of(short) != "short-lived":
            return f"browsed {text_of(short)} first (the short-lived one expired before the browse)"
        time.sleep(1.1)
        with p.ctx.create_consumer(q) as consumer:
            try:
                consumer.receive_by_token(short.get_message_token(), 300)
                return "got it"
            except NoMessageUnderCursor as e:
                return e.reason_name or str(e.reason)
            except NoMessageAvailable as e:
                return f"{e.reason_name} (not under-cursor)"


@rule(
    "E13",
    "a reply copies the request's remaining expiry, or takes an explicit or unlimited one",
    "copied; unlimited -1; explicit positive",
)
def e13(p: Probe) -> str:
    client, server = p.ctx, p.context()
    replies, q = p.queue(), p.queue()
    if replies == q:
        replies = client.create_temporary_queue()  # --queue: replies still need a queue of their own
    client.create_producer().set_time_to_live(10_000).set_jms_reply_to(replies).send(q, "request")
    with server.create_consumer(q) as consumer:
        request = consumer.receive(5000)
    if request is None:
        return "request not delivered"
    time.sleep(0.3)
    producer = server.create_producer()
    producer.send_reply(request, "copied")
    producer.send_reply(request, "unlimited", expiry="unlimited")
    producer.send_reply(request, "explicit", expiry=2000)
    with client.create_consumer(replies) as consumer:
        got = {text_of(m): m for m in (consumer.receive(5000) for _ in range(3)) if m is not None}
    copied, unlimited, explicit = got.get("copied"), got.get("unlimited"), got.get("explicit")
    seen = [
        "copied"
        if copied is not None and abs(copied.get_jms_expiration() - request.get_jms_expiration()) <= 200
        else f"copied: {None if copied is None else copied.get_jms_expiration() - request.get_jms_expiration()} ms off",
        f"unlimited {None if unlimited is None else unlimited.get_remaining_expiry()}",
        "explicit positive"
        if explicit is not None and 0 < explicit.get_remaining_expiry() <= 20
        else f"explicit {None if explicit is None else explicit.get_remaining_expiry()}",
    ]
    return "; ".join(seen)


@rule("E14", "dead-lettering keeps a message's remaining expiry, still counting down", "kept, counting down")
def e14(p: Probe) -> str:
    app, dlq = p.queue(), p.queue()
    if app == dlq:
        dlq = p.ctx.create_temporary_queue()
    tx = p.context(SESSION_TRANSACTED)
    p.ctx.create_producer().set_time_to_live(60_000).send(app, "body")
    with tx.create_consumer(app) as consumer:
        got = consumer.receive(5000)
    if got is None:
        return "not delivered"
    dead_letter(tx, got, dlq, MQRC.Q_FULL, put_appl_name="pyjms conformance")
    tx.commit()
    time.sleep(0.2)
    with p.ctx.create_consumer(dlq) as consumer:
        dead = consumer.receive(5000)
    if dead is None:
        return "not dead-lettered"
    same = abs(dead.get_jms_expiration() - got.get_jms_expiration()) < 200
    counting = 0 < dead.get_remaining_expiry() <= got.get_remaining_expiry()
    return (
        "kept, counting down" if same and counting else f"expiration kept: {same}, counting down: {counting}"
    )


assert MQEI_UNLIMITED == -1  # E05, E15, E17 expect -1 by its number
