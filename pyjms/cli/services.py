"""The commands that run pyjms's services against a broker, or ask them: ``pyjms
delay-processor`` (and its ``--status``), ``pyjms mark-service`` and ``pyjms mark-interval``.
Any number of each service may run: the broker elects the active one."""

from __future__ import annotations

import argparse
import threading
import time

from pyjms.api.access import admins
from pyjms.api.factory import ConnectionFactory
from pyjms.bridge import jvm
from pyjms.bridge.contract import STAGING_QUEUE
from pyjms.bridge.signals import exit_status, stop_on_signals
from pyjms.broker.admin import BrokerWriteCheck
from pyjms.browse import MarkService, mark_browse_interval, set_mark_browse_interval
from pyjms.cli.common import Subcommands, add_url_options, broker_url, subcommand
from pyjms.cli.startup import interruptible, reach
from pyjms.delay.processor import DelayProcessor
from pyjms.delay.processor_ping import processor_status


def run_delay_processor(args: argparse.Namespace) -> int:
    stop = threading.Event()
    factory = ConnectionFactory(broker_url(args), args.user, args.password, staging_queue=args.staging_queue)
    jvm.start(factory.classpath, jvm.SERVICE_JVM_OPTIONS)
    reach(factory)
    if args.status:
        return print_processor_status(factory)
    # beside a pyjms broker with users, the broker says where each stager may write
    rights = BrokerWriteCheck(factory)
    may_write = rights if rights.answers() else None
    # any number may run: the broker elects the active one, the others stand by
    processor = interruptible(
        lambda: DelayProcessor(
            factory, dead_letter_queue=args.dead_letter_queue, may_write=may_write
        ).start(),
        "starting the delay processor",
    )
    stopped_by = stop_on_signals(stop.set)
    print(
        f"pyjms delay processor on {factory.url} queue {processor.staging}: running, active once the broker "
        f"elects it (any number may run: the others stand by); a progress line every "
        f"{args.report_every:g} s, Ctrl-C stops it",
        flush=True,
    )
    if may_write is not None:
        print(
            "checking each delayed message against its stager's rights, as the broker says them", flush=True
        )
    shown: tuple[bool, str | None] | None = None  # the first state is printed too
    next_report = time.monotonic() + args.report_every
    try:
        while not stop.wait(0.1):
            now = (processor.active, processor.problem)
            if now != shown:  # each change of state, at once: where an operator looks
                shown = now
                active, problem = now
                state = "active" if active else "standing by"
                print(f"{state}" + (f"; problem: {problem}" if problem else ""), flush=True)
            if time.monotonic() >= next_report:
                next_report += args.report_every
                st = processor.stats
                print(
                    f"staged {st.staged} delivered {st.delivered} expired {st.expired} failed {st.failed} "
                    f"pending slots {processor.pending_slots}",
                    flush=True,
                )
    finally:
        processor.stop()
    st = processor.stats
    print(
        f"stopped: staged {st.staged} delivered {st.delivered} expired {st.expired} failed {st.failed}",
        flush=True,
    )
    return exit_status(stopped_by)


#: pings ``pyjms delay-processor --status`` sends: each goes to one of the processors (they
#: share the control queue), so a few find the active one among those standing by
STATUS_PINGS = 6


def print_processor_status(factory: ConnectionFactory) -> int:
    """``pyjms delay-processor --status``: each processor of the staging queue that answers a
    ping, active or standing by, healthy or with its problem. 0 if an active one is healthy."""
    answers: dict[str, dict[str, object]] = {}
    with factory.create_context() as ctx:
        for _ in range(STATUS_PINGS):
            status = processor_status(ctx, 2000 if not answers else 500)
            if status is None and not answers:
                break  # a running processor, active or standing by, answers within the 2 s
            if status is not None:
                answers[str(status.get("candidate", ""))] = status
    if not answers:
        print(f"no delay processor answers on queue {factory.staging_queue} at {factory.url}", flush=True)
        return 1
    for candidate, status in sorted(answers.items()):
        state = "active" if status.get("active") else "standing by"
        health = "healthy" if status.get("healthy") else f"unhealthy: {status.get('problem')}"
        print(f"delay processor {candidate} of queue {factory.staging_queue}: {state}, {health}", flush=True)
    healthy_leader = any(s.get("active") and s.get("healthy") for s in answers.values())
    return 0 if healthy_leader else 1


