"""The conformance kit's machinery: rules, rows, the probe a rule runs with, and the runner.

A rule is one behaviour ID of docs/catalogue.md with IBM MQ's expected outcome, written as the
text its check returns when the provider behaves as IBM MQ does. A check returns what it
observed (the expected text, or what differed), or raises :class:`Skip` with the reason it
cannot be tried here. Expectations are IBM MQ's and are never rewritten for a provider.

Each rule runs once per delay mode, so each (ID, mode) is one row. Rules make what they use
on the provider: temporary queues and topics (gone when the run's connection closes) where
one connection is enough; named ``CONFORMANCE.<tag>.*`` queues, drained, where another
connection (a DLQ handler) must reach them; the existing queue ``queue=`` names where the
provider does not create queues on demand.
"""

from __future__ import annotations

import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from typing import Any

from pyjms.api.constants import AUTO_ACKNOWLEDGE
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue, Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.api.message import Message, TextMessage
from pyjms.bridge.contract import SEND_DELAY_NATIVE
from pyjms.delay import DelayMechanism, delay_mechanism
from pyjms.delay.mechanism import delay_works, scheduler_works
from pyjms.delay.processor_ping import processor_answers
from pyjms.errors import JMSRuntimeException
from pyjms.providers.activemq.admin import AttributeCache, request
from pyjms.rules.attributes import Attributes, QueueAttributes, TopicAttributes

OK = "ok"
PASS, FAIL, SKIP = "pass", "fail", "skip"
#: the delay modes a provider may offer, in the order rows are reported
DELAY_MODES = ("native", "scheduler", "staging")
#: what a run uses on the provider, by name
PREFIX = "CONFORMANCE"


class Skip(Exception):
    """The rule cannot be tried on this provider or in this mode; the text says why."""


@dataclass(frozen=True)
class Rule:
    id: str
    behaviour: str
    expected: str
    check: Callable[[Probe], str]


@dataclass(frozen=True)
class Unobservable:
    """A behaviour ID the kit has no rule for, and why a client cannot observe it."""

    id: str
    reason: str


@dataclass
class Row:
    """One rule in one delay mode: the keys of ``pyjms conformance --json``."""

    id: str
    behaviour: str
    mode: str
    provider: str
    expected: str
    observed: str
    result: str  # pass, fail or skip
    reason: str  # why it was skipped or failed; "" for a pass
    seconds: float

    @property
    def name(self) -> str:
        """The row's name by ID and mode, as JUnit and pytest show it: ``D06[staging]``."""
        return f"{self.id}[{self.mode}]"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


RULES: list[Rule] = []
UNOBSERVABLE: list[Unobservable] = []


def _order(rule_id: str) -> tuple[int, int]:
    return ("EDBQ".index(rule_id[0]), int(rule_id[1:]))


def rule(rule_id: str, behaviour: str, expected: str = OK) -> Callable[[Callable[[Probe], str]], Rule]:
    """Registers a check as the rule for ``rule_id``."""

    def register(check: Callable[[Probe], str]) -> Rule:
        r = Rule(rule_id, behaviour, expected, check)
        assert all(x.id != rule_id for x in RULES), f"two rules for {rule_id}"
        RULES.append(r)
        RULES.sort(key=lambda x: _order(x.id))
        return r

    return register


def unobservable(rule_id: str, reason: str) -> None:
    UNOBSERVABLE.append(Unobservable(rule_id, reason))
    UNOBSERVABLE.sort(key=lambda x: _order(x.id))


def text_of(m: Message | None) -> str | None:
    """A text message's body; None for no message or another kind."""
    return m.get_text() if isinstance(m, TextMessage) else None


def reason_of(fn: Callable[[], object]) -> str:
    """'ok', or the MQRC name (else the class and text) of the pyjms error ``fn`` raised."""
    try:
        fn()
    except JMSRuntimeException as e:
        return e.reason_name or f"{type(e).__name__}: {e}"
    return OK


def factory_for(factory: ConnectionFactory, mode: str) -> ConnectionFactory:
    """A factory like ``factory`` (same provider, credentials, properties) in delay mode ``mode``."""
    return ConnectionFactory(
        factory.url if factory.factory_class is None else (factory.url or None),
        factory.user,
        factory.password,
        client_id=factory.client_id,
        factory_class=factory.factory_class,
        properties=factory.properties,
        classpath=factory.classpath,
        delivery_delay=mode,
        staging_queue=factory.staging_queue,
        provider=factory.provider_name_hint,
        create_destinations=factory.create_destinations,
    )


