"""Wire compatibility with a STOMP client (stomp.py) on the standalone broker's STOMP connector.

ActiveMQ bridges STOMP and JMS: JMS headers become STOMP headers (correlation-id, type,
reply-to, priority, persistent, expires) and JMS properties become plain STOMP headers, as
strings. A STOMP frame with no content-length becomes a TextMessage, one with content-length
a BytesMessage.
"""

from __future__ import annotations

import queue
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import pyjms
from tests.conftest import BrokerProcess

try:
    import stomp
except ImportError as e:  # missing, or a broken install: either way there is no STOMP client
    pytest.skip(f"stomp.py cannot be imported ({e}); pip install 'stomp.py>=8'", allow_module_level=True)

WAIT_S = 10.0
RECEIVE_MS = 10_000


class StompClient(stomp.ConnectionListener):
    """A STOMP 1.2 connection that queues what the broker sends back, for synchronous tests."""

    def __init__(self, port: int, **options: Any) -> None:
        self.frames: queue.Queue[Any] = queue.Queue()
        self.receipts: queue.Queue[str] = queue.Queue()
        self.errors: list[Any] = []
        self.conn = stomp.Connection12([("127.0.0.1", port)], **options)
        self.conn.set_listener("test", self)
        self.conn.connect(wait=True)

    def on_message(self, frame: Any) -> None:
        self.frames.put(frame)

    def on_receipt(self, frame: Any) -> None:
        self.receipts.put(frame.headers["receipt-id"])

    def on_error(self, frame: Any) -> None:
        self.errors.append(frame)

    def send_confirmed(self, destination: str, body: str | bytes, headers: dict[str, str]) -> None:
        """Sends and waits for the broker's receipt, so the frame is on the queue before pyjms looks."""
        receipt = uuid.uuid4().hex
        self.conn.send(destination, body, headers={**headers, "receipt": receipt})
        assert self.receipts.get(timeout=WAIT_S) == receipt, "the broker did not confirm the SEND"
        assert not self.errors, f"the broker sent ERROR frames: {[(e.headers, e.body) for e in self.errors]}"

    def next_frame(self) -> Any:
        try:
            return self.frames.get(timeout=WAIT_S)
        except queue.Empty:
            raise AssertionError(f"no MESSAGE frame within {WAIT_S}s; errors: {self.errors}") from None

    def close(self) -> None:
        if self.conn.is_connected():
            self.conn.disconnect()


@pytest.fixture
def stomp_client(tcp_broker: BrokerProcess) -> Iterator[Callable[..., StompClient]]:
    """Makes STOMP connections to the standalone broker and closes them after the test."""
    clients: list[StompClient] = []

    def connect(**options: Any) -> StompClient:
        clients.append(StompClient(tcp_broker.stomp_port, **options))
        return clients[-1]

    yield connect
    for c in clients:
        c.close()


# ---------------------------------------------------------------------------- pyjms -> STOMP


def test_text_message_from_pyjms_reaches_stomp_with_properties_as_headers(
    ctx: pyjms.JMSContext, qname: str, stomp_client: Callable[..., StompClient]
) -> None:
    q = ctx.create_queue(qname)
    m = ctx.create_text_message("héllo ✓ from pyjms")
    m.set_string_property("region", "eu-west")
    m.set_string_property("route", "a:b\\c\nd")  # needs STOMP 1.2 header escaping both ways
    m.set_string_property("empty", "")
    m.set_int_property("count", 7)  # STOMP headers are strings: non-string properties are rendered
    (
        ctx.create_producer()
        .set_jms_correlation_id("py-corr-stomp")
        .set_jms_type("py.event")
        .set_jms_reply_to(ctx.create_queue(f"{qname}.REPLY"))
        .set_priority(8)
        .set_time_to_live(60_000)
        .send(q, m)
    )

    client = stomp_client()  # auto_decode: the body arrives as str
    client.conn.subscribe(f"/queue/{qname}", id="1", ack="auto")
    frame = client.next_frame()

    assert frame.body == "héllo ✓ from pyjms"
    h = frame.headers
    assert h["message-id"] == m.get_jms_message_id()
    assert h["destination"] == f"/queue/{qname}"
    assert h["correlation-id"] == "py-corr-stomp"
    assert h["type"] == "py.event"
    assert h["reply-to"] == f"/queue/{qname}.REPLY"
    assert h["priority"] == "8"
    assert h["persistent"] == "true"
    assert h["timestamp"] == str(m.get_jms_timestamp())
    assert h["expires"] == str(m.get_jms_expiration())
    assert h["region"] == "eu-west"
    assert h["route"] == "a:b\\c\nd"
    assert h["empty"] == ""
    assert h["count"] == "7"
    assert "content-length" not in h  # ActiveMQ frames a TextMessage as text


