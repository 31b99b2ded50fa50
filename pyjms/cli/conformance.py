"""``pyjms conformance``: the delivery-delay and expiry restrictions, run against a provider.

Each row is one rule of IBM MQ's restrictions list (spec 002, 000), the reason IBM MQ gives,
what this provider did through pyjms, and whether they agree. Where the chosen delay
mechanism is unavailable (e.g. ``native`` on a client without setDeliveryDelay), a delayed
send is MQRC_FUNCTION_NOT_SUPPORTED (D04) before any other delay rule can apply, and the
expected column says so.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pyjms.api.constants import PERSISTENT, SESSION_TRANSACTED
from pyjms.api.context import ConnectionFactory
from pyjms.api.destination import Queue, Topic
from pyjms.bridge.contract import STAGING_QUEUE
from pyjms.delay import delay_mechanism
from pyjms.errors import JMSRuntimeException
from pyjms.providers.activemq import Admin
from pyjms.reasons import MQRC

OK = "ok"
SKIPPED = "skipped"
NO_ADMIN = f"{SKIPPED}: no pyjms admin service on this broker"


@dataclass
class Row:
    rule: str
    description: str
    expected: str
    observed: str

    @property
    def skipped(self) -> bool:
        """The rule could not be tried here (e.g. no pyjms admin service to define attributes)."""
        return self.observed.startswith(SKIPPED)

    @property
    def passed(self) -> bool:
        return self.expected == self.observed

    @property
    def failed(self) -> bool:
        return not (self.passed or self.skipped)


def _reason(fn: Callable[[], object]) -> str:
    """'ok', or the MQRC name of the pyjms error fn raised."""
    try:
        fn()
    except JMSRuntimeException as e:
        return e.reason_name or f"{type(e).__name__}: {e}"
    return OK


def run(url: str | None, mode: str = "auto", *, staging_queue: str = STAGING_QUEUE,
        connect: Mapping[str, Any] | None = None, queue: str | None = None) -> list[Row]:
    """The rows for one delay mode. ``connect`` holds any other ConnectionFactory arguments (user,
    password, factory_class, properties, classpath), e.g. to reach IBM MQ or Artemis through
    their own JMS clients. ``queue`` names an existing queue to use, for brokers that do not
    create queues on demand (IBM MQ); by default each run makes its own CONFORMANCE.<tag>."""
    def connection_factory(delivery_delay: str) -> ConnectionFactory:
        return ConnectionFactory(url, delivery_delay=delivery_delay, staging_queue=staging_queue,
                                       **(connect or {}))

    factory = connection_factory(mode)
    tag = uuid.uuid4().hex[:8]
    rows: list[Row] = []
    with factory.create_context() as ctx:
        mechanism = delay_mechanism(ctx)
        unavailable = not mechanism.available

        def delayed(expected: MQRC | str) -> str:
            """What a rule that needs a delayed send expects under this mechanism."""
            if unavailable:
                return MQRC.FUNCTION_NOT_SUPPORTED.mq_name
            return expected.mq_name if isinstance(expected, MQRC) else expected

        q = ctx.create_queue(queue or f"CONFORMANCE.{tag}")
        producer = ctx.create_producer

        rows.append(Row("E08", "negative time-to-live", MQRC.EXPIRY_ERROR.mq_name,
                        _reason(lambda: producer().set_time_to_live(-1))))
        rows.append(Row("D06", "TTL 1000 ms, then delay 2000 ms", MQRC.EXPIRY_ERROR.mq_name,
                        _reason(lambda: producer().set_time_to_live(1000).set_delivery_delay(2000))))
        rows.append(Row("D06", "delay 2000 ms, then TTL 1000 ms", delayed(MQRC.EXPIRY_ERROR),
                        _reason(lambda: producer().set_delivery_delay(2000).set_time_to_live(1000))))
        rows.append(Row("D06", "delay equal to TTL is allowed", delayed(OK),
                        _reason(lambda: producer().set_delivery_delay(1000).set_time_to_live(1000))))

        def retained() -> None:
            m = ctx.create_text_message("retained")
            m.set_int_property("JMS_IBM_RETAIN", 1)
            producer().set_delivery_delay(1000).send(ctx.create_topic(f"CONFORMANCE.{tag}"), m)

        rows.append(Row("D07", "delayed retained publication", delayed(MQRC.OPTIONS_ERROR), _reason(retained)))
        rows.append(Row("D08", "delayed grouped message (JMSXGroupID)", delayed(MQRC.OPTIONS_ERROR),
                        _reason(lambda: producer().set_delivery_delay(1000).set_property("JMSXGroupID", "g").send(q, "x"))))
        none = connection_factory("none")
        with none.create_context() as plain:
            rows.append(Row("D04", "delay with no mechanism", MQRC.FUNCTION_NOT_SUPPORTED.mq_name,
                            _reason(lambda: plain.create_producer().set_delivery_delay(1000))))

        # rules on the target's attributes: a pyjms broker's admin service defines them
        admin = Admin(factory, timeout_ms=2000)
        try:
            admin.describe(q)
            have_admin = True
        except JMSRuntimeException:
            have_admin = False
        targets = [
            ("D05", "delayed put to a clustered queue with DEFBIND(OPEN)", MQRC.OPTIONS_ERROR,
             lambda t: admin.define_queue(t, clustered=True, default_bind="OPEN"), "x"),
            ("D22", "delayed put to a put-inhibited queue", MQRC.PUT_INHIBITED,
             lambda t: admin.define_queue(t, put_enabled=False), "x"),
            ("D22", "delayed put larger than MAXMSGL", MQRC.MSG_TOO_BIG_FOR_Q,
             lambda t: admin.define_queue(t, max_msg_length=10), "x" * 100),
            ("D22", "delayed put to a full queue", MQRC.Q_FULL,
             lambda t: admin.define_queue(t, max_depth=0), "x"),
        ]
        for i, (rule, text, reason, define, body) in enumerate(targets):
            if not have_admin:
                rows.append(Row(rule, text, reason.mq_name, NO_ADMIN))
                continue
            target = Queue(f"CONFORMANCE.{tag}.{i}")
            define(target)
            rows.append(Row(rule, text, delayed(reason),
                            _reason(lambda: producer().set_delivery_delay(1000).send(target, body))))
        if have_admin:
            topic = Topic(f"CONFORMANCE.{tag}.T")
            admin.define_topic(topic, persistent_delivery="ALLDUR")
            rows.append(Row("D23", "delayed persistent publish, PMSGDLV(ALLDUR)", delayed(MQRC.PUBLICATION_FAILURE),
                            _reason(lambda: producer().set_delivery_delay(1000).set_delivery_mode(PERSISTENT).send(topic, "x"))))
        else:
            rows.append(Row("D23", "delayed persistent publish, PMSGDLV(ALLDUR)", MQRC.PUBLICATION_FAILURE.mq_name,
                            NO_ADMIN))

        if not unavailable:
            rows.extend(_behaviour(factory, tag, queue or f"CONFORMANCE.{tag}.B"))
    return rows


def _behaviour(factory: ConnectionFactory, tag: str, queue: str) -> list[Row]:
    """D01, D10, D17: what a delayed message does once sent."""
    rows = []
    with factory.create_context(SESSION_TRANSACTED) as tx, factory.create_context() as reader:
        q = tx.create_queue(queue)
        # the queue may be shared (an existing one on IBM MQ): only this run's message counts
        consumer = reader.create_consumer(q, f"pyjms_conformance = '{tag}'")
        m = tx.create_text_message("due in 800 ms")
        m.set_string_property("pyjms_conformance", tag)
        tx.create_producer().set_delivery_delay(800).set_time_to_live(5000).send(q, m)
        time.sleep(1.0)
        early = consumer.receive(100)
        rows.append(Row("D10", "delayed message invisible until commit", OK, OK if early is None else "visible before commit"))
        tx.commit()
        got = consumer.receive(5000)
        received_at = int(time.time() * 1000)
        if got is None:
            observed = "not delivered"
        elif received_at < m.get_jms_delivery_time():
            observed = f"{m.get_jms_delivery_time() - received_at} ms early"
        else:
            observed = OK
        rows.append(Row("D01", "delivered, not before send time + delay", OK, observed))
        if got is not None:
            exp_ok = got.get_jms_expiration() == m.get_jms_timestamp() + 5000
            rows.append(Row("D17", "expiration counts from the send", OK,
                            OK if exp_ok else f"expiration {got.get_jms_expiration() - m.get_jms_timestamp()} ms after send"))
    return rows


def render(rows: list[Row], mode: str, mechanism: str) -> str:
    width = max(len(r.description) for r in rows)
    lines = [f"pyjms conformance: delay mode {mode} (mechanism {mechanism})",
             f"{'rule':5} {'behaviour':{width}} {'expected':28} {'observed':28} result"]
    for r in rows:
        result = "pass" if r.passed else "skip" if r.skipped else "FAIL"
        lines.append(f"{r.rule:5} {r.description:{width}} {r.expected:28} {r.observed:28} {result}")
    skipped = sum(r.skipped for r in rows)
    failed = sum(r.failed for r in rows)
    lines.append(f"{len(rows) - skipped - failed} passed, {failed} failed, {skipped} skipped")
    return "\n".join(lines)
