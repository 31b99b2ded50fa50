"""``pyjms broker``: an embedded ActiveMQ or Artemis broker with pyjms's services, run until
Ctrl-C or SIGTERM; its users, access rules and TLS from the command line."""

from __future__ import annotations

import argparse
import os
import stat
import threading
from typing import Any

from pyjms.bridge import jvm
from pyjms.bridge.signals import exit_status, stop_on_signals
from pyjms.cli.common import CommandError, Subcommands, note, subcommand
from pyjms.cli.startup import check_data_dir, interruptible
from pyjms.providers.activemq import EmbeddedBroker
from pyjms.providers.artemis import EmbeddedArtemisBroker
from pyjms.providers.users_file import load_users

#: the keystore's password, where `ps` does not show it (--tls-password overrides it)
TLS_PASSWORD_ENV = "PYJMS_TLS_PASSWORD"


def broker_security(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
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


def run_broker(args: argparse.Namespace) -> int:
    if args.provider == "artemis" and args.stomp_port is not None:
        raise CommandError("--stomp-port: the Artemis broker speaks CORE and AMQP, not STOMP")
    if args.shared_store and args.data is None:
        raise CommandError("--shared-store: the pair shares a data directory; give it (--data DIR)")
    if args.shared_store and args.provider == "artemis":
        # each broker of an Artemis pair tells clients where its partner listens (its topology)
        if args.port == 0:
            raise CommandError(
                "--shared-store --provider artemis: each broker of the pair needs a fixed --port, not 0"
            )
        if args.tls_keystore is not None:
            raise CommandError(
                "--shared-store --provider artemis: the pair speaks plain TCP only, without --tls-keystore"
            )
    os.umask(0o077)  # the broker's files (journal, KahaDB, scheduler) are this user's alone
    data_dir = check_data_dir(args.data, args.provider, args.shared_store) if args.data is not None else None
    security, secured = broker_security(args)
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

    if args.shared_store:
        options["on_standby"] = lambda: print(
            f"pyjms broker standing by: another broker holds the store in {data_dir}; taking over when it ends",
            flush=True,
        )
    jvm.start(jvm_options=jvm.SERVICE_JVM_OPTIONS, providers=(args.provider,))

    def start() -> EmbeddedBroker | EmbeddedArtemisBroker:
        if args.provider == "artemis":
            return EmbeddedArtemisBroker(**options)
        return EmbeddedBroker(stomp_port=args.stomp_port, amqp_port=args.amqp_port, **options)

    broker = interruptible(start, "starting the broker")
    stopped_by = stop_on_signals(stop.set)
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


def add_parser(sub: Subcommands) -> None:
    """Adds ``pyjms broker``."""
    b = subcommand(sub, "broker", "run an ActiveMQ (or Artemis) broker on 127.0.0.1 until Ctrl-C or SIGTERM")
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
    b.add_argument(
        "--shared-store",
        action="store_true",
        help="one broker of a failover pair sharing --data with the other: whichever holds the store "
        "serves; started while the other does, it prints a 'standing by' line and waits, and takes "
        "over (prints its ready line) within seconds of that broker's end, SIGKILL included. Clients "
        "reach the pair as failover:(tcp://127.0.0.1:A,tcp://127.0.0.1:B), or on Artemis as "
        "artemis+(tcp://127.0.0.1:A,tcp://127.0.0.1:B)?ha=true&reconnectAttempts=-1&blockOnAcknowledge=true "
        "(docs/reliability.md)",
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
    b.set_defaults(run=run_broker)
