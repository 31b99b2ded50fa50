"""What every pyjms subcommand shares: which broker it talks to, destination names as users
write them, and the one-line error a command ends with."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TypeAlias

from pyjms.api.destination import Destination, Queue, Topic
from pyjms.cli.interrupts import Interrupts

#: the command's Ctrl-C handling (installed by main once the JVM has started)
INTERRUPTS = Interrupts()

#: what a command that talks to a broker says when none is named
NO_BROKER = (
    "no broker named: run `pyjms broker` in another terminal, then give its URL with "
    "--url tcp://127.0.0.1:61616 (or set PYJMS_URL)"
)

#: characters a provider reads as a wildcard or a list of destinations (ActiveMQ: * > and the
#: composite ","; Artemis: * and #), so a send would fan out instead of reaching one name
WILDCARD_CHARACTERS = "*>#,"


#: what the parser's add_subparsers() gives, to which each command group adds its subcommands
#: (a string: argparse's class is not subscriptable at run time)
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class CommandError(Exception):
    """A command's one-line failure (exit status 2): bad input, no broker named."""


def broker_url(args: argparse.Namespace) -> str:
    """--url, else PYJMS_URL; never a broker inside this process, which would end with it."""
    url = getattr(args, "url", None) or os.environ.get("PYJMS_URL")
    if not url:
        raise CommandError(NO_BROKER)
    return url


def subcommand(sub: Subcommands, name: str, helptext: str) -> argparse.ArgumentParser:
    """A subcommand whose --help starts with what it does."""
    return sub.add_parser(name, help=helptext, description=helptext[0].upper() + helptext[1:] + ".")


def add_url_options(parser: argparse.ArgumentParser, *, user: bool = True) -> None:
    parser.add_argument(
        "--url",
        default=None,
        help="the broker's URL, e.g. tcp://127.0.0.1:61616 (default: PYJMS_URL); `pyjms broker` runs one",
    )
    if user:
        parser.add_argument("--user", default=None, help="user name for the broker")
        parser.add_argument("--password", default=None, help="password for the broker")


def parse_destination(name: str, kind: type[Queue] | type[Topic], option: str) -> Destination:
    """NAME, queue://NAME or topic://NAME, as given to option (-q or -t)."""
    scheme, sep, rest = name.partition("://")
    if sep:
        wanted = {"queue": Queue, "topic": Topic}.get(scheme)
        if wanted is None:
            raise CommandError(f"{option} {name!r}: a destination is NAME, queue://NAME or topic://NAME")
        if wanted is not kind:
            other = "-t" if wanted is Topic else "-q"
            hint = f": use {other} {name}" if option in ("-q", "-t") else f", not a {kind.scheme}"
            raise CommandError(f"{option} {name!r} names a {scheme}{hint}")
        name = rest
    if not name.strip():
        raise CommandError(f"{option} {name!r}: the destination name is empty")
    return kind(name)


def destination_from(args: argparse.Namespace) -> Destination:
    """The destination of a command's -q/--queue or -t/--topic."""
    if getattr(args, "topic", None):
        return parse_destination(args.topic, Topic, "-t")
    return parse_destination(args.queue, Queue, "-q")


def refuse_wildcards(destination: Destination, allowed: bool) -> None:
    """A send reaches the one destination named, unless the user asks for a wildcard's fan-out."""
    if allowed:
        return
    found = sorted({c for c in destination.name if c in WILDCARD_CHARACTERS})
    if found:
        raise CommandError(
            f"{destination}: {' '.join(repr(c) for c in found)} in a name is a wildcard or a list of "
            f"destinations to the broker, so the message would go to every match; "
            f"pass --allow-wildcards to mean that"
        )


def note(text: str) -> None:
    """A line for the user on stderr (stdout is for messages)."""
    print(text, file=sys.stderr, flush=True)
