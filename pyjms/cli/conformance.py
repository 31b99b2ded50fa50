"""``pyjms conformance``: IBM MQ's observable behaviours (docs/catalogue.md), run against a
provider by pyjms.conformance, printed as a table, JSON lines (``--json``) or JUnit XML
(``--junit-xml FILE``). The exit status is 1 exactly when a rule fails (2 for bad options)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pyjms.api.factory import ConnectionFactory
from pyjms.bridge.contract import STAGING_QUEUE
from pyjms.cli.common import Subcommands, broker_url, subcommand
from pyjms.cli.messaging import name_values
from pyjms.conformance import FAIL, Row, run_iter, select
from pyjms.conformance.report import json_line, junit_xml, rule_list, table


def run_conformance(args: argparse.Namespace) -> int:
    if args.list:
        print(rule_list())
        return 0
    try:
        select(args.rule)
    except ValueError as e:
        print(f"pyjms conformance: {e}", file=sys.stderr)
        return 2
    if args.factory_class is None:
        args.url = broker_url(args)  # the factory class's own properties may name the broker instead
    factory = ConnectionFactory(
        args.url,
        args.user,
        args.password,
        factory_class=args.factory_class,
        properties=name_values(args.property, "--property"),
        classpath=args.classpath or (),
        staging_queue=args.staging_queue,
    )
    rows: list[Row] = []
    for row in run_iter(factory, args.mode, args.rule, queue=args.queue):
        rows.append(row)
        if args.json:
            print(json_line(row), flush=True)
    if not args.json:
        print(table(rows), flush=True)
    if args.junit_xml:
        Path(args.junit_xml).write_bytes(junit_xml(rows))
    return 1 if any(r.result == FAIL for r in rows) else 0


def add_parser(sub: Subcommands) -> None:
    """Adds ``pyjms conformance``."""
    c = subcommand(sub, "conformance", "run IBM MQ's observable behaviours against a provider")
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
        help="delay mode(s) to run the rules in (repeatable; default: every mode the provider offers)",
    )
    c.add_argument(
        "--rule",
        action="append",
        metavar="ID",
        help="run only this behaviour ID's rule, e.g. D06 (repeatable; --list shows them)",
    )
    c.add_argument("--list", action="store_true", help="print the rules, and the IDs with none, and exit")
    c.add_argument("--json", action="store_true", help="one JSON object per row and line, as each is run")
    c.add_argument(
        "--junit-xml", metavar="FILE", default=None, help="write a JUnit XML report: one testcase per row"
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
