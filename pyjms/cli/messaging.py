"""``pyjms send``, ``receive`` and ``browse``: messages in and out of a broker the user names.

Nothing is lost between the broker and the terminal. ``receive`` reads in CLIENT_ACKNOWLEDGE
mode and acknowledges a message only once it has been written out and flushed; a Ctrl-C
before that leaves it on the broker. ``send`` sends each message as soon as its line (or
NUL-ended chunk) is read, so what was read before a Ctrl-C has been sent, and says how many.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any

from pyjms.api.constants import CLIENT_ACKNOWLEDGE, DELIVERY_DELAY_CHOICES, NON_PERSISTENT, PERSISTENT
from pyjms.api.destination import Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.api.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from pyjms.bridge.contract import STAGING_QUEUE
from pyjms.cli.common import (
    INTERRUPTS,
    CommandError,
    Subcommands,
    add_url_options,
    broker_url,
    destination_from,
    note,
    refuse_wildcards,
    subcommand,
)
from pyjms.providers.activemq import Admin

#: a receive waits in slices this long, so that a Ctrl-C is seen between them
_RECEIVE_SLICE_MS = 200
#: a progress line on stderr every this many messages sent
PROGRESS_EVERY = 10_000
_READ_SIZE = 64 * 1024


# ---------------------------------------------------------------------------------- send


class StdinFrames:
    """Messages from a byte stream as they arrive: one per line (the newline dropped), or one
    per NUL-ended chunk; with neither, the whole stream is one message. Keeps the byte offset
    of each message's start and what was read but not yet framed."""

    def __init__(self, stream: IO[bytes], separator: bytes | None) -> None:
        self._stream = stream
        self._separator = separator
        self._buffer = b""
        #: the byte offset in the stream of the message being read
        self.offset = 0

    @property
    def unfinished(self) -> int:
        """Bytes read of a message whose end has not come yet."""
        return len(self._buffer)

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        """(offset, bytes) of each message."""
        sep = self._separator
        while True:
            if sep is not None and (end := self._buffer.find(sep)) >= 0:
                frame, self._buffer = self._buffer[:end], self._buffer[end + len(sep) :]
                start, self.offset = self.offset, self.offset + end + len(sep)
                yield start, frame
                continue
            chunk = (
                self._stream.read1(_READ_SIZE)
                if hasattr(self._stream, "read1")
                else self._stream.read(_READ_SIZE)
            )
            if not chunk:
                break
            self._buffer += chunk
        if self._buffer or (sep is None and self.offset == 0):
            frame, self._buffer = self._buffer, b""
            yield self.offset, frame


