"""The ``pyjms`` command (also ``python -m pyjms``)."""

from __future__ import annotations

import argparse
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from pyjms.api.access import admins
from pyjms.api.destination import Queue, Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.bridge import classpath, jvm
from pyjms.bridge.contract import STAGING_QUEUE
from pyjms.browse import MarkService, mark_browse_interval, set_mark_browse_interval
from pyjms.cli import conformance, messaging
from pyjms.cli.common import INTERRUPTS, CommandError, add_url_options, broker_url, note, parse_destination
from pyjms.cli.interrupts import EXIT_INTERRUPTED
from pyjms.cli.startup import check_data_dir, interruptible, reach
from pyjms.delay import delay_mechanism
from pyjms.delay.processor import DelayProcessor
from pyjms.delay.processor_ping import processor_status
from pyjms.dlq.cli import add_parser as add_dlq_handler
from pyjms.dlq.cli import run_command as run_dlq_handler
from pyjms.errors import JMSRuntimeException
from pyjms.providers.activemq import Admin, EmbeddedBroker
from pyjms.providers.artemis import EmbeddedArtemisBroker
from pyjms.providers.users_file import load_users
from pyjms.rules.attributes import Attributes
from pyjms.version import __version__


def stop_on_signals(stop: threading.Event) -> list[int]:
    """A service stops cleanly on SIGINT or SIGTERM; the list gets the signal that stopped it."""
    stopped_by: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        stopped_by.append(signum)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):  # after the JVM started (it runs with -Xrs: they stay ours)
        signal.signal(sig, on_signal)
    return stopped_by


def exit_status(stopped_by: list[int]) -> int:
    """130 after Ctrl-C, as for every command; 0 after SIGTERM, a supervisor's stop."""
    return EXIT_INTERRUPTED if stopped_by and stopped_by[0] == signal.SIGINT else 0


#: the keystore's password, where `ps` does not show it (--tls-password overrides it)
TLS_PASSWORD_ENV = "PYJMS_TLS_PASSWORD"


