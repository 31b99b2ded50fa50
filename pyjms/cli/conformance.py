"""``pyjms conformance``: the delivery-delay and expiry restrictions, run against a provider.

Each row is one rule of IBM MQ's restrictions list (spec 002, 000), the reason IBM MQ gives,
what this provider did through pyjms, and whether they agree. Expectations are IBM MQ's and
are never rewritten: where the chosen delay mechanism is unavailable (e.g. ``native`` on a
client without setDeliveryDelay), a delayed send is MQRC_FUNCTION_NOT_SUPPORTED (D04, its own
row) before any other delay rule can apply, so those rules are skipped, saying so.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pyjms.api.constants import PERSISTENT, SESSION_TRANSACTED
from pyjms.api.destination import Queue, Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.bridge.contract import STAGING_QUEUE
from pyjms.cli.common import Subcommands, broker_url, subcommand
from pyjms.cli.messaging import name_values
from pyjms.delay import delay_mechanism
from pyjms.errors import JMSRuntimeException
from pyjms.providers.activemq import Admin
from pyjms.providers.activemq.admin import AttributeCache
from pyjms.reasons import MQRC

OK = "ok"
SKIPPED = "skipped"
NO_ADMIN = f"{SKIPPED}: no pyjms admin service on this broker"
#: how far apart a client's own readings of the clock for one send's headers may be (D17)
CLOCK_READS_MS = 50


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


def run(
    url: str | None,
    mode: str = "auto",
    *,
    staging_queue: str = STAGING_QUEUE,
    connect: Mapping[str, Any] | None = None,
    queue: str | None = None,
) -> list[Row]:
    """The rows for one delay mode. ``connect`` holds any other ConnectionFactory arguments (user,
    password, factory_class, properties, classpath), e.g. to reach IBM MQ or Artemis through
    their own JMS clients. ``queue`` names an existing queue to use, for brokers that do not
    create queues on demand (IBM MQ); by default each run makes its own CONFORMANCE.<tag>."""

    def connection_factory(delivery_delay: str) -> ConnectionFactory:
        return ConnectionFactory(
            url, delivery_delay=delivery_delay, staging_queue=staging_queue, **(connect or {})
        )

    factory = connection_factory(mode)
    tag = uuid.uuid4().hex[:8]
    rows: list[Row] = []
    with factory.create_context() as ctx:
        mechanism = delay_mechanism(ctx)
        unavailable = not mechanism.available
        no_delay = f"{SKIPPED}: no {mode} delay here (D04)"  # the D04 row shows what a delayed send gets

        def tried(fn: Callable[[], object]) -> str:
            """What a rule that needs a delayed send observed; skipped where no delay can be sent."""
            return no_delay if unavailable else _reason(fn)

        q = ctx.create_queue(queue or f"CONFORMANCE.{tag}")
        producer = ctx.create_producer

        rows.append(
            Row(
                "E08",
                "negative time-to-live",
                MQRC.EXPIRY_ERROR.mq_name,
                _reason(lambda: producer().set_time_to_live(-1)),
            )
        )
        rows.append(
            Row(
                "D06",
                "TTL 1000 ms, then delay 2000 ms",
                MQRC.EXPIRY_ERROR.mq_name,
                _reason(lambda: producer().set_time_to_live(1000).set_delivery_delay(2000)),
            )
        )
        rows.append(
            Row(
                "D06",
                "delay 2000 ms, then TTL 1000 ms",
                MQRC.EXPIRY_ERROR.mq_name,
                tried(lambda: producer().set_delivery_delay(2000).set_time_to_live(1000)),
            )
        )
        rows.append(
            Row(
                "D06",
                "delay equal to TTL is allowed",
                OK,
                tried(lambda: producer().set_delivery_delay(1000).set_time_to_live(1000)),
            )
        )

        def retained() -> None:
            m = ctx.create_text_message("retained")
            m.set_int_property("JMS_IBM_RETAIN", 1)
            producer().set_delivery_delay(1000).send(ctx.create_topic(f"CONFORMANCE.{tag}"), m)

        rows.append(Row("D07", "delayed retained publication", MQRC.OPTIONS_ERROR.mq_name, tried(retained)))
        rows.append(
            Row(
                "D08",
                "delayed grouped message (JMSXGroupID)",
                MQRC.OPTIONS_ERROR.mq_name,
                tried(
                    lambda: producer().set_delivery_delay(1000).set_property("JMSXGroupID", "g").send(q, "x")
                ),
            )
        )
        none = connection_factory("none")
        with none.create_context() as plain:
            rows.append(
                Row(
                    "D04",
                    "delay with no mechanism",
                    MQRC.FUNCTION_NOT_SUPPORTED.mq_name,
                    _reason(lambda: plain.create_producer().set_delivery_delay(1000)),
                )
            )

        # rules on the target's attributes: a pyjms broker's admin service defines them
        # as long as a delayed send's own check waits (AttributeCache.TIMEOUT_MS): a first
        # request over AMQP on a loaded machine took more than the 2 s this once was
        admin = Admin(factory, timeout_ms=AttributeCache.TIMEOUT_MS)
        try:
            admin.describe(q)
            have_admin = True
        except JMSRuntimeException:
            have_admin = False
        targets: list[tuple[str, str, MQRC, Callable[[Queue], object], str]] = [
            (
                "D05",
                "delayed put to a clustered queue with DEFBIND(OPEN)",
                MQRC.OPTIONS_ERROR,
                lambda t: admin.define_queue(t, clustered=True, default_bind="OPEN"),
                "x",
            ),
            (
                "D22",
                "delayed put to a put-inhibited queue",
                MQRC.PUT_INHIBITED,
                lambda t: admin.define_queue(t, put_enabled=False),
                "x",
            ),
            (
                "D22",
                "delayed put larger than MAXMSGL",
                MQRC.MSG_TOO_BIG_FOR_Q,
                lambda t: admin.define_queue(t, max_msg_length=10),
                "x" * 100,
            ),
            (
                "D22",
                "delayed put to a full queue",
                MQRC.Q_FULL,
                lambda t: admin.define_queue(t, max_depth=0),
                "x",
            ),
        ]
        for i, (rule, text, reason, define, body) in enumerate(targets):
            if not have_admin:
                rows.append(Row(rule, text, reason.mq_name, NO_ADMIN))
                continue
            target = Queue(f"CONFORMANCE.{tag}.{i}")
            define(target)
            rows.append(
                Row(
                    rule,
                    text,
                    reason.mq_name,
                    tried(lambda: producer().set_delivery_delay(1000).send(target, body)),
                )
            )
        if have_admin:
            topic = Topic(f"CONFORMANCE.{tag}.T")
            admin.define_topic(topic, persistent_delivery="ALLDUR")
            rows.append(
                Row(
                    "D23",
                    "delayed persistent publish, PMSGDLV(ALLDUR)",
                    MQRC.PUBLICATION_FAILURE.mq_name,
                    tried(
                        lambda: (
                            producer().set_delivery_delay(1000).set_delivery_mode(PERSISTENT).send(topic, "x")
                        )
                    ),
                )
            )
        else:
            rows.append(
                Row(
                    "D23",
                    "delayed persistent publish, PMSGDLV(ALLDUR)",
                    MQRC.PUBLICATION_FAILURE.mq_name,
                    NO_ADMIN,
                )
            )

        if unavailable:
            rows += [Row(rule, text, OK, no_delay) for rule, text in BEHAVIOUR.items()]
        else:
            rows.extend(_behaviour(factory, tag, queue or f"CONFORMANCE.{tag}.B"))
    return rows


#: what a delayed message does once sent, each proven by a real delayed delivery
BEHAVIOUR = {
    "D10": "delayed message invisible until commit",
    "D01": "delivered, not before send time + delay",
    "D17": "expiration counts from the send",
}


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
        rows.append(Row("D10", BEHAVIOUR["D10"], OK, OK if early is None else "visible before commit"))
        tx.commit()
        got = consumer.receive(5000)
        received_at = int(time.time() * 1000)
        if got is None:
            observed = "not delivered"
        elif received_at < m.get_jms_delivery_time():
            observed = f"{m.get_jms_delivery_time() - received_at} ms early"
        else:
            observed = OK
        rows.append(Row("D01", BEHAVIOUR["D01"], OK, observed))
        if got is not None:
            # send time + TTL, never + the delay (800 ms): a client may read the clock for
            # JMSExpiration a moment before JMSTimestamp (Artemis's does), so allow it that moment
            exp_ok = 0 <= m.get_jms_timestamp() + 5000 - got.get_jms_expiration() <= CLOCK_READS_MS
            rows.append(
                Row(
                    "D17",
                    BEHAVIOUR["D17"],
                    OK,
                    OK
                    if exp_ok
                    else f"expiration {got.get_jms_expiration() - m.get_jms_timestamp()} ms after send",
                )
            )
    return rows


def render(rows: list[Row], mode: str, mechanism: str, provider: str = "") -> str:
    width = max(len(r.description) for r in rows)
    on = f" on {provider}" if provider else ""
    lines = [
        f"pyjms conformance: delay mode {mode} (mechanism {mechanism}){on}",
        f"{'rule':5} {'behaviour':{width}} {'expected':28} {'observed':28} result",
    ]
    for r in rows:
        result = "pass" if r.passed else "skip" if r.skipped else "FAIL"
        lines.append(f"{r.rule:5} {r.description:{width}} {r.expected:28} {r.observed:28} {result}")
    skipped = sum(r.skipped for r in rows)
    failed = sum(r.failed for r in rows)
    lines.append(f"{len(rows) - skipped - failed} passed, {failed} failed, {skipped} skipped")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- the command


def run_conformance(args: argparse.Namespace) -> int:
    if args.factory_class is None:
        args.url = broker_url(args)  # the factory class's own properties may name the broker instead
    connect = {
        "user": args.user,
        "password": args.password,
        "factory_class": args.factory_class,
        "properties": name_values(args.property, "--property"),
        "classpath": args.classpath or (),
    }
    failed = 0
    for mode in args.mode or ["auto"]:  # --mode is repeatable; none given: auto
        rows = run(args.url, mode, staging_queue=args.staging_queue, connect=connect, queue=args.queue)
        factory = ConnectionFactory(
            args.url, delivery_delay=mode, staging_queue=args.staging_queue, **connect
        )
        with factory.create_context() as ctx:
            mechanism, provider = delay_mechanism(ctx).value, ctx.provider_name
        print(render(rows, mode, mechanism, provider), flush=True)
        failed += sum(r.failed for r in rows)
    return 1 if failed else 0


def add_parser(sub: Subcommands) -> None:
    """Adds ``pyjms conformance``."""
    c = subcommand(sub, "conformance", "run IBM MQ's delay/expiry restrictions against a provider")
    c.add_argument(
        "--url",
        default=None,
        help="provider URL (ActiveMQ's tcp://, Artemis's artemis+tcp://, amqp://; "
        "default PYJMS_URL), or the factory's brokerURL --property",
    )
    c.add_argument("--user", default=None, help="user name for the broker")
    c.add_argument("--password", default=None, help="password for the broker")
    c.add_argument(
        "--factory-class",
        default=None,
        help="another provider's ConnectionFactory class, e.g. com.ibm.mq.jakarta.jms.MQConnectionFactory",
    )
    c.add_argument(
        "--property", action="append", metavar="NAME=VALUE", help="factory bean property (repeatable)"
    )
    c.add_argument(
        "--classpath", action="append", metavar="JAR", help="the provider's client jars (repeatable)"
    )
    c.add_argument(
        "--mode",
        action="append",
        choices=["auto", "native", "scheduler", "staging", "none"],
        help="delay mechanism(s) to test (repeatable; default: auto)",
    )
    c.add_argument(
        "--staging-queue", default=STAGING_QUEUE, help=f"the staging queue (default {STAGING_QUEUE})"
    )
    c.add_argument(
        "--queue",
        default=None,
        help="an existing queue to use, where queues are not created on demand (IBM MQ: DEV.QUEUE.1)",
    )
    c.set_defaults(run=run_conformance)