def offered_modes(factory: ConnectionFactory) -> list[str]:
    """The delay modes this provider offers, each tried as ``auto`` would try it (a delayed
    message must arrive, not early; a delay processor must answer); ``["none"]`` if none."""
    offered = []
    with factory_for(factory, "none").create_context() as ctx:
        channel = ctx.channel
        worth = ctx.provider.delay_mechanisms(ctx)
        for mode in DELAY_MODES:
            if mode not in worth:
                continue
            if mode == "native":
                works = channel.supports_native_delay() and (
                    channel.native_delay_known() or delay_works(ctx, SEND_DELAY_NATIVE)
                )
            elif mode == "scheduler":
                works = channel.scheduler_markable() and (channel.scheduler_known() or scheduler_works(ctx))
            else:
                works = processor_answers(ctx)
            if works:
                offered.append(mode)
    return offered or ["none"]


class Admin:
    """A pyjms broker's admin service, asked on the run's own connection (pyjms's Admin opens
    a connection per request, which a run of some thirty requests per mode feels)."""

    def __init__(self, ctx: JMSContext) -> None:
        self.ctx = ctx

    def _ask(self, op: str, destination: Queue | Topic, **extra: Any) -> Attributes | None:
        return request(self.ctx, op, destination, AttributeCache.TIMEOUT_MS, **extra)

    def define_queue(self, queue: Queue, **attributes: Any) -> Attributes | None:
        return self._ask("define", queue, kind="queue", attributes=asdict(QueueAttributes(**attributes)))

    def define_topic(self, topic: Topic, **attributes: Any) -> Attributes | None:
        return self._ask("define", topic, kind="topic", attributes=asdict(TopicAttributes(**attributes)))

    def describe(self, destination: Queue | Topic) -> Attributes | None:
        return self._ask("describe", destination)

    def delete(self, destination: Queue | Topic) -> None:
        self._ask("delete", destination)

    def remove(self, destination: Queue | Topic) -> None:
        self._ask("remove", destination)


@dataclass
class Probe:
    """What a rule runs with: the mode's factory and a context on it, the mechanism that mode
    means here, the provider's admin service (if any), and names that are this run's own."""

    factory: ConnectionFactory
    mode: str
    mechanism: DelayMechanism
    provider: str
    tag: str
    admin: Admin | None
    existing_queue: str | None
    #: what several rules observe from one experiment, kept for the run (per mode)
    shared: dict[str, Any] = field(default_factory=dict)
    stack: ExitStack = field(default_factory=ExitStack)
    named: list[Queue] = field(default_factory=list)
    #: every named destination the run used, deleted at its end where the admin service can
    used: list[Queue | Topic] = field(default_factory=list)

    @property
    def ctx(self) -> JMSContext:
        ctx = self.shared.get("__ctx__")
        if ctx is None:
            ctx = self.shared["__ctx__"] = self.factory.create_context()
        assert isinstance(ctx, JMSContext)
        return ctx

    def context(self, session_mode: int = AUTO_ACKNOWLEDGE) -> JMSContext:
        """Another session on the run's connection, closed after the rule."""
        return self.stack.enter_context(self.ctx.create_context(session_mode))

    def queue(self) -> Queue:
        """A queue for this rule alone: a temporary one, or the ``--queue`` the run was given."""
        if self.existing_queue is not None:
            return Queue(self.existing_queue)
        return self.ctx.create_temporary_queue()

    def topic(self) -> Topic:
        return self.ctx.create_temporary_topic()

    def named_queue(self, what: str) -> Queue:
        """A named queue, for a reader on another connection (a DLQ handler) or for attributes
        (the admin service defines none on a temporary queue); drained after the rule. The same
        ``what`` gives the same queue for the whole run, so a run leaves few names behind."""
        if self.existing_queue is not None:
            raise Skip("needs queues of its own (the provider does not create them on demand)")
        q = Queue(f"{PREFIX}.{self.tag}.{what}")
        if q not in self.named:
            self.named.append(q)
        if q not in self.used:
            self.used.append(q)
        return q

    def delay_target(self, what: str) -> Queue:
        """A queue for delayed messages: the ``--queue``, or a named one, which a reader on a
        connection of its own may take from (only the connection that made a temporary queue
        may consume from it)."""
        if self.existing_queue is not None:
            return Queue(self.existing_queue)
        return self.named_queue(what)

    def named_topic(self, what: str) -> Topic:
        """A named topic (a pyjms broker's admin service knows its subscribers and attributes)."""
        if self.existing_queue is not None:
            raise Skip("needs topics of its own (the provider does not create them on demand)")
        t = Topic(f"{PREFIX}.{self.tag}.{what}")
        if t not in self.used:
            self.used.append(t)
        return t

    def needs_delay(self) -> None:
        if not self.mechanism.available:
            raise Skip(f"no {self.mode} delay here (D04)")

    def needs_staging(self) -> None:
        if self.mechanism is not DelayMechanism.STAGING:
            raise Skip("only pyjms's delay processor holds a message here: staging mode")

    def needs_admin(self) -> Admin:
        if self.admin is None:
            raise Skip("no pyjms admin service on this broker to define destination attributes")
        return self.admin

    def cleanup(self) -> None:
        """Closes the rule's sessions; empties its named queues and the --queue."""
        self.stack.close()
        self.stack = ExitStack()
        left = [*self.named, *([Queue(self.existing_queue)] if self.existing_queue else [])]
        self.named = []
        for q in left:  # on the run's connection: a connection per rule cost a tenth or more
            with self.ctx.create_consumer(q) as consumer:
                while consumer.receive(100) is not None:
                    pass

    def close(self) -> None:
        """Ends the run: its rule's sessions closed, its named queues emptied, then deleted
        where the broker has pyjms's admin service (JMS has no call that deletes a queue)."""
        self.cleanup()
        if self.admin is not None:
            for d in self.used:
                try:
                    self.admin.remove(d)
                except JMSRuntimeException:
                    pass  # one that cannot be deleted stays, empty (pyjms queues lists it)
        self.used = []
        ctx = self.shared.pop("__ctx__", None)
        if isinstance(ctx, JMSContext):
            ctx.close()


