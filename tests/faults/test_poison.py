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
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import pyjms
from pyjms.bridge.contract import DEAD_LETTER_QUEUE, DLQ_DETAIL, QUARANTINE_REASON, STAGING_QUEUE
from pyjms.broker import AccessRule, EmbeddedBroker
from pyjms.dlq import header as dlh
from pyjms.reasons import MQRC
from tests.conftest import ROOT, BrokerProcess, drain

try:
    import stomp
except ImportError as e:
    pytest.skip(f"stomp.py cannot be imported ({e})", allow_module_level=True)

WAIT_S = 10.0


class StompPutter(stomp.ConnectionListener):
    """A STOMP 1.2 connection that puts frames and waits for the broker's receipt."""

    def __init__(self, port: int, user: str | None, password: str | None) -> None:
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
        self.conn.send(
            f"/queue/{queue_name}", body, headers={"persistent": "true", **headers, "receipt": receipt}
        )
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
        AccessRule(
            "ORDERS.>", read=["senders", "mal"], write=["senders", "mal"], admin=["senders", "mal", "ops"]
        ),
        AccessRule(DEAD_LETTER_QUEUE, read=["ops"], write=["ops"], admin=["ops"]),
        AccessRule("ActiveMQ.DLQ", read=["ops"], write=["ops"], admin=["ops"]),
    ]
    broker = EmbeddedBroker(
        name=f"pyjms-poison-{uuid.uuid4().hex[:6]}", users=users, access=access, stomp_port=0
    )
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
    mal.put(
        STAGING_QUEUE,
        "poison",
        {"JMS_PYJMS_DeliveryTime": "soon", "JMS_PYJMS_DDL_Target": "queue://ORDERS.F1", "case": case},
    )
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
    assert not [
        r for r in caplog.records if "delay processor" in r.getMessage() and "failed" in r.getMessage()
    ]


# ---------------------------------------------------------------------------- finding 2

BAD_EXPIRATION = {"JMS_PYJMS_Expiration": "y"}


@pytest.fixture
def stomp_tcp(tcp_broker: BrokerProcess) -> Iterator[StompPutter]:
    putter = StompPutter(tcp_broker.stomp_port, None, None)
    yield putter
    putter.close()


def put_mixed(putter: StompPutter, queue_name: str, case: str) -> None:
    """Three valid messages with a poison one (JMS_PYJMS_Expiration 'y') among them."""
    for n, extra in enumerate([{}, BAD_EXPIRATION, {}, {}]):
        putter.put(queue_name, f"m{n}", {"case": case, "n": str(n), **extra})


def quarantined(url: str, queue_name: str, case: str, *, dlq: str = "ActiveMQ.DLQ") -> list[pyjms.Message]:
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(dlq), f"case = '{case}'")
        found = []
        while (m := consumer.receive(2000 if not found else 300)) is not None:
            found.append(m)
    for m in found:
        header = dlh.DeadLetterHeader.from_message(m)
        assert header is not None and header.reason == QUARANTINE_REASON and header.dest_q == queue_name
        assert "JMS_PYJMS_Expiration is 'y' (String)" in m.get_string_property(DLQ_DETAIL)
        assert not m.property_exists("JMS_PYJMS_Expiration")
    return found


@pytest.mark.parametrize("how", ["receive", "receive_batch", "listener"])
def test_finding2_a_receiver_hands_over_the_valid_and_quarantines_the_poison(
    tcp_broker, stomp_tcp, caplog, how
):
    caplog.set_level(logging.WARNING)
    case = f"f2-{how}-{uuid.uuid4().hex[:8]}"
    queue_name = f"ORDERS.F2.{case}"
    put_mixed(stomp_tcp, queue_name, case)
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:  # AUTO_ACKNOWLEDGE
        consumer = ctx.create_consumer(ctx.create_queue(queue_name))
        if how == "receive":
            got = []
            while (m := consumer.receive(2000)) is not None:
                got.append(m)
        elif how == "receive_batch":
            got = []
            while batch := consumer.receive_batch(10, 2000):
                got.extend(batch)
        else:
            heard: queue.Queue[pyjms.Message] = queue.Queue()
            consumer.set_message_listener(heard.put)
            got = [heard.get(timeout=WAIT_S) for _ in range(3)]
            time.sleep(0.5)
            assert heard.empty()
            consumer.set_message_listener(None)
        assert [m.get_string_property("n") for m in got] == ["0", "2", "3"]
        # nothing is left behind, unacknowledged or not
        assert consumer.receive(500) is None
    assert len(quarantined(tcp_broker.tcp_url, queue_name, case)) == 1
    if how != "listener":  # a listener's is logged when its dispatcher next finds nothing
        assert (
            len([r for r in caplog.records if r.name == "pyjms.poison" and queue_name in r.getMessage()]) == 1
        )


