"""The DLQ handler (Q…): pyjms's runmqdlq on a dead-letter queue of the run's own, on this
provider. Its queues are named (the handler reads them on connections of its own) and drained
after each rule."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyjms.api.destination import Queue
from pyjms.api.message import Message, TextMessage
from pyjms.conformance.kit import OK, Probe, rule, text_of, unobservable
from pyjms.dlq import DLQHandler, RulesTableError, dead_letter
from pyjms.dlq.header import REASON
from pyjms.reasons import MQRC


@contextmanager
def quiet() -> Iterator[None]:
    """The handler logs what the rules make it meet on purpose (headerless messages, failed
    retries) as errors: not the kit's output."""
    log = logging.getLogger("pyjms.dlq")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def receive_all(p: Probe, q: Queue, wait_ms: int = 300) -> list[Message]:
    with p.ctx.create_consumer(q) as consumer:
        out = []
        while (m := consumer.receive(wait_ms)) is not None:
            out.append(m)
    return out


def dead(p: Probe, dlq: Queue, body: str, reason: int, dest_q: str = "APP", **headers: Any) -> Message:
    m = TextMessage(body)
    for name, value in headers.items():
        m.set_property(name, value)
    dead_letter(p.ctx, m, dlq, reason, dest_q=dest_q)
    return m


def table_run(p: Probe) -> dict[str, Any]:
    """One handler pass over a table of three rules (Q01, Q05, Q06, Q08, Q10): a Q_FULL dead
    letter matches the first two and must go by the first; another reason goes by the last,
    action-only, rule; a message without a header stays, and another reader of the DLQ, open
    all along, takes it."""
    if "table" not in p.shared:
        dlq, first, second, rest = (p.named_queue(w) for w in ("DLQ", "FIRST", "SECOND", "REST"))
        app = p.named_queue("APP")
        table = (
            f"REASON(MQRC_Q_FULL) ACTION(FWD) FWDQ({first.name})\n"
            f"REASON(MQRC_Q_FULL) ACTION(FWD) FWDQ({second.name})\n"
            f"ACTION(FWD) FWDQ({rest.name})\n"
        )
        (
            p.ctx.create_producer()
            .set_priority(7)
            .set_time_to_live(60_000)
            .set_jms_correlation_id("c-1")
            .set_property("n", 5)
            .send(app, "full")
        )
        with p.ctx.create_consumer(app) as consumer:
            original = consumer.receive(5000)
        assert original is not None
        dead_letter(p.ctx, original, dlq, MQRC.Q_FULL, dest_q=app.name)
        dead(p, dlq, "unknown", MQRC.UNKNOWN_OBJECT_NAME)
        other_reader = p.stack.enter_context(p.ctx.create_consumer(dlq, f"{REASON} IS NULL"))
        p.ctx.create_producer().send(dlq, "no header")
        with quiet():
            stats = DLQHandler(p.factory, dlq.name, table, wait=False).run()
        taken = other_reader.receive(3000)
        p.shared["table"] = {
            "original": original,
            "stats": stats,
            "first": receive_all(p, first),
            "second": receive_all(p, second),
            "rest": receive_all(p, rest),
            "taken": taken,
        }
    result: dict[str, Any] = p.shared["table"]
    return result


def _texts(ms: list[Message]) -> list[str]:
    return [str(text_of(m)) for m in ms]


@rule(
    "Q01", "rules are tried in order; the first that matches is attempted", "first rule: full; second: none"
)
def q01(p: Probe) -> str:
    t = table_run(p)
    return f"first rule: {', '.join(_texts(t['first'])) or 'none'}; second: {', '.join(_texts(t['second'])) or 'none'}"


@rule("Q06", "pattern keywords default to match-all: an action-only rule takes the rest", "unknown")
def q06(p: Probe) -> str:
    return ", ".join(_texts(table_run(p)["rest"])) or "none"


@rule(
    "Q05", "only messages with a dead-letter header are processed; others stay, reported", "stays, 1 reported"
)
def q05(p: Probe) -> str:
    t = table_run(p)
    stays = t["taken"] is not None and text_of(t["taken"]) == "no header"
    return f"{'stays' if stays else 'gone'}, {t['stats'].without_header} reported"


@rule(
    "Q10",
    "the handler shares the DLQ: another reader uses it at the same time",
    "other reader got its message",
)
def q10(p: Probe) -> str:
    return "other reader got its message" if table_run(p)["taken"] is not None else "other reader got nothing"