def unobserved(u: Unobservable) -> Rule:
    """An ID with no rule, asked for by name: a row that is skipped, giving the reason."""

    def check(p: Probe) -> str:
        raise Skip(f"not observable through a provider: {u.reason}")

    return Rule(u.id, "not observable through a provider", "-", check)


def select(rules: Sequence[str] | None) -> list[Rule]:
    """The rules for these IDs (all when None), in catalogue order. An ID with no rule, because
    no client can observe it, gives a row that is skipped with the reason; an ID the catalogue
    does not have is an error."""
    if not rules:
        return list(RULES)
    wanted = {r.upper() for r in rules}
    skipped = {u.id: u for u in UNOBSERVABLE}
    unknown = wanted - {r.id for r in RULES} - set(skipped)
    if unknown:
        raise ValueError(f"no such behaviour ID: {', '.join(sorted(unknown))} (pyjms conformance --list)")
    chosen = [r for r in RULES if r.id in wanted] + [unobserved(skipped[i]) for i in wanted if i in skipped]
    return sorted(chosen, key=lambda r: _order(r.id))


def _admin(ctx: JMSContext) -> Admin | None:
    """The broker's admin service, if it has one (a pyjms broker)."""
    admin = Admin(ctx)
    try:
        admin.describe(Queue(f"{PREFIX}.ADMIN.PROBE"))
    except JMSRuntimeException:
        return None
    return admin


class Session:
    """One mode's run: its probe, opened once, closed at the end."""

    def __init__(self, factory: ConnectionFactory, mode: str, queue: str | None, tag: str) -> None:
        self.factory = factory_for(factory, mode)
        self.mode = mode
        with self.factory.create_context() as ctx:
            mechanism = delay_mechanism(ctx)
            provider = ctx.provider_name
        self.probe = Probe(self.factory, mode, mechanism, provider, tag, None, queue)
        if queue is None:
            self.probe.admin = _admin(self.probe.ctx)

    def run(self, r: Rule) -> Row:
        started = time.monotonic()
        try:
            observed = r.check(self.probe)
            result = PASS if observed == r.expected else FAIL
            reason = "" if result == PASS else f"expected {r.expected!r}, observed {observed!r}"
        except Skip as s:
            observed, result, reason = "skipped", SKIP, str(s)
        except Exception as e:  # a rule's own failure is that rule's row, never the run's end
            observed, result = f"{type(e).__name__}: {e}", FAIL
            reason = "".join(traceback.format_exception_only(e)).strip()
        finally:
            try:
                self.probe.cleanup()
            except JMSRuntimeException:
                pass
        return Row(
            r.id,
            r.behaviour,
            self.mode,
            self.probe.provider,
            r.expected,
            observed,
            result,
            reason,
            round(time.monotonic() - started, 3),
        )

    def close(self) -> None:
        self.probe.close()


def run_iter(
    factory: ConnectionFactory,
    modes: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    *,
    queue: str | None = None,
) -> Iterator[Row]:
    """The rows as each is run (see :func:`run`), one mode after the other. (Modes run side by
    side failed B06 and E14 in a full run: two modes' marks and expiry reads under one load.)"""
    chosen = select(rules)
    for mode in modes or offered_modes(factory):
        # each mode's own tag: its named queues are its own (and a tag marks what a mode's
        # rules put on the broker's own dead-letter queue, E09's take_back)
        session = Session(factory, mode, queue, uuid.uuid4().hex[:8])
        try:
            for r in chosen:
                yield session.run(r)
        finally:
            session.close()


def run(
    factory: ConnectionFactory,
    modes: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    *,
    queue: str | None = None,
) -> list[Row]:
    """Runs the kit against ``factory``'s provider: every rule (or those of the IDs in
    ``rules``) in every delay mode of ``modes`` (default: every mode the provider offers,
    :func:`offered_modes`), one row per rule and mode. ``queue`` names an existing queue, for
    providers that do not create queues on demand (IBM MQ)."""
    return list(run_iter(factory, modes, rules, queue=queue))