def test_finding2_a_browse_skips_the_poison_and_reports_it(tcp_broker, stomp_tcp, caplog):
    caplog.set_level(logging.INFO)
    case = f"f2-browse-{uuid.uuid4().hex[:8]}"
    queue_name = f"ORDERS.F2.{case}"
    put_mixed(stomp_tcp, queue_name, case)
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        queue_ = ctx.create_queue(queue_name)
        with ctx.create_browser(queue_) as browser:
            shown = [m.get_string_property("n") for m in browser]
            skipped = browser.skipped_poison()
        assert shown == ["0", "2", "3"]
        assert len(skipped) == 1 and skipped[0].startswith("ID:")
        assert [r for r in caplog.records if r.name == "pyjms.poison" and skipped[0] in r.getMessage()]
        # a browse leaves it where it is: a receiver quarantines it
        got = ctx.create_consumer(queue_, f"JMSMessageID = '{skipped[0]}'").receive(1000)
        assert got is None
    assert len(quarantined(tcp_broker.tcp_url, queue_name, case)) == 1


def test_finding2_dlq_handler_processes_the_valid_and_quarantines_the_poison(tcp_broker, stomp_tcp, tmp_path):
    case = f"F2DLQ{uuid.uuid4().hex[:8]}"
    dlq, target, poison_out = f"DLQ.F2.{case}", f"ORDERS.F2T.{case}", f"POISON.F2.{case}"
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        for n in range(6):
            m = ctx.create_text_message(f"dead {n}")
            m.set_string_property("case", case)
            dlh.dead_letter(ctx, m, dlq, MQRC.Q_FULL, dest_q=target)
    header = dlh.DeadLetterHeader.create(MQRC.Q_FULL, target).to_properties()
    stomp_tcp.put(
        dlq, "bad dead letter", {"case": case, **{k: str(v) for k, v in header.items()}, **BAD_EXPIRATION}
    )
    rules = tmp_path / "rules.txt"
    rules.write_text(
        f"WAIT(NO)\nREASON(MQRC_Q_FULL) ACTION(FWD) FWDQ({target}.OUT)\n"
        f"REASON(MQRC_FORMAT_ERROR) ACTION(FWD) FWDQ({poison_out})\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyjms",
            "dlq-handler",
            "--url",
            tcp_broker.tcp_url,
            "-q",
            dlq,
            "-r",
            str(rules),
            "--progress",
            "0",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "FWD 7" in done.stdout and "quarantined 1" in done.stdout, done.stdout
    assert "JMS_PYJMS_Expiration is 'y'" in done.stderr  # logged, once
    assert done.stderr.count("JMS_PYJMS_Expiration is 'y'") == 1
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        forwarded = drain(ctx.create_consumer(ctx.create_queue(f"{target}.OUT")))
        assert sorted(m.get_text() for m in forwarded) == [f"dead {n}" for n in range(6)]
        poison = drain(ctx.create_consumer(ctx.create_queue(poison_out)))
        assert len(poison) == 1 and poison[0].get_body(bytes) == b"bad dead letter"
        header_after = dlh.DeadLetterHeader.from_message(poison[0])
        assert header_after.reason == QUARANTINE_REASON and header_after.dest_q == target
        assert "'y'" in poison[0].get_string_property(DLQ_DETAIL)
        assert ctx.create_consumer(ctx.create_queue(dlq)).receive(300) is None  # nothing left behind
