"""A browse over AMQP whose drain the peer never answers (Artemis 2.55 drops one that reaches it
while it completes the link's previous drain; docs/amqp.md): the pass goes on through another
browser within seconds, where Qpid JMS alone waits amqp.drainTimeout (60 s), and returns every
message once, in order. The peer is real; between it and the client a proxy on 127.0.0.1
forwards every byte, except the flow frames with drain=true that the test says to drop."""

from __future__ import annotations

import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

import pyjms
from pyjms.api.destination import Queue
from tests.amqp.conftest import AmqpPeer
from tests.conftest import drain
from tests.faults.proxy import AnswerLosingProxy

#: AMQP 1.0's encodings by constructor: how many bytes follow it (None: a size prefix of 1 or 4)
_FIXED = {
    **dict.fromkeys((0x40, 0x41, 0x42, 0x43, 0x44, 0x45), 0),
    **dict.fromkeys((0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56), 1),
    **dict.fromkeys((0x60, 0x61), 2),
    **dict.fromkeys((0x70, 0x71, 0x72, 0x73, 0x74), 4),
    **dict.fromkeys((0x80, 0x81, 0x82, 0x83, 0x84), 8),
    0x98: 16,
}
_FLOW = 0x13  # the flow performative's descriptor
_TRANSFER = 0x14  # the transfer performative's descriptor
_DRAIN_FIELD = 8  # next-incoming-id, incoming-window, next-outgoing-id, outgoing-window, handle,
# delivery-count, link-credit, available, drain


def performative(frame: bytes) -> int | None:
    """The descriptor of an AMQP frame's performative (None for a heartbeat or a SASL frame)."""
    doff, kind = frame[4], frame[5]
    body = frame[doff * 4 :]
    if kind != 0 or len(body) < 4 or body[0] != 0x00 or body[1] != 0x53:
        return None
    return body[2]


def drains(frame: bytes) -> bool:
    """Whether an AMQP frame is a flow with drain=true."""
    if performative(frame) != _FLOW:
        return False
    body = frame[frame[4] * 4 :]
    at, code = 4, body[3]
    if code == 0x45:
        return False  # an empty list: every field absent
    if code == 0xC0:
        count, at = body[5], 6
    elif code == 0xD0:
        count, at = struct.unpack_from(">I", body, 8)[0], 12
    else:
        raise ValueError(f"a flow's fields in constructor {code:#x}")
    for field in range(min(count, _DRAIN_FIELD + 1)):
        c = body[at]
        if field == _DRAIN_FIELD:
            return c == 0x41 or (c == 0x56 and body[at + 1] == 1)
        if c in _FIXED:
            at += 1 + _FIXED[c]
        elif c in (0xA0, 0xA1, 0xA3, 0xC0, 0xC1, 0xE0):
            at += 2 + body[at + 1]
        elif c in (0xB0, 0xB1, 0xB3, 0xD0, 0xD1, 0xF0):
            at += 5 + struct.unpack_from(">I", body, at + 1)[0]
        else:
            raise ValueError(f"constructor {c:#x} in a flow")
    return False


class DrainDropper(AnswerLosingProxy):
    """A TCP proxy to an AMQP peer that drops the first drain the client sends once the peer has
    sent ``after`` transfers (counted over all connections), and forwards everything else.

    Counting transfers, not drains, makes the case the same on every run: how many drains a
    browse of three messages sends depends on whether they came before its first look."""

    def __init__(self, broker_port: int, after: int) -> None:
        self._after = after
        self._count_lock = threading.Lock()
        self.transfers = 0
        self.drains = 0
        self.dropped = 0
        super().__init__(broker_port)

    def _pump(self, source: socket.socket, sink: socket.socket, answers: bool) -> None:
        buf = b""
        try:
            while data := source.recv(65536):
                buf += data
                while True:
                    if buf[:4] == b"AMQP" and len(buf) >= 8:  # a protocol header (SASL, then AMQP)
                        sink.sendall(buf[:8])
                        buf = buf[8:]
                        continue
                    if len(buf) < 8 or len(buf) < (size := struct.unpack_from(">I", buf)[0]):
                        break
                    frame, buf = buf[:size], buf[size:]
                    if answers:
                        self._count_transfer(frame)
                    if answers or not self._dropped(frame):
                        sink.sendall(frame)
        except OSError:
            pass

    def _count_transfer(self, frame: bytes) -> None:
        if performative(frame) == _TRANSFER:
            with self._count_lock:
                self.transfers += 1

    def _dropped(self, frame: bytes) -> bool:
        if not drains(frame):
            return False
        with self._count_lock:
            self.drains += 1
            if self.dropped or self.transfers < self._after:
                return False
            self.dropped += 1
            return True


def test_the_frame_reader_knows_a_drain_from_a_flow() -> None:
    def flow(*fields: bytes) -> bytes:
        body = b"\x00\x53\x13" + bytes((0xC0, len(b"".join(fields)) + 1, len(fields))) + b"".join(fields)
        return struct.pack(">IBBH", 8 + len(body), 2, 0, 1) + body

    credit = [b"\x52\x01", b"\x70\x00\x00\x08\x00", b"\x43", b"\x70\x00\x00\x08\x00", b"\x43", b"\x43"]
    assert drains(flow(*credit, b"\x52\x01", b"\x40", b"\x41"))
    assert drains(flow(*credit, b"\x52\x01", b"\x43", b"\x56\x01"))
    assert not drains(flow(*credit, b"\x52\x01", b"\x40", b"\x42"))
    assert not drains(flow(*credit, b"\x52\x01"))  # drain absent: false
    assert not drains(struct.pack(">IBBH", 8, 2, 0, 0))  # a heartbeat


@pytest.fixture
def queue_of_three(amqp_peer: AmqpPeer) -> Iterator[tuple[Queue, list[str]]]:
    q = Queue(f"lost.drain.{uuid.uuid4().hex[:8]}")
    bodies = ["m0", "m1", "m2"]
    with pyjms.ConnectionFactory(amqp_peer.url).create_context() as ctx:
        ctx.create_producer().send_batch(q, bodies)
        yield q, bodies
        with ctx.create_consumer(q) as consumer:
            drain(consumer, 200)


@pytest.mark.parametrize(
    "after", [0, 3], ids=["its first drain lost", "its drain after every message came lost"]
)
def test_a_browse_whose_drain_the_peer_never_answers_goes_on_with_every_message_once(
    amqp_peer: AmqpPeer, queue_of_three: tuple[Queue, list[str]], after: int
) -> None:
    q, bodies = queue_of_three
    port = urlsplit(amqp_peer.url).port
    assert port is not None
    proxy = DrainDropper(port, after)
    try:
        # a drain timeout of ten minutes: the pass must not be ended by Qpid JMS's own
        with pyjms.ConnectionFactory(
            f"amqp://127.0.0.1:{proxy.port}?amqp.drainTimeout=600000"
        ).create_context() as ctx:
            started = time.monotonic()
            with ctx.create_browser(q) as browser:
                got = [m.get_body(str) for m in browser.get_enumeration()]
            took = time.monotonic() - started
    finally:
        proxy.close()
    assert proxy.dropped == 1, (
        f"the proxy saw {proxy.drains} drain(s) and {proxy.transfers} transfer(s), and dropped none"
    )
    assert got == bodies
    assert took < 30, f"the pass took {took:.1f} s: it waited for the lost drain"