@rule(
    "Q08",
    "a forwarded message is unchanged: body, properties, correlation id, priority, remaining expiry",
)
def q08(p: Probe) -> str:
    t = table_run(p)
    if not t["first"]:
        return "nothing forwarded"
    fwd, original = t["first"][0], t["original"]
    differ = [
        name
        for name, a, b in (
            ("body", text_of(fwd), text_of(original)),
            ("property n", fwd.get_int_property("n") if fwd.property_exists("n") else None, 5),
            ("correlation id", fwd.get_jms_correlation_id(), original.get_jms_correlation_id()),
            ("priority", fwd.get_jms_priority(), original.get_jms_priority()),
            ("delivery mode", fwd.get_jms_delivery_mode(), original.get_jms_delivery_mode()),
        )
        if a != b
    ]
    if abs(fwd.get_jms_expiration() - original.get_jms_expiration()) >= 200:
        differ.append("expiration")
    # still counting down; a tenth either way of the original's (the expiration check above)
    if not 0 < fwd.get_remaining_expiry() <= original.get_remaining_expiry() + 2:
        differ.append("remaining expiry")
    return OK if not differ else "changed: " + ", ".join(differ)


@rule(
    "Q02",
    "a failing rule is attempted RETRY times; then (Q03) the next matching rule",
    "2 attempts, then the next rule",
)
def q02(p: Probe) -> str:
    admin = p.needs_admin()
    dlq, full, manual = p.named_queue("DLQ"), p.named_queue("FULL"), p.named_queue("REST")
    admin.define_queue(full, max_depth=0)
    try:
        dead(p, dlq, "retried", MQRC.Q_FULL, dest_q=full.name)
        table = f"REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)\nACTION(FWD) FWDQ({manual.name})"
        with quiet():
            stats = DLQHandler(p.factory, dlq.name, table, wait=False, retry_interval_s=0.1).run()
    finally:
        admin.delete(full)
    moved = _texts(receive_all(p, manual))
    p.shared["retry"] = moved
    return f"{stats.failed_attempts} attempts, then {'the next rule' if moved == ['retried'] else moved}"


@rule("Q03", "when a rule's attempts are used up, the next matching rule is tried", "next rule: retried")
def q03(p: Probe) -> str:
    if "retry" not in p.shared:
        q02.check(p)
    return f"next rule: {', '.join(p.shared['retry']) or 'none'}"


@rule("Q04", "when no rule matches, IGNORE applies and the message stays", "ignored, stays")
def q04(p: Probe) -> str:
    dlq, elsewhere = p.named_queue("DLQ"), p.named_queue("FIRST")
    dead(p, dlq, "unmatched", MQRC.UNKNOWN_OBJECT_NAME)
    table = f"REASON(MQRC_Q_FULL) ACTION(FWD) FWDQ({elsewhere.name})"
    with quiet():
        stats = DLQHandler(p.factory, dlq.name, table, wait=False).run()
    left = _texts(receive_all(p, dlq))
    return f"{'ignored' if stats.ignored == 1 else f'{stats.ignored} ignored'}, {'stays' if left == ['unmatched'] else left}"


@rule(
    "Q07",
    "a table with errors is refused before the handler starts; nothing is read",
    "refused, message stays",
)
def q07(p: Probe) -> str:
    dlq, target = p.named_queue("DLQ"), p.named_queue("REST")
    dead(p, dlq, "kept", MQRC.UNKNOWN_OBJECT_NAME)
    try:
        DLQHandler(p.factory, dlq.name, f"ACTION(FWD) FWDQ({target.name}) RETRY(x)", wait=False).run()
        refused = "started"
    except RulesTableError:
        refused = "refused"
    left = _texts(receive_all(p, dlq))
    return f"{refused}, {'message stays' if left == ['kept'] else left}"


@rule(
    "Q11", "several handlers on one DLQ with one table: each message handled once", "20 forwarded, each once"
)
def q11(p: Probe) -> str:
    dlq, target = p.named_queue("DLQ"), p.named_queue("REST")
    for i in range(20):
        dead(p, dlq, str(i), MQRC.UNKNOWN_OBJECT_NAME)
    table = f"ACTION(FWD) FWDQ({target.name})"
    handlers = [DLQHandler(p.factory, dlq.name, table, wait=False) for _ in range(2)]
    threads = [threading.Thread(target=h.run, daemon=True) for h in handlers]
    with quiet():
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    got = sorted(_texts(receive_all(p, target)), key=int)
    forwarded = sum(h.stats.forwarded for h in handlers)
    if got == [str(i) for i in range(20)] and forwarded == 20:
        return "20 forwarded, each once"
    return f"{len(got)} arrived ({len(set(got))} distinct), {forwarded} forwarded"


unobservable(
    "Q09",
    "a property of the rules-table parser alone, which reads no provider (tests/unit/test_dlq_rules.py)",
)