def run_mark_service(args: argparse.Namespace) -> int:
    stop = threading.Event()
    factory = ConnectionFactory(broker_url(args), args.user, args.password)
    jvm.start(factory.classpath, jvm.SERVICE_JVM_OPTIONS)
    reach(factory)  # an unreachable broker: one line now, not a thread's traceback and a 30 s wait
    service = interruptible(
        lambda: MarkService(
            factory, args.mark_browse_interval, args.mark_lease, is_admin=admins(args.admin)
        ).start(),
        "starting the mark service",
    )
    stopped_by = stop_on_signals(stop.set)
    print(
        f"pyjms mark service {service.instance} on {factory.url}: "
        f"{'active' if service.active else 'standing by (another mark service is active)'}; "
        f"MsgMarkBrowseInterval {service.table.interval_ms} ms, handle lease {service.table.lease_ms} ms; "
        "Ctrl-C stops it",
        flush=True,
    )
    active = service.active
    try:
        while not stop.wait(0.25):
            if service.active != active:  # a takeover (or this one lost its broker): say so
                active = service.active
                print(
                    f"pyjms mark service {service.instance}: "
                    + (f"active (epoch {service.epoch})" if active else "standing by"),
                    flush=True,
                )
    finally:
        service.stop()
    return exit_status(stopped_by)


def run_mark_interval(args: argparse.Namespace) -> int:
    factory = ConnectionFactory(broker_url(args), args.user, args.password)
    if args.set is not None:
        value = set_mark_browse_interval(factory, args.set)
    else:
        value = mark_browse_interval(factory)
    print(f"MsgMarkBrowseInterval {value}", flush=True)
    return 0


def add_parsers(sub: Subcommands) -> None:
    """Adds ``pyjms mark-service``, ``mark-interval`` and ``delay-processor``."""
    m = subcommand(
        sub,
        "mark-service",
        "serve cooperative browse marks for a broker (any number may run: one is active, the others stand by)",
    )
    add_url_options(m)
    m.add_argument(
        "--mark-browse-interval", type=int, default=5000, help="MsgMarkBrowseInterval in ms (-1: never)"
    )
    m.add_argument("--mark-lease", type=int, default=10_000, help="ms after which a silent handle's marks go")
    m.add_argument(
        "--admin",
        action="append",
        default=[],
        metavar="USER",
        help="a user who may change the interval (repeatable; by default only where the broker names no users)",
    )
    m.set_defaults(run=run_mark_service)

    mi = subcommand(sub, "mark-interval", "show (or --set) a broker's MsgMarkBrowseInterval")
    add_url_options(mi)
    mi.add_argument("--set", type=int, default=None, metavar="MS", help="new interval in ms (-1: never)")
    mi.set_defaults(run=run_mark_interval)

    d = subcommand(sub, "delay-processor", "run the staging-queue delay processor against a broker")
    add_url_options(d)
    d.add_argument(
        "--staging-queue", default=STAGING_QUEUE, help=f"the staging queue (default {STAGING_QUEUE})"
    )
    d.add_argument(
        "--dead-letter-queue",
        default="SYSTEM.DEAD.LETTER.QUEUE",
        help="where messages whose target refuses them go (default SYSTEM.DEAD.LETTER.QUEUE)",
    )
    d.add_argument(
        "--report-every",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="seconds between progress lines (default 10)",
    )
    d.add_argument(
        "--status",
        action="store_true",
        help="ask a running processor of the staging queue whether it is active and healthy, and exit",
    )
    d.set_defaults(run=run_delay_processor)
