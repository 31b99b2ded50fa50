"""``pyjms providers``: the providers' client jars downloaded from Maven Central by pyjms's lock
ahead of use (with a class archive for faster JVM starts), or listed with the Java runtime
pyjms starts."""

from __future__ import annotations

import argparse

from pyjms.bridge import classpath, jvm
from pyjms.cli.common import Subcommands, subcommand


def run_providers(args: argparse.Namespace) -> int:
    if args.action == "list":
        resolved = set(classpath.resolved_providers())
        for name in classpath.PROVIDERS:
            print(f"{name:10} {'resolved' if name in resolved else 'not resolved'}")
        print(f"cache: {classpath.cache_dir()}")
        print(f"java: {jvm.java_choice().describe()}")
        return 0
    for name in args.names or [classpath.DEFAULT_PROVIDER]:
        jars = classpath.provider_jars(name)  # says what it downloads, on stderr
        print(f"{name}: {len(jars)} jars ready", flush=True)
    # the classes a JVM of this classpath loads first, archived: new processes start faster
    print(jvm.write_class_archive())
    return 0


def add_parser(sub: Subcommands) -> None:
    """Adds ``pyjms providers``."""
    pv = subcommand(
        sub,
        "providers",
        "download providers' jars from Maven Central ahead of use, or list them and the Java runtime",
    )
    pv.add_argument(
        "action",
        choices=["fetch", "list"],
        help="fetch: download now (sha256-checked, cached); list: show what is at hand and which Java runs",
    )
    pv.add_argument(
        "names", nargs="*", metavar="NAME", help="activemq, artemis, amqp, ibmmq (default: activemq)"
    )
    pv.set_defaults(run=run_providers)