def test_bytes_message_from_pyjms_reaches_stomp_with_content_length(
    ctx: pyjms.JMSContext, qname: str, stomp_client: Callable[..., StompClient]
) -> None:
    body = b"\x00\x01 binary \xfe\xff\x00"  # NULs are legal only inside a content-length body
    ctx.create_producer().set_property("kind", "blob").set_jms_correlation_id("py-bin").send(
        ctx.create_queue(qname), body
    )

    client = stomp_client(auto_decode=False)  # keep the body as bytes
    client.conn.subscribe(f"/queue/{qname}", id="1", ack="auto")
    frame = client.next_frame()

    assert frame.body == body
    assert frame.headers["content-length"] == str(len(body))
    assert frame.headers["correlation-id"] == "py-bin"
    assert frame.headers["kind"] == "blob"


# ---------------------------------------------------------------------------- STOMP -> pyjms


def test_stomp_frame_without_content_length_becomes_text_message_with_headers(
    ctx: pyjms.JMSContext, qname: str, stomp_client: Callable[..., StompClient]
) -> None:
    expires = int(time.time() * 1000) + 120_000
    client = stomp_client(auto_content_length=False)  # no content-length: ActiveMQ makes text
    client.send_confirmed(
        f"/queue/{qname}",
        "text ✓ from STOMP",
        {
            "correlation-id": "stomp-corr-1",
            "type": "stomp.order",
            "persistent": "true",
            "priority": "7",
            "expires": str(expires),
            "reply-to": f"/queue/{qname}.REPLY",
            "region": "eu-west",
            "route": "a:b\\c",
            "orderId": "12345",
        },
    )

    m = ctx.create_consumer(ctx.create_queue(qname)).receive(RECEIVE_MS)

    assert isinstance(m, pyjms.TextMessage)
    assert m.get_text() == "text ✓ from STOMP"
    assert m.get_jms_message_id().startswith("ID:")
    assert m.get_jms_correlation_id() == "stomp-corr-1"
    assert m.get_jms_type() == "stomp.order"
    assert m.get_jms_delivery_mode() == pyjms.PERSISTENT
    assert m.get_jms_priority() == 7
    assert m.get_jms_expiration() == expires
    assert m.get_jms_reply_to() == pyjms.Queue(f"{qname}.REPLY")
    assert m.get_jms_destination() == pyjms.Queue(qname)
    # custom headers arrive as String properties, and nothing else is added
    assert m.properties == {"region": "eu-west", "route": "a:b\\c", "orderId": "12345"}
    assert m.get_string_property("orderId") == "12345"
    assert m.get_long_property("orderId") == 12345  # JMS parses a String for the typed getters


def test_stomp_frame_with_content_length_becomes_bytes_message_with_headers(
    ctx: pyjms.JMSContext, qname: str, stomp_client: Callable[..., StompClient]
) -> None:
    body = b"\x00\x01 raw \xfe\xff"
    client = stomp_client()  # stomp.py's default: a content-length on every SEND
    client.send_confirmed(
        f"/queue/{qname}",
        body,
        {"correlation-id": "stomp-corr-2", "type": "stomp.blob", "source": "stomp.py"},
    )

    m = ctx.create_consumer(ctx.create_queue(qname)).receive(RECEIVE_MS)

    assert isinstance(m, pyjms.BytesMessage)
    assert m.read_bytes() == body
    assert m.get_jms_correlation_id() == "stomp-corr-2"
    assert m.get_jms_type() == "stomp.blob"
    # without a persistent header ActiveMQ's STOMP default is non-persistent
    assert m.get_jms_delivery_mode() == pyjms.NON_PERSISTENT
    assert m.get_jms_priority() == 4
    assert m.get_jms_expiration() == 0 and m.get_jms_reply_to() is None
    assert m.properties == {"source": "stomp.py"}
