"""``pyjms dlq-handler``: runs a DLQHandler from the command line, as IBM's runmqdlq does.

    pyjms dlq-handler --url tcp://127.0.0.1:61616 -q ActiveMQ.DLQ [-m QMGR] -r rules.txt

The table comes from ``-r FILE``, or from standard input when -r is omitted or ``-``. A table
with errors is reported line by line and the handler does not start (exit status 2). The
handler prints its progress every few seconds and its totals when it ends: when WAIT says
so, or on SIGINT/SIGTERM, after the move in progress.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pyjms.api.factory import ConnectionFactory
from pyjms.bridge import jvm, signals
from pyjms.dlq.handler import DLQHandler, HandlerStats
from pyjms.dlq.rules import RulesTable
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException

_PROG = "dlq-handler"
_DESCRIPTION = "Process a dead-letter queue by a rules table in IBM MQ's runmqdlq language."


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Registers ``dlq-handler`` on the ``pyjms`` command's subparsers."""
    parser = subparsers.add_parser(
        _PROG,
        help="process a dead-letter queue by an IBM MQ-style rules table",
        description=_DESCRIPTION,
    )
    _add_arguments(parser)
    parser.set_defaults(run=run_command)
    return parser


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", default=None, help="the broker's URL, e.g. tcp://127.0.0.1:61616 (default: PYJMS_URL)"
    )
    parser.add_argument("--user", default=None, help="user name for the broker")
    parser.add_argument("--password", default=None, help="password for the broker")
    parser.add_argument(
        "-q",
        "--queue",
        default=None,
        help="the dead-letter queue (default: INPUTQ of the table, else the provider's: ActiveMQ.DLQ)",
    )
    parser.add_argument(
        "-m",
        "--queue-manager",
        default=None,
        help="this broker's queue manager name for DESTQM/FWDQM/REPLYQM (default: INPUTQM, else '')",
    )
    parser.add_argument("-r", "--rules", default="-", help="rules table file; '-' or omitted: standard input")
    parser.add_argument(
        "--progress",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="seconds between progress lines (0: none)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every move")


def run_command(args: argparse.Namespace) -> int:
    """The subcommand. JMSRuntimeException (e.g. RulesTableError) is left to the caller."""
    table = _read_table(args.rules)  # first: a table with errors starts nothing (Q07)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    factory = ConnectionFactory(args.url, args.user, args.password)
    printed_at, printed = time.monotonic(), ""

    def progress(stats: HandlerStats) -> None:  # after each pass: print what changed, now and then
        nonlocal printed_at, printed
        line, now = stats.summary(), time.monotonic()
        if args.progress > 0 and line != printed and now - printed_at >= args.progress:
            print(f"{_PROG}: {line}", flush=True)
            printed_at, printed = now, line

    handler = DLQHandler(factory, args.queue, table, args.queue_manager, progress=progress)
    jvm.start(factory.classpath)  # first, so that the signal handlers below stay ours
    stopped_by = signals.stop_on_signals(handler.stop)  # (not from the handler: a deadlock)
    wait = str(handler.wait) if not isinstance(handler.wait, bool) else "YES" if handler.wait else "NO"
    print(
        f"{_PROG}: processing queue://{handler.queue} (queue manager {handler.queue_manager!r}) with "
        f"{len(table)} rules, RETRYINT {handler.retry_interval_s:g} s, WAIT({wait})",
        flush=True,
    )
    stats = handler.run()
    print(f"{_PROG}: {'stopped' if handler.stopping else 'done'}; totals: {stats.summary()}", flush=True)
    # 130 after Ctrl-C, as every pyjms command; 0 after SIGTERM (a supervisor's stop) or WAIT's end
    return signals.exit_status(stopped_by)


def _read_table(path: str) -> RulesTable:
    """The table, or one line naming the file and why it cannot be read: missing, unreadable,
    or not UTF-8 text (the byte offset of the first byte that is not)."""
    name = "standard input" if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as e:
        raise InvalidArgumentRuntimeException(
            f"cannot read the rules table {name}: {e.strerror or e}"
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidArgumentRuntimeException(
            f"the rules table {name} is not UTF-8 text: byte 0x{data[e.start]:02x} at byte offset {e.start}"
        ) from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise InvalidArgumentRuntimeException(
            f"the rules table {name} is not text: a NUL byte at byte offset {nul}"
        )
    return RulesTable.parse(text)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pyjms.dlq.cli``: the subcommand on its own."""
    parser = argparse.ArgumentParser(prog=f"pyjms {_PROG}", description=_DESCRIPTION)
    _add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_command(args)
    except JMSRuntimeException as e:
        print(f"pyjms: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