def utf8_text(data: bytes, where: str, offset: int = 0) -> str:
    """data as text, or a CommandError naming the byte offset of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CommandError(
            f"{where} is not UTF-8 at byte offset {offset + e.start} "
            f"(byte 0x{data[e.start]:02x}); send bytes as a BytesMessage with --binary"
        ) from None


def argument_bodies(args: argparse.Namespace) -> list[str | bytes]:
    """The bodies given as arguments, checked whole before anything is sent. Python decodes
    argv with surrogateescape; os.fsencode gives back the bytes as typed."""
    bodies: list[str | bytes] = []
    for i, arg in enumerate(args.body, start=1):
        raw = os.fsencode(arg)
        bodies.append(raw if args.binary else utf8_text(raw, f"argument {i}"))
    return bodies


def cmd_send(args: argparse.Namespace) -> int:
    destination = destination_from(args)
    refuse_wildcards(destination, args.allow_wildcards)
    properties = name_values(args.property, "--property")
    bodies = argument_bodies(args)
    factory = ConnectionFactory(
        broker_url(args),
        args.user,
        args.password,
        delivery_delay=args.delivery_delay,
        staging_queue=args.staging_queue,
        create_destinations=not args.no_create,
    )
    separator = b"\0" if args.null else (None if args.binary else b"\n")
    frames = StdinFrames(sys.stdin.buffer, separator)
    sent = 0
    with factory.create_context() as ctx:
        producer = (
            ctx.create_producer()
            .set_priority(args.priority)
            .set_time_to_live(args.ttl)
            .set_delivery_mode(NON_PERSISTENT if args.non_persistent else PERSISTENT)
        )
        if args.delay:
            producer.set_delivery_delay(args.delay)
        for name, value in properties.items():
            producer.set_property(name, value)
        source: Any = bodies if args.body else frames
        try:
            for item in source:
                if isinstance(item, tuple):
                    offset, data = item
                    body: str | bytes = (
                        data
                        if args.binary
                        else utf8_text(data, f"standard input, message {sent + 1},", offset)
                    )
                else:
                    body = item
                with INTERRUPTS.whole():  # a message is sent, or not, never cut halfway
                    producer.send(destination, body)
                    sent += 1
                if sent % PROGRESS_EVERY == 0:
                    note(f"sent {sent} message(s) to {destination} so far")
        except KeyboardInterrupt:
            left = (
                f"; {frames.unfinished} byte(s) of an unfinished line were not sent"
                if frames.unfinished
                else ""
            )
            note(
                f"interrupted: sent {sent} message(s) to {destination}, every one read before the interrupt{left}"
            )
            raise
        except CommandError as e:
            raise CommandError(f"{e}; sent {sent} message(s) before it") from None
    print(f"sent {sent} message(s) to {destination}", flush=True)
    return 0


def name_values(pairs: list[str] | None, option: str) -> dict[str, str]:
    out = {}
    for pair in pairs or ():
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CommandError(f"{option} {pair!r} is not NAME=VALUE")
        out[name] = value
    return out


# ---------------------------------------------------------------------------------- receive


def _millis(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _body_kind(m: Message) -> str:
    for cls, kind in (
        (TextMessage, "text"),
        (BytesMessage, "bytes"),
        (MapMessage, "map"),
        (StreamMessage, "stream"),
        (ObjectMessage, "object"),
    ):
        if isinstance(m, cls):
            return kind
    return "none"


def _body(m: Message) -> Any:
    # an ObjectMessage's body is a serialized Java object: pyjms never deserializes one
    return None if isinstance(m, ObjectMessage) else m.get_body()


def headers_of(m: Message) -> dict[str, Any]:
    """The JMS headers of a received message, by their JMS names."""
    return {
        "JMSMessageID": m.get_jms_message_id(),
        "JMSDestination": str(m.get_jms_destination() or ""),
        "JMSDeliveryMode": "PERSISTENT" if m.get_jms_delivery_mode() == PERSISTENT else "NON_PERSISTENT",
        "JMSPriority": m.get_jms_priority(),
        "JMSTimestamp": m.get_jms_timestamp(),
        "JMSExpiration": m.get_jms_expiration(),
        "JMSDeliveryTime": m.get_jms_delivery_time(),
        "JMSCorrelationID": m.get_jms_correlation_id(),
        "JMSReplyTo": str(m.get_jms_reply_to()) if m.get_jms_reply_to() is not None else None,
        "JMSType": m.get_jms_type(),
        "JMSRedelivered": m.get_jms_redelivered(),
        "JMSXDeliveryCount": m.get_delivery_count(),
    }


def _json_value(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return {"base64": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, dict):
        return {k: _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    return v


def as_json(m: Message) -> str:
    """One line of JSON: headers, properties, body type and body (bytes as {"base64": ...})."""
    return json.dumps(
        {
            "headers": headers_of(m),
            "properties": _json_value(m.properties),
            "body_type": _body_kind(m),
            "body": _json_value(_body(m)),
        },
        ensure_ascii=False,
    )


def as_text(m: Message) -> str:
    """A message for people: the id and headers on one line, then its properties, then its body."""
    h = headers_of(m)
    head = [
        h["JMSMessageID"] or "(no id)",
        h["JMSDestination"],
        h["JMSDeliveryMode"].lower().replace("_", "-"),
        f"priority={h['JMSPriority']}",
        f"timestamp={_millis(h['JMSTimestamp'])}" if h["JMSTimestamp"] else "",
    ]
    if h["JMSExpiration"]:
        head.append(f"expires={_millis(h['JMSExpiration'])}")
    if h["JMSDeliveryTime"] and h["JMSDeliveryTime"] != h["JMSTimestamp"]:
        head.append(f"delivery-time={_millis(h['JMSDeliveryTime'])}")
    for key, label in (
        ("JMSCorrelationID", "correlation-id"),
        ("JMSReplyTo", "reply-to"),
        ("JMSType", "type"),
    ):
        if h[key]:
            head.append(f"{label}={h[key]}")
    if h["JMSRedelivered"]:
        head.append(f"redelivered delivery-count={h['JMSXDeliveryCount']}")
    lines = [" ".join(x for x in head if x)]
    properties = m.properties
    if properties:
        lines.append("  properties: " + ", ".join(f"{k}={v!r}" for k, v in sorted(properties.items())))
    body = (
        "(an ObjectMessage: pyjms does not deserialize Java objects)"
        if isinstance(m, ObjectMessage)
        else repr(_body(m))
    )
    lines.append(f"  {_body_kind(m)}: {body}")
    return "\n".join(lines)


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per message: headers, properties, body_type, body (bytes as {"base64": ...})',
    )


def _write(m: Message, args: argparse.Namespace) -> None:
    sys.stdout.write((as_json(m) if args.json else as_text(m)) + "\n")
    sys.stdout.flush()


def cmd_receive(args: argparse.Namespace) -> int:
    destination = destination_from(args)
    factory = ConnectionFactory(
        broker_url(args), args.user, args.password, create_destinations=not args.no_create
    )
    # each acknowledgement reaches the broker before the next message is written: a kill
    # repeats at most the one message written and not yet acknowledged
    factory = factory.provider.synchronous_acks(factory)
    written = 0
    with factory.create_context(CLIENT_ACKNOWLEDGE) as ctx:
        consumer = ctx.create_consumer(destination, args.selector)
        if args.timeout == 0:
            note(f"waiting for messages on {destination} until Ctrl-C (--timeout 0)")
        elif isinstance(destination, Topic):
            note(
                f"subscribed to {destination}: messages published from now on, for {args.timeout} ms of quiet"
            )
        idle_since = time.monotonic()
        try:
            while not args.max or written < args.max:
                m = consumer.receive(_RECEIVE_SLICE_MS)
                if m is None:
                    if args.timeout and (time.monotonic() - idle_since) * 1000 >= args.timeout:
                        break
                    continue
                with INTERRUPTS.whole():  # written, then acknowledged: a Ctrl-C comes after both
                    _write(m, args)
                    m.acknowledge()
                written += 1
                idle_since = time.monotonic()
        except KeyboardInterrupt:
            note(
                f"interrupted: received {written} message(s) from {destination}; any message not written "
                f"stays on the broker"
            )
            raise
    note(f"received {written} message(s) from {destination}")
    return 0


def cmd_browse(args: argparse.Namespace) -> int:
    destination = destination_from(args)
    factory = ConnectionFactory(
        broker_url(args), args.user, args.password, create_destinations=not args.no_create
    )
    shown = 0
    with factory.create_context() as ctx:
        browser = ctx.create_browser(destination, args.selector)  # type: ignore[arg-type]  # a topic: refused there
        try:
            for m in browser.get_enumeration():
                _write(m, args)
                shown += 1
                if args.max and shown >= args.max:
                    break
        except KeyboardInterrupt:
            note(f"interrupted: browsed {shown} message(s) on {destination}; browsing takes nothing")
            raise
    note(f"browsed {shown} message(s) on {destination} (left on the queue)")
    return 0


def cmd_queues(args: argparse.Namespace) -> int:
    """The broker's queues and topics with depth and consumers (pyjms brokers: their admin service)."""
    rows = Admin(ConnectionFactory(broker_url(args), args.user, args.password)).destinations()
    if not args.all:
        rows = [r for r in rows if not r["destination"].partition("://")[2].startswith(("PYJMS.", "SYSTEM."))]
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    width = max([len(r["destination"]) for r in rows] + [len("DESTINATION")])
    print(f"{'DESTINATION':{width}}  {'DEPTH':>8}  {'CONSUMERS':>9}  {'ENQUEUED':>9}  {'DEQUEUED':>9}")
    for r in rows:
        depth = r["depth"] if r["destination"].startswith("queue://") else "-"
        print(
            f"{r['destination']:{width}}  {depth:>8}  {r['consumers']:>9}  {r['enqueued']:>9}  {r['dequeued']:>9}"
        )
    return 0


