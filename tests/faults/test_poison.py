"""Issue 15, findings 1 and 2: poison is quarantined, never fatal.

A message whose JMS_PYJMS_* properties pyjms cannot read goes to the dead-letter queue with a
dead-letter header naming the reason (MQRC_FORMAT_ERROR) and, in JMS_PYJMS_DLQDetail, the
property and its bad value; the component logs it once and goes on. The poison is put by a
client that is not pyjms (stomp.py on the broker's STOMP connector), as anyone allowed to write
a queue can.
"""

from __future__ import annotations

import logging
import queue
import time
import uuid
from typing import Any, Iterator

import pytest

import pyjms
from pyjms.bridge.contract import DEAD_LETTER_QUEUE, DLQ_DETAIL, QUARANTINE_REASON, STAGING_QUEUE
from pyjms.broker import AccessRule, EmbeddedBroker
from pyjms.dlq import header as dlh

try:
    import stomp
except ImportError as e:
    pytest.skip(f"stomp.py cannot be imported ({e})", allow_module_level=True)

WAIT_S = 10.0


class StompPutter(stomp.ConnectionListener):
    """A STOMP 1.2 connection that puts frames and waits for the broker's receipt."""

    def __init__(self, port: int, user: str, password: str) -> None:
        self.receipts: queue.Queue[str] = queue.Queue()
        self.errors: list[Any] = []
        self.conn = stomp.Connection12([("127.0.0.1", port)])
        self.conn.set_listener("putter", self)
        self.conn.connect(user, password, wait=True)

    def on_receipt(self, frame: Any) -> None:
        self.receipts.put(frame.headers["receipt-id"])

    def on_error(self, frame: Any) -> None:
        self.errors.append(frame)

    def put(self, queue_name: str, body: str, headers: dict[str, str]) -> None:
        receipt = uuid.uuid4().hex
        self.conn.send(f"/queue/{queue_name}", body, headers={"persistent": "true", **headers, "receipt": receipt})
        assert self.receipts.get(timeout=WAIT_S) == receipt, "the broker did not confirm the SEND"
        assert not self.errors, [(e.headers, e.body) for e in self.errors]

    def close(self) -> None:
        if self.conn.is_connected():
            self.conn.disconnect()


@pytest.fixture(scope="module")
def secured() -> Iterator[EmbeddedBroker]:
    """A broker with users: mal may write only MAL.> (and, as every sender, the staging
    queue); alice sends and reads ORDERS.>; ops reads the dead-letter queues."""
    users = {"mal": ("mal-pw", ["mal"]), "alice": ("alice-pw", ["senders"]), "ops": ("ops-pw", ["ops"])}
    access = [
        AccessRule("MAL.>", read=["mal"], write=["mal"], admin=["mal"]),
        AccessRule("ORDERS.>", read=["senders", "mal"], write=["senders", "mal"], admin=["senders", "mal", "ops"]),
        AccessRule(DEAD_LETTER_QUEUE, read=["ops"], write=["ops"], admin=["ops"]),
        AccessRule("ActiveMQ.DLQ", read=["ops"], write=["ops"], admin=["ops"]),
    ]
    broker = EmbeddedBroker(name=f"pyjms-poison-{uuid.uuid4().hex[:6]}", users=users, access=access, stomp_port=0)
    yield broker
    broker.stop()


@pytest.fixture
def stomp_as(secured: EmbeddedBroker) -> Iterator[Any]:
    port = int(secured.stomp_url.rsplit(":", 1)[1])
    made: list[StompPutter] = []

    def connect(user: str, password: str) -> StompPutter:
        made.append(StompPutter(port, user, password))
        return made[-1]

    yield connect
    for c in made:
        c.close()


def dead_letters(broker: EmbeddedBroker, queue_name: str, marker: str) -> list[pyjms.Message]:
    """The messages on a dead-letter queue whose 'case' property is marker (taken off it)."""
    with pyjms.ConnectionFactory(broker.vm_url, "ops", "ops-pw").create_context() as ops:
        consumer = ops.create_consumer(ops.create_queue(queue_name), f"case = '{marker}'")
        found = []
        while (m := consumer.receive(2000 if not found else 300)) is not None:
            found.append(m)
        return found


def poison_lines(caplog: pytest.LogCaptureFixture, marker: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "pyjms.poison" and marker in r.getMessage()]


def test_finding1_a_malformed_delivery_time_on_the_staging_queue_is_quarantined(secured, stomp_as, caplog):
    """One bad staged message no longer stops delayed delivery for everyone (finding 1)."""
    caplog.set_level(logging.WARNING)
    case = f"f1-{uuid.uuid4().hex[:8]}"
    mal = stomp_as("mal", "mal-pw")
    mal.put(STAGING_QUEUE, "poison", {"JMS_PYJMS_DeliveryTime": "soon", "JMS_PYJMS_DDL_Target": "queue://ORDERS.F1",
                                      "case": case})
    time.sleep(0.5)  # the processor meets the poison first
    alice = pyjms.ConnectionFactory(secured.vm_url, "alice", "alice-pw", delivery_delay="staging")
    with alice.create_context() as ctx:
        target = ctx.create_queue("ORDERS.F1")
        ctx.create_producer().set_delivery_delay(500).set_property("case", case).send(target, "on time")
        got = ctx.create_consumer(target, f"case = '{case}'").receive(15_000)
        assert got is not None and got.get_text() == "on time"

    dead = dead_letters(secured, DEAD_LETTER_QUEUE, case)
    assert len(dead) == 1
    m = dead[0]
    assert m.get_body(bytes) == b"poison"  # stomp.py sends a content-length: a BytesMessage
    header = dlh.DeadLetterHeader.from_message(m)
    assert header is not None and header.reason == QUARANTINE_REASON and header.dest_q == STAGING_QUEUE
    assert header.put_appl_name == "pyjms delay processor"
    detail = m.get_string_property(DLQ_DETAIL)
    assert "JMS_PYJMS_DeliveryTime" in detail and "'soon'" in detail
    # the malformed property stays out of the copy, so reading the dead letter never fails again
    assert not m.property_exists("JMS_PYJMS_DeliveryTime")
    assert m.get_string_property("JMS_PYJMS_DDL_Target") == "queue://ORDERS.F1"
    # logged once; the processor never failed and restarted
    assert len(poison_lines(caplog, "JMS_PYJMS_DeliveryTime")) == 1
    assert not [r for r in caplog.records if "delay processor" in r.getMessage() and "failed" in r.getMessage()]
