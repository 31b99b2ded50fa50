"""``pyjms admin``: IBM MQ-style destination attributes (MAXDEPTH, MAXMSGL, PUT, DEFBIND,
PMSGDLV/NPMSGDLV) defined, shown or removed through a pyjms broker's admin service, and an
empty, unused destination removed from the broker (IBM MQ's DELETE QLOCAL / DELETE TOPIC)."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from pyjms.api.destination import Queue, Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.cli.common import Subcommands, add_url_options, broker_url, parse_destination, subcommand
from pyjms.providers.activemq import Admin
from pyjms.rules.attributes import Attributes


def run_admin(args: argparse.Namespace) -> int:
    admin = Admin(ConnectionFactory(broker_url(args), args.user, args.password))
    describing = args.action in ("describe", "delete", "remove")
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
        if args.action == "remove":
            admin.remove(dest)
            print(f"{dest}: removed from the broker")
            return 0
        a = admin.describe(dest)
    print(
        f"{dest.name}: "
        + ("no attributes (no limits)" if a is None else " ".join(f"{k}={v}" for k, v in asdict(a).items()))
    )
    return 0


def add_parser(sub: Subcommands) -> None:
    """Adds ``pyjms admin``."""
    a = subcommand(sub, "admin", "define or show IBM MQ-style destination attributes on a pyjms broker")
    add_url_options(a)
    a.add_argument(
        "action",
        choices=["define-queue", "define-topic", "describe", "delete", "remove"],
        help="define-queue/define-topic set attributes; describe shows them; delete removes them; "
        "remove removes an empty, unused destination from the broker",
    )
    a.add_argument(
        "name", help="queue or topic name (describe/delete/remove: NAME, queue://NAME or topic://NAME)"
    )
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
    a.set_defaults(run=run_admin)