def _broker_security(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The broker's users, access rules and TLS options from the command line, and the words
    the ready line says about them."""
    options: dict[str, Any] = {}
    said = []
    if args.users is not None:
        loaded = load_users(args.users)  # one line naming the file, the entry and the rule
        mode = stat.S_IMODE(os.stat(args.users).st_mode)
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            note(
                f"--users {args.users}: others may read its passwords (mode {mode:o}); chmod 600 {args.users}"
            )
        options.update(users=loaded.users, access=loaded.access)
        said.append(f"users from {args.users}")
    password = args.tls_password if args.tls_password is not None else os.environ.get(TLS_PASSWORD_ENV)
    if args.tls_keystore is None:
        if args.tls_password is not None:
            raise CommandError("--tls-password: give the keystore too (--tls-keystore FILE)")
    else:
        if not os.access(args.tls_keystore, os.R_OK) or not os.path.isfile(args.tls_keystore):
            raise CommandError(f"--tls-keystore {args.tls_keystore}: not a file this user can read")
        if password is None:
            raise CommandError(
                f"--tls-keystore {args.tls_keystore}: its password is needed: --tls-password PW or {TLS_PASSWORD_ENV}"
            )
        options.update(tls_keystore=args.tls_keystore, tls_password=password)
        said.append("TLS only")
    if args.users is None:
        said.append(
            "no authentication (any local user may read, write and administer everything): for development only"
        )
    return options, ", ".join(said)


def _cmd_broker(args: argparse.Namespace) -> int:
    if args.provider == "artemis" and args.stomp_port is not None:
        raise CommandError("--stomp-port: the Artemis broker speaks CORE and AMQP, not STOMP")
    os.umask(0o077)  # the broker's files (journal, KahaDB, scheduler) are this user's alone
    data_dir = check_data_dir(args.data, args.provider) if args.data is not None else None
    security, secured = _broker_security(args)
    stop = threading.Event()
    options = dict(
        port=args.port,
        data_dir=data_dir,
        name=args.name,
        delay_processor=not args.no_delay_processor,
        mark_service=not args.no_mark_service,
        mark_browse_interval=args.mark_browse_interval,
        mark_lease_ms=args.mark_lease,
        **security,
    )

    jvm.start(jvm_options=jvm.SERVICE_JVM_OPTIONS, providers=(args.provider,))

    def start() -> EmbeddedBroker | EmbeddedArtemisBroker:
        if args.provider == "artemis":
            return EmbeddedArtemisBroker(**options)
        return EmbeddedBroker(stomp_port=args.stomp_port, amqp_port=args.amqp_port, **options)

    broker = interruptible(start, "starting the broker")
    stopped_by = stop_on_signals(stop)
    persistence = (
        f"persistent (data in {data_dir})"
        if data_dir is not None
        else "non-persistent (messages last as long as this process; --data DIR keeps them)"
    )
    try:
        # one line a supervisor (or a test) can wait for: the URLs follow "ready:"
        print(
            f"pyjms broker {broker.name} {persistence}, {secured} ready: {' '.join(broker.connect_uris)}",
            flush=True,
        )
        while not stop.wait(0.5):
            pass
    finally:
        broker.stop()
    print(f"pyjms broker {broker.name} stopped", flush=True)
    return exit_status(stopped_by)


def _cmd_delay_processor(args: argparse.Namespace) -> int:
    stop = threading.Event()
    factory = ConnectionFactory(broker_url(args), args.user, args.password, staging_queue=args.staging_queue)
    jvm.start(factory.classpath, jvm.SERVICE_JVM_OPTIONS)
    reach(factory)
    if args.status:
        return _print_processor_status(factory)
    # any number may run: the broker elects the active one, the others stand by
    processor = interruptible(
        lambda: DelayProcessor(factory, dead_letter_queue=args.dead_letter_queue).start(),
        "starting the delay processor",
    )
    stopped_by = stop_on_signals(stop)
    print(
        f"pyjms delay processor on {factory.url} queue {processor.staging}: running, active once the broker "
        f"elects it (any number may run: the others stand by); a progress line every "
        f"{args.report_every:g} s, Ctrl-C stops it",
        flush=True,
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


def _print_processor_status(factory: ConnectionFactory) -> int:
    """``pyjms delay-processor --status``: each processor of the staging queue that answers a
    ping, active or standing by, healthy or with its problem. 0 if an active one is healthy."""
    answers: dict[str, dict[str, object]] = {}
    with factory.create_context() as ctx:
        for _ in range(STATUS_PINGS):
            status = processor_status(ctx, 2000 if not answers else 500)
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


def _cmd_mark_service(args: argparse.Namespace) -> int:
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
    stopped_by = stop_on_signals(stop)
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


def _cmd_mark_interval(args: argparse.Namespace) -> int:
    factory = ConnectionFactory(broker_url(args), args.user, args.password)
    if args.set is not None:
        value = set_mark_browse_interval(factory, args.set)
    else:
        value = mark_browse_interval(factory)
    print(f"MsgMarkBrowseInterval {value}", flush=True)
    return 0


def _cmd_admin(args: argparse.Namespace) -> int:
    admin = Admin(ConnectionFactory(broker_url(args), args.user, args.password))
    describing = args.action in ("describe", "delete")
    kind = (
        Topic if args.action == "define-topic" or (describing and args.name.startswith("topic://")) else Queue
    )
    dest = parse_destination(args.name, kind, "name")
    a: Attributes | None
    if args.action == "define-queue":
        a = admin.define_queue(
            dest.name,
            max_depth=args.max_depth,
            max_msg_length=args.max_msg_length,
            put_enabled=args.put == "enabled",
            clustered=args.clustered,
            default_bind=args.default_bind,
        )
    elif args.action == "define-topic":
        a = admin.define_topic(
            dest.name, persistent_delivery=args.pmsgdlv, nonpersistent_delivery=args.npmsgdlv
        )
    else:
        if args.action == "delete":
            admin.delete(dest)
            print(f"{dest}: attributes removed")
            return 0
        a = admin.describe(dest)
    print(
        f"{dest.name}: "
        + ("no attributes (no limits)" if a is None else " ".join(f"{k}={v}" for k, v in asdict(a).items()))
    )
    return 0


def _cmd_dlq_handler(args: argparse.Namespace) -> int:
    args.url = broker_url(args)
    return run_dlq_handler(args)


def _cmd_conformance(args: argparse.Namespace) -> int:
    if args.factory_class is None:
        args.url = broker_url(args)  # the factory class's own properties may name the broker instead
    connect = {
        "user": args.user,
        "password": args.password,
        "factory_class": args.factory_class,
        "properties": messaging.name_values(args.property, "--property"),
        "classpath": args.classpath or (),
    }
    failed = 0
    for mode in args.mode:
        rows = conformance.run(
            args.url, mode, staging_queue=args.staging_queue, connect=connect, queue=args.queue
        )
        factory = ConnectionFactory(
            args.url, delivery_delay=mode, staging_queue=args.staging_queue, **connect
        )
        with factory.create_context() as ctx:
            mechanism, provider = delay_mechanism(ctx).value, ctx.provider_name
        print(conformance.render(rows, mode, mechanism, provider), flush=True)
        failed += sum(r.failed for r in rows)
    return 1 if failed else 0


def _cmd_providers(args: argparse.Namespace) -> int:
    if args.action == "list":
        resolved = set(classpath.resolved_providers())
        for name in classpath.PROVIDERS:
            print(f"{name:10} {'resolved' if name in resolved else 'not resolved'}")
        print(f"cache: {classpath.cache_dir()}")
        return 0
    for name in args.names or [classpath.DEFAULT_PROVIDER]:
        jars = classpath.provider_jars(name)  # Maven prints what it downloads, on stderr
        print(f"{name}: {len(jars)} jars ready", flush=True)
    # the classes a JVM of this classpath loads first, archived: new processes start faster
    print(jvm.write_class_archive())
    return 0


def _subcommand(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, helptext: str
) -> argparse.ArgumentParser:
    """A subcommand whose --help starts with what it does."""
    return sub.add_parser(name, help=helptext, description=helptext[0].upper() + helptext[1:] + ".")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pyjms",
        description="JMS 2.0 from Python, with IBM MQ semantics.",
        epilog="Commands that talk to a broker need its URL: --url, or PYJMS_URL. "
        "`pyjms broker` runs one on 127.0.0.1:61616.",
    )
    p.add_argument("--version", action="version", version=f"pyjms {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = _subcommand(sub, "broker", "run an ActiveMQ (or Artemis) broker on 127.0.0.1 until Ctrl-C or SIGTERM")
    b.add_argument(
        "--provider",
        choices=["activemq", "artemis"],
        default="activemq",
        help="ActiveMQ Classic (default) or Apache Artemis (CORE and AMQP on --port)",
    )
    b.add_argument(
        "--port", type=int, default=61616, help="OpenWire (Artemis: CORE and AMQP) port (0 picks a free one)"
    )
    b.add_argument(
        "--stomp-port", type=int, default=None, help="also listen for STOMP on this port (ActiveMQ)"
    )
    b.add_argument(
        "--amqp-port",
        type=int,
        default=0,
        help="AMQP 1.0 port (ActiveMQ; default 0: a free one, shown on the ready line; AMQP's usual "
        "is 5672). Artemis speaks AMQP on --port",
    )
    b.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="keep messages in this directory (ActiveMQ: KahaDB; Artemis: journal), so the broker is "
        "persistent; default: none, messages live only as long as the broker",
    )
    b.add_argument("--name", default=None, help="broker name (must start with 'pyjms')")
    b.add_argument(
        "--users",
        default=None,
        metavar="FILE",
        help="clients must sign in: users, passwords, groups and access rules from this TOML file "
        "(docs/security.md); default: no authentication, for development only",
    )
    b.add_argument(
        "--tls-keystore",
        default=None,
        metavar="FILE",
        help="listen with TLS only (ssl://, artemis+ssl://, amqps://), presenting this keystore's key "
        "(PKCS12, or JKS for a .jks file)",
    )
    b.add_argument(
        "--tls-password",
        default=None,
        metavar="PW",
        help=f"the keystore's password (better: the environment variable {TLS_PASSWORD_ENV}, which ps does not show)",
    )
    b.add_argument("--no-delay-processor", action="store_true", help="do not run the staging delay processor")
    b.add_argument(
        "--no-mark-service",
        action="store_true",
        help="do not run a mark service (`pyjms mark-service` processes beside it serve cooperative browsing)",
    )
    b.add_argument(
        "--mark-browse-interval",
        type=int,
        default=5000,
        help="MsgMarkBrowseInterval in ms for cooperative browse marks (-1: never lapse)",
    )
    b.add_argument(
        "--mark-lease",
        type=int,
        default=10_000,
        help="ms after which a silent browse handle's marks are released",
    )
    b.set_defaults(run=_cmd_broker)

    messaging.add_parsers(sub)

    m = _subcommand(
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
    m.set_defaults(run=_cmd_mark_service)

    mi = _subcommand(sub, "mark-interval", "show (or --set) a broker's MsgMarkBrowseInterval")
    add_url_options(mi)
    mi.add_argument("--set", type=int, default=None, metavar="MS", help="new interval in ms (-1: never)")
    mi.set_defaults(run=_cmd_mark_interval)

    d = _subcommand(sub, "delay-processor", "run the staging-queue delay processor against a broker")
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
    d.set_defaults(run=_cmd_delay_processor)

    a = _subcommand(sub, "admin", "define or show IBM MQ-style destination attributes on a pyjms broker")
    add_url_options(a)
    a.add_argument(
        "action",
        choices=["define-queue", "define-topic", "describe", "delete"],
        help="define-queue/define-topic set attributes; describe shows them; delete removes them",
    )
    a.add_argument("name", help="queue or topic name (describe/delete: NAME, queue://NAME or topic://NAME)")
    a.add_argument("--max-depth", type=int, default=-1, help="MAXDEPTH (-1: no limit)")
    a.add_argument("--max-msg-length", type=int, default=-1, help="MAXMSGL in bytes (-1: no limit)")
    a.add_argument(
        "--put", choices=["enabled", "disabled"], default="enabled", help="PUT(ENABLED) or PUT(DISABLED)"
    )
    a.add_argument("--clustered", action="store_true", help="CLUSTER: the queue is a cluster queue")
    a.add_argument("--default-bind", choices=["OPEN", "NOTFIXED", "GROUP"], default="OPEN", help="DEFBIND")
    a.add_argument(
        "--pmsgdlv",
        choices=["ALLDUR", "ALLAVAIL", "ALL"],
        default="ALLDUR",
        help="PMSGDLV: persistent delivery to subscribers (topics)",
    )
    a.add_argument(
        "--npmsgdlv",
        choices=["ALLDUR", "ALLAVAIL", "ALL"],
        default="ALLAVAIL",
        help="NPMSGDLV: non-persistent delivery to subscribers (topics)",
    )
    a.set_defaults(run=_cmd_admin)

    c = _subcommand(sub, "conformance", "run IBM MQ's delay/expiry restrictions against a provider")
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
    c.set_defaults(run=_cmd_conformance)

    add_dlq_handler(sub).set_defaults(run=_cmd_dlq_handler)

    pv = _subcommand(
        sub, "providers", "resolve providers' jars from Maven Central ahead of use, or list them"
    )
    pv.add_argument(
        "action", choices=["fetch", "list"], help="fetch: resolve now; list: show what is resolved"
    )
    pv.add_argument(
        "names", nargs="*", metavar="NAME", help="activemq, artemis, amqp, ibmmq (default: activemq)"
    )
    pv.set_defaults(run=_cmd_providers)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "conformance" and not args.mode:
        args.mode = ["auto"]
    INTERRUPTS.install()  # pyjms starts its JVM with -Xrs: Ctrl-C stays Python's
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        note(f"pyjms {args.command}: interrupted")
        return EXIT_INTERRUPTED
    except (JMSRuntimeException, CommandError) as e:
        print(f"pyjms {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # stdout's reader went away (| head): what was not written was not acknowledged
        sys.stderr.close()
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