def add_parsers(sub: Subcommands) -> None:
    s = sub.add_parser(
        "send",
        help="send messages: the arguments, else one per line of standard input as it is read",
        description="Sends text messages to a queue or topic: each argument, else each line of standard "
        "input as soon as it is read (--null: NUL-ended chunks; --binary: bytes). Input that is "
        "not UTF-8 is refused with its byte offset, unless --binary sends it as a BytesMessage.",
    )
    add_url_options(s)
    target = s.add_mutually_exclusive_group(required=True)
    target.add_argument("-q", "--queue", help="queue name (NAME or queue://NAME)")
    target.add_argument("-t", "--topic", help="topic name (NAME or topic://NAME)")
    s.add_argument("--priority", type=int, default=4, help="JMSPriority 0-9 (default 4)")
    s.add_argument("--ttl", type=int, default=0, help="time-to-live in ms (default 0: never expires)")
    s.add_argument("--delay", type=int, default=0, help="delivery delay in ms (default 0: none)")
    s.add_argument(
        "--delivery-delay",
        choices=DELIVERY_DELAY_CHOICES,
        default="auto",
        metavar="MODE",
        help="how a delayed message is held: auto (the provider's own mechanism if it has one, "
        "default), native, scheduler, staging (pyjms's staging queue and delay processor), none "
        f"({', '.join(DELIVERY_DELAY_CHOICES)})",
    )
    s.add_argument(
        "--staging-queue",
        default=STAGING_QUEUE,
        help=f"the staging queue of --delivery-delay staging (default {STAGING_QUEUE})",
    )
    s.add_argument(
        "--non-persistent", action="store_true", help="send NON_PERSISTENT (default: PERSISTENT, as JMS does)"
    )
    s.add_argument(
        "-p", "--property", action="append", metavar="NAME=VALUE", help="a string property (repeatable)"
    )
    s.add_argument(
        "--null", action="store_true", help="standard input: messages end with a NUL byte, not a newline"
    )
    s.add_argument(
        "--binary",
        action="store_true",
        help="send BytesMessages: all of standard input as one (with --null: one per chunk), "
        "or each argument's bytes",
    )
    s.add_argument(
        "--allow-wildcards",
        action="store_true",
        help="let * > # , in a name reach every destination they match (refused by default)",
    )
    s.add_argument(
        "--no-create",
        action="store_true",
        help="refuse a queue or topic the broker does not have, as IBM MQ does "
        "(MQRC_UNKNOWN_OBJECT_NAME 2085; on pyjms brokers, which can tell), instead of creating it",
    )
    s.add_argument("body", nargs="*", help="message bodies (none: read standard input)")
    s.set_defaults(run=cmd_send)

    for name, verb, helptext in (
        (
            "receive",
            "receive",
            "take messages from a queue or topic and print them with their headers and "
            "properties; each is acknowledged only after it was written",
        ),
        ("browse", "browse", "print the messages on a queue without taking them"),
    ):
        r = subcommand(sub, name, helptext)
        add_url_options(r)
        if name == "receive":
            target = r.add_mutually_exclusive_group(required=True)
            target.add_argument("-q", "--queue", help="queue name (NAME or queue://NAME)")
            target.add_argument(
                "-t",
                "--topic",
                help="topic name (NAME or topic://NAME): messages published while receive runs",
            )
            r.add_argument(
                "--timeout",
                type=int,
                default=1000,
                metavar="MS",
                help="stop after this many ms with no message (default 1000; 0: wait forever, until Ctrl-C)",
            )
        else:
            r.add_argument("-q", "--queue", required=True, help="queue name (NAME or queue://NAME)")
        r.add_argument("--selector", default=None, help="JMS message selector, e.g. \"region = 'eu'\"")
        r.add_argument(
            "--max", type=int, default=0, help=f"{verb} at most this many messages (default 0: no limit)"
        )
        r.add_argument(
            "--no-create",
            action="store_true",
            help="refuse a queue or topic the broker does not have, as IBM MQ does "
            "(MQRC_UNKNOWN_OBJECT_NAME 2085; on pyjms brokers, which can tell), instead of creating it",
        )
        add_output_options(r)
        r.set_defaults(run=cmd_receive if name == "receive" else cmd_browse)

    helptext = (
        "list the broker's queues and topics with their depth (messages waiting) and consumers; "
        "a pyjms broker can tell, through its admin service"
    )
    qs = subcommand(sub, "queues", helptext)
    add_url_options(qs)
    qs.add_argument("--all", action="store_true", help="include pyjms's own PYJMS.* and SYSTEM.* queues")
    qs.add_argument("--json", action="store_true", help="one JSON object per destination")
    qs.set_defaults(run=cmd_queues)
