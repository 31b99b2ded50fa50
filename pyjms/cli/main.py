"""The ``pyjms`` command (also ``python -m pyjms``): its parser, made of each command group's
subcommands, and how a command ends (its exit status, its one-line error).

The groups: broker (``pyjms broker``), messaging (send, receive, browse, queues), services
(mark-service, mark-interval, delay-processor), admin, conformance, the DLQ handler
(pyjms.dlq.cli) and providers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pyjms.bridge import jvm
from pyjms.bridge.signals import EXIT_INTERRUPTED
from pyjms.cli import admin, broker, conformance, messaging, providers, services
from pyjms.cli.common import INTERRUPTS, CommandError, broker_url, note
from pyjms.dlq.cli import add_parser as add_dlq_handler
from pyjms.dlq.cli import run_command as run_dlq_handler
from pyjms.errors import JMSRuntimeException
from pyjms.version import __version__

#: the commands that run until stopped: their JVMs keep the full JIT (C2); the others live
#: seconds and start theirs with jvm.COMMAND_JVM_OPTIONS
LONG_RUNNING = frozenset({"broker", "mark-service", "delay-processor", "dlq-handler"})


def _cmd_dlq_handler(args: argparse.Namespace) -> int:
    args.url = broker_url(args)
    return run_dlq_handler(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pyjms",
        description="JMS 2.0 from Python, with IBM MQ semantics.",
        epilog="Commands that talk to a broker need its URL: --url, or PYJMS_URL. "
        "`pyjms broker` runs one on 127.0.0.1:61616.",
    )
    p.add_argument("--version", action="version", version=f"pyjms {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    broker.add_parser(sub)
    messaging.add_parsers(sub)
    services.add_parsers(sub)
    admin.add_parser(sub)
    conformance.add_parser(sub)
    add_dlq_handler(sub).set_defaults(run=_cmd_dlq_handler)
    providers.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    INTERRUPTS.install()  # pyjms starts its JVM with -Xrs: Ctrl-C stays Python's
    if args.command not in LONG_RUNNING:
        jvm.set_default_options(jvm.COMMAND_JVM_OPTIONS)
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
