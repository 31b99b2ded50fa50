"""SIGKILLs under load (issue 15, section 6): of the broker, with and without failover, and of
a consumer process. Each test counts sent, received, lost and duplicated by a sequence number
on every message, and asserts nothing is lost and nothing is duplicated beyond the documented
at-least-once window, whose copies must carry JMSRedelivered.

All run against one ``pyjms broker --data DIR`` process (ActiveMQ Classic, KahaDB) on a fixed
port, SIGKILLed and started again on the same port and data (tests/faults/restartable.py).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import pyjms
from pyjms.dlq import DLQHandler
from tests.faults.restartable import ROOT, RestartableBroker

pytestmark = pytest.mark.slow

ACTIVEMQ_DLQ = "ActiveMQ.DLQ"


@pytest.fixture(scope="module")
def broker(tmp_path_factory) -> RestartableBroker:
    b = RestartableBroker(tmp_path_factory.mktemp("kills"))
    yield b
    b.stop()


@pytest.fixture
def qname() -> str:
    return f"KILLS.{uuid.uuid4().hex[:8]}"


def _seq_message(run: str, seq: int) -> pyjms.TextMessage:
    m = pyjms.TextMessage(f"m{seq}")
    m.set_string_property("run", run)
    m.set_int_property("seq", seq)
    return m


def _dead_letters_of(url: str, run: str) -> list[pyjms.Message]:
    """This run's copies on ActiveMQ.DLQ (browsed, left there)."""
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        with ctx.create_browser(ctx.create_queue(ACTIVEMQ_DLQ), f"run = '{run}'") as browser:
            return list(browser)


# ------------------------------------------------------------------ 1. broker SIGKILL, failover


@dataclass
class _Produced:
    returned: list[int] = field(default_factory=list)  # sends that returned: durable
    raised: list[tuple[int, str]] = field(default_factory=list)  # sends that raised, retried
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


@dataclass
class _Consumed:
    # (seq, JMSRedelivered, delivery count) of every message handed over, before its acknowledge
    rows: list[tuple[int, bool, int]] = field(default_factory=list)
    ack_failures: list[tuple[int, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    error: BaseException | None = None


def _produce(url: str, queue: str, run: str, messages: int, produced: _Produced) -> None:
    """Persistent sends, one at a time; a send that raises is sent again (same seq)."""
    try:
        with pyjms.ConnectionFactory(url).create_context() as ctx:
            producer = ctx.create_producer()
            target = ctx.create_queue(queue)
            for seq in range(messages):
                for _attempt in range(20):
                    try:
                        producer.send(target, _seq_message(run, seq))
                    except pyjms.JMSRuntimeException as e:
                        produced.raised.append((seq, f"{type(e).__name__}: {e}"))
                        time.sleep(0.5)
                        continue
                    produced.returned.append(seq)
                    break
                else:
                    raise AssertionError(f"seq {seq}: 20 sends raised: {produced.raised[-3:]}")
    except BaseException as e:  # noqa: BLE001 - reported by the test
        produced.error = e
    finally:
        produced.done.set()


def _consume_client_ack(url: str, queue: str, consumed: _Consumed, stop: threading.Event) -> None:
    """CLIENT_ACKNOWLEDGE: each message is recorded, then acknowledged (a window of one)."""
    try:
        with pyjms.ConnectionFactory(url).create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
            consumer = ctx.create_consumer(ctx.create_queue(queue))
            while not stop.is_set():
                m = consumer.receive(200)
                if m is None:
                    continue
                seq = m.get_int_property("seq")
                with consumed.lock:
                    consumed.rows.append((seq, m.get_jms_redelivered(), m.get_delivery_count()))
                try:
                    m.acknowledge()
                except pyjms.JMSRuntimeException as e:
                    consumed.ack_failures.append((seq, f"{type(e).__name__}: {e}"))
    except BaseException as e:  # noqa: BLE001 - reported by the test
        consumed.error = e


def test_broker_sigkill_with_failover_under_load_loses_and_duplicates_nothing(broker, qname):
    """A failover producer (persistent sends) and a failover CLIENT_ACKNOWLEDGE consumer run
    over 3,000 messages; the broker is SIGKILLed a third of the way in and started again.

    What really happens (asserted): under failover a send does not raise during the outage; it
    blocks until the transport has reconnected and then completes, and a send the broker had
    already stored before the kill is not stored twice (ActiveMQ's producer audit, rebuilt
    from KahaDB's journal at start). Should a send raise anyway, the test sends it again and
    counts it, and the counts below still hold. The consumer is handed every message exactly
    once; ActiveMQ's failover consumer suppresses the redelivery of a message it had handed
    over but not acknowledged, and the broker puts that copy on ActiveMQ.DLQ ("Suppressing
    duplicate delivery on connection"). A DLQ handler with a FWD rule back to the queue drops
    those copies (pyjms.dlq: ProviderPlugin.duplicate_dead_letter) and forwards nothing.
    """
    messages, run = 3000, uuid.uuid4().hex
    url = broker.failover_url()
    produced, consumed, stop = _Produced(), _Consumed(), threading.Event()
    consumer = threading.Thread(target=_consume_client_ack, args=(url, qname, consumed, stop), daemon=True)
    producer = threading.Thread(target=_produce, args=(url, qname, run, messages, produced), daemon=True)
    consumer.start()
    producer.start()
    try:
        deadline = time.monotonic() + 120
        while len(produced.returned) < messages // 3 and not produced.done.is_set():
            assert time.monotonic() < deadline, "the producer did not get going"
            time.sleep(0.01)
        assert not produced.done.is_set(), "the producer finished before the kill"
        sent_at_kill, received_at_kill = len(produced.returned), len(consumed.rows)
        broker.restart_after_kill()
        assert produced.done.wait(180), "the producer did not finish after the restart"
        assert produced.error is None, repr(produced.error)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with consumed.lock:
                if len({row[0] for row in consumed.rows}) >= messages:
                    break
            time.sleep(0.1)
        time.sleep(2.0)  # a duplicate would come now
    finally:
        stop.set()
        consumer.join(30)
    assert consumed.error is None, repr(consumed.error)
    seqs = Counter(row[0] for row in consumed.rows)
    lost = set(range(messages)) - set(seqs)
    duplicated = {seq: n for seq, n in seqs.items() if n > 1}
    dead_letters = _dead_letters_of(broker.tcp_url, run)
    figures = (
        f"sent {len(produced.returned)} (raised and resent {len(produced.raised)}), killed after "
        f"{sent_at_kill} sent and {received_at_kill} received; received {len(consumed.rows)}, "
        f"lost {len(lost)}, duplicated {len(duplicated)}, DLQ copies {len(dead_letters)}, "
        f"acknowledge failures {consumed.ack_failures[:3]}, send failures {produced.raised[:3]}"
    )
    print(figures)
    assert sorted(produced.returned) == list(range(messages)), figures
    assert not lost, f"{sorted(lost)[:20]}: {figures}"
    assert not duplicated, f"{duplicated}: {figures}"
    # the copies ActiveMQ dead-lettered are of messages the consumer was handed already
    dead_seqs = Counter(m.get_int_property("seq") for m in dead_letters)
    assert all(n == 1 for n in dead_seqs.values()) and set(dead_seqs) <= set(seqs), figures
    for m in dead_letters:
        assert "Suppressing duplicate delivery on connection" in m.get_string_property(
            "dlqDeliveryFailureCause"
        )
    stats = DLQHandler(
        broker.tcp_url, ACTIVEMQ_DLQ, f"WAIT(NO)\nDESTQ({qname}) ACTION(FWD) FWDQ({qname})"
    ).run()
    assert stats.duplicates >= len(dead_letters) and stats.forwarded == 0, stats.summary()
    assert _dead_letters_of(broker.tcp_url, run) == []
    with pyjms.ConnectionFactory(broker.tcp_url).create_context() as ctx:
        assert ctx.create_consumer(ctx.create_queue(qname)).receive(1000) is None  # nothing forwarded


# ------------------------------------------------------------------ 2. broker SIGKILL, plain tcp


@dataclass
class _Client:
    """One client thread's record: the error that ended its first context, and the calls made."""

    errors: list[tuple[str, BaseException]] = field(default_factory=list)
    returned: list[int] = field(default_factory=list)  # producer: sends that returned
    in_doubt: list[int] = field(default_factory=list)  # sent or received when the error came
    committed: list[tuple[int, bool]] = field(default_factory=list)  # consumer: (seq, redelivered)
    rolled_back: list[int] = field(default_factory=list)  # consumer: received, then the error
    done: threading.Event = field(default_factory=threading.Event)


def _produce_until_error(
    url: str, queue: str, messages: int, client: _Client, restarted: threading.Event
) -> None:
    """Persistent sends; on the first error, waits for the restart and goes on in a new context
    with the next seq. The send that raised is in doubt (stored or not, the broker alone knows)
    and is not sent again: resending it could duplicate it."""
    seq = 0
    try:
        while seq < messages:
            try:
                with pyjms.ConnectionFactory(url).create_context() as ctx:
                    producer, target = ctx.create_producer(), ctx.create_queue(queue)
                    while seq < messages:
                        producer.send(target, str(seq))
                        client.returned.append(seq)
                        seq += 1
            except BaseException as e:  # noqa: BLE001 - what it is, the test asserts
                client.errors.append(("send", e))
                client.in_doubt.append(seq)
                seq += 1
                if not restarted.wait(180):
                    return
    finally:
        client.done.set()


def _consume_until_error(
    url: str, queue: str, client: _Client, restarted: threading.Event, stop: threading.Event
) -> None:
    """Transacted receives, committed every 50 and recorded once committed; on the first error,
    waits for the restart and goes on in a new context. A commit that failed leaves its batch
    in doubt; a failed receive's batch was not committed and comes again."""
    batch: list[tuple[int, bool]] = []
    while not stop.is_set():
        call = "receive"
        try:
            with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as ctx:
                consumer = ctx.create_consumer(ctx.create_queue(queue))
                while not stop.is_set():
                    call = "receive"
                    m = consumer.receive(200)
                    if m is not None:
                        batch.append((int(m.get_text()), m.get_jms_redelivered()))
                    if len(batch) >= 50 or (m is None and batch):
                        call = "commit"
                        ctx.commit()
                        client.committed.extend(batch)
                        batch = []
        except BaseException as e:  # noqa: BLE001 - what it is, the test asserts
            client.errors.append((call, e))
            if isinstance(e, pyjms.TransactionInDoubtRuntimeException):
                client.in_doubt.extend(seq for seq, _ in batch)
            else:  # not committed: the batch comes again
                client.rolled_back.extend(seq for seq, _ in batch)
            batch = []
            if not restarted.wait(180):
                return


def _assert_one_clear_error(what: str, call: str, error: BaseException) -> None:
    """A pyjms error naming the broken connection, never a Java or JPype one."""
    assert isinstance(error, pyjms.JMSRuntimeException), f"{what} {call}: {error!r}"
    assert type(error).__module__ == "pyjms.errors", f"{what} {call}: {error!r}"
    if isinstance(error, pyjms.TransactionInDoubtRuntimeException):
        assert call == "commit" and error.reason == 2549, f"{what} {call}: {error!r}"
    else:
        assert error.reason in (2009, 2059), f"{what} {call}: {error!r}"


class _Bystander:
    """A context with a consumer, a browser and a producer made before the broker dies, idle
    until then, on a queue of its own; and a transacted context with a send not yet committed."""

    def __init__(self, url: str, queue: str) -> None:
        self.ctx = pyjms.ConnectionFactory(url).create_context()
        self.queue = self.ctx.create_queue(queue)
        self.consumer = self.ctx.create_consumer(self.queue)
        assert self.consumer.receive_no_wait() is None  # the consumer is on the wire now
        self.browser = self.ctx.create_browser(self.queue)
        self.producer = self.ctx.create_producer()
        self.tx = pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED)
        self.tx.create_producer().send(self.tx.create_queue(queue), "never committed")

    def close(self) -> None:
        self.ctx.close()
        self.tx.close()

    def errors(self) -> list[tuple[str, BaseException]]:
        """What each says when used after the broker died: each raises (a receive may first
        come back empty, until the client has seen the connection go)."""
        errors: list[tuple[str, BaseException]] = []
        calls = {
            "receive": lambda: self.consumer.receive(100),
            "browse": lambda: self.browser.next_batch(10),
            "send": lambda: self.producer.send(self.queue, "after the kill"),
        }
        for call, fn in calls.items():
            for _ in range(50):
                try:
                    fn()
                except BaseException as e:  # noqa: BLE001 - what it is, the test asserts
                    errors.append((call, e))
                    break
                time.sleep(0.1)
            else:
                raise AssertionError(f"{call} on a context whose broker died did not raise")
        try:  # the connection failed before: the commit cannot leave, and nothing is committed
            self.tx.commit()
        except BaseException as e:  # noqa: BLE001 - what it is, the test asserts
            errors.append(("commit after the failure", e))
        else:
            raise AssertionError("a commit on a context whose broker died did not raise")
        return errors


def test_broker_sigkill_over_plain_tcp_is_one_pyjms_error_and_loses_nothing_committed(broker, qname):
    """A producer (persistent sends) and a transacted consumer over plain tcp://, 3,000
    messages, the broker SIGKILLed a third of the way in. Each client gets one pyjms error:
    MQRC_CONNECTION_BROKEN (2009), or MQRC_Q_MGR_NOT_AVAILABLE (2059), or for a commit whose
    answer the kill took, TransactionInDoubtRuntimeException (2549). A commit on a connection
    the client already knew was gone is IllegalStateRuntimeException (2009), never in doubt, and
    its batch comes again. (ActiveMQ's own error text cannot tell these apart: a written commit
    that lost its answer is reported as "Cannot send, channel has already failed" too, and the
    broker had committed it; those were the 50 "lost" messages of earlier runs.) A context idle
    at the kill raises 2009 on each call, receive and browse included, and its uncommitted send
    is gone. After the restart a new context goes on. Every send that returned is received and committed exactly once; the
    one send that raised was stored or not, never twice; a consumer batch whose commit was in
    doubt was committed whole or redelivered whole."""
    messages = 3000
    producer_side, consumer_side = _Client(), _Client()
    restarted, stop = threading.Event(), threading.Event()
    url = broker.tcp_url
    threads = [
        threading.Thread(
            target=_produce_until_error, args=(url, qname, messages, producer_side, restarted), daemon=True
        ),
        threading.Thread(
            target=_consume_until_error, args=(url, qname, consumer_side, restarted, stop), daemon=True
        ),
    ]
    bystander = _Bystander(url, qname + ".IDLE")
    t0 = time.monotonic()
    timeline: dict[str, float] = {}  # seconds from the start, printed with the figures
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 120
        while len(producer_side.returned) < messages // 3 or len(consumer_side.committed) < 50:
            assert time.monotonic() < deadline and not producer_side.done.is_set(), "no load to kill under"
            time.sleep(0.01)
        timeline["kill"] = time.monotonic() - t0
        broker.kill()
        deadline = time.monotonic() + 60
        while len(producer_side.errors) + len(consumer_side.errors) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # each client learns of the loss: only then is the broker back
        timeline["errors"] = time.monotonic() - t0
        bystander_errors = bystander.errors()
        broker.start()
        timeline["restarted"] = time.monotonic() - t0
        restarted.set()
        assert producer_side.done.wait(180), "the producer did not finish after the restart"
        timeline["produced"] = time.monotonic() - t0
        reached = set(producer_side.returned) | set(producer_side.in_doubt)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if {seq for seq, _ in consumer_side.committed} | set(consumer_side.in_doubt) >= set(
                producer_side.returned
            ):
                break
            time.sleep(0.1)
        timeline["consumed"] = time.monotonic() - t0
        time.sleep(2.0)  # a duplicate would come now
    finally:
        restarted.set()
        stop.set()
        for t in threads:
            t.join(30)
        bystander.close()
    committed = Counter(seq for seq, _ in consumer_side.committed)
    lost = set(producer_side.returned) - set(committed) - set(consumer_side.in_doubt)
    duplicated = {seq: n for seq, n in committed.items() if n > 1}
    figures = (
        f"sent {len(producer_side.returned)} (+{len(producer_side.in_doubt)} in doubt), committed "
        f"{len(consumer_side.committed)}, consumer batch in doubt {len(consumer_side.in_doubt)}, rolled "
        f"back {len(consumer_side.rolled_back)}, lost "
        f"{len(lost)}, duplicated {len(duplicated)}; errors: producer "
        f"{[(c, repr(e)) for c, e in producer_side.errors]}, consumer "
        f"{[(c, repr(e)) for c, e in consumer_side.errors]}, idle context "
        f"{[(c, repr(e)) for c, e in bystander_errors]}"
    )
    print(figures, timeline)
    for what, side in (("producer", producer_side), ("consumer", consumer_side)):
        assert len(side.errors) == 1, f"{what}: {figures}"
        _assert_one_clear_error(what, *side.errors[0])
    for call, error in bystander_errors:
        _assert_one_clear_error("idle context", call, error)
    not_sent = bystander_errors[-1][1]
    assert isinstance(not_sent, pyjms.IllegalStateRuntimeException) and not_sent.reason == 2009, figures
    with pyjms.ConnectionFactory(url).create_context() as ctx:  # indeed nothing was committed
        assert ctx.create_consumer(bystander.queue).receive(1000) is None
    assert not lost, f"{sorted(lost)[:20]}: {figures}"
    assert not duplicated, f"{duplicated}: {figures}"
    assert all(committed[seq] <= 1 for seq in producer_side.in_doubt), figures
    assert len(producer_side.returned) + len(producer_side.in_doubt) == messages, figures
    # a rolled-back batch comes again, except a message whose send was in doubt: a broker may
    # dispatch a persistent message before its store write ends (ActiveMQ's concurrent store
    # and dispatch), so a consumer can glimpse one the kill then loses; its sender was told
    assert all(
        committed[seq] == 1 for seq in consumer_side.rolled_back if seq not in producer_side.in_doubt
    ), figures  # came again
    if consumer_side.in_doubt:  # committed whole (never seen again) or rolled back whole
        again = [seq for seq in consumer_side.in_doubt if seq in committed]
        assert again in ([], consumer_side.in_doubt), figures
    assert set(committed) <= reached, figures


# ------------------------------------------------------------------ 3. consumer process SIGKILL


def _fill(url: str, queue: str, messages: int) -> None:
    """``messages`` persistent messages whose bodies are their sequence numbers, committed in 500s."""
    with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as ctx:
        producer, target = ctx.create_producer(), ctx.create_queue(queue)
        for start in range(0, messages, 500):
            producer.send_batch(target, [str(seq) for seq in range(start, min(start + 500, messages))])
            ctx.commit()


def _drain(url: str, queue: str) -> list[tuple[int, bool]]:
    """What is left: (seq, JMSRedelivered) of each message, in CLIENT_ACKNOWLEDGE."""
    out = []
    with pyjms.ConnectionFactory(url).create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(queue))
        while (m := consumer.receive(2000)) is not None:
            out.append((int(m.get_text()), m.get_jms_redelivered()))
            m.acknowledge()
    return out


def _kill_when_written(proc: subprocess.Popen, out: Path, messages: int, pattern: str) -> None:
    """SIGKILLs the process once it has written ``messages`` lines that match ``pattern`` (it
    must still be running then)."""
    deadline = time.monotonic() + 120
    while len(re.findall(pattern, out.read_text(errors="replace"), re.MULTILINE)) < messages:
        assert proc.poll() is None, f"the consumer ended before the kill: {proc.returncode}"
        assert time.monotonic() < deadline, "the consumer did not get going"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"it had finished ({proc.returncode}) before the kill"


def _reconcile(
    messages: int, written: list[int], drained: list[tuple[int, bool]]
) -> tuple[Counter[int], set[int], set[int]]:
    """What a killed consumer wrote against what the test drained after it: the drained
    sequence numbers counted, those in both, and those in neither (lost)."""
    drained_seqs = Counter(seq for seq, _ in drained)
    both = set(written) & set(drained_seqs)
    return drained_seqs, both, set(range(messages)) - set(written) - set(drained_seqs)


def test_cli_receive_sigkilled_under_load_has_at_most_its_one_unacknowledged_message_redelivered(
    broker, qname, tmp_path
):
    """``pyjms receive`` (CLIENT_ACKNOWLEDGE, each message acknowledged after it was written and
    flushed) over 3,000 persistent messages, SIGKILLed mid-stream; the test drains the rest.
    What it wrote and what was drained are all 3,000; a message in both is the one the kill
    caught between its write and its acknowledge: at most one, and drained as redelivered."""
    messages = 3000
    _fill(broker.tcp_url, qname, messages)
    out = tmp_path / "received.jsonl"
    with open(out, "w") as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pyjms", "receive", "--url", broker.tcp_url, "-q", qname, "--json"],
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
    try:
        _kill_when_written(proc, out, messages // 3, r"^\{.*\}$")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    written = []
    for line in out.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # the kill cut this write short: the message was not acknowledged
        written.append(int(record["body"]))
    drained = _drain(broker.tcp_url, qname)
    drained_seqs, both, lost = _reconcile(messages, written, drained)
    figures = (
        f"sent {messages}, written {len(written)}, drained {len(drained)}, lost {len(lost)}, "
        f"in both {sorted(both)}, duplicated in the writes {len(written) - len(set(written))}"
    )
    print(figures)
    assert not lost, f"{sorted(lost)[:20]}: {figures}"
    assert len(written) == len(set(written)) and all(n == 1 for n in drained_seqs.values()), figures
    assert both <= {written[-1]}, figures  # only the last write can lack its acknowledge
    assert all(redelivered for seq, redelivered in drained if seq in both), figures


def test_transacted_consumer_sigkilled_under_load_has_only_its_uncommitted_batch_redelivered(
    broker, qname, tmp_path
):
    """A transacted consumer process (tests/faults/transacted_reader.py: prints each message,
    commits every 50) over 3,000 persistent messages, SIGKILLed mid-stream; the test drains the
    rest. A message both printed and drained was printed after the last commit that returned,
    and is drained as redelivered; that batch was committed whole or rolled back whole."""
    messages = 3000
    _fill(broker.tcp_url, qname, messages)
    out = tmp_path / "received.txt"
    with open(out, "w") as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.faults.transacted_reader", broker.tcp_url, qname],
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
    try:
        _kill_when_written(proc, out, messages // 3 + 10, r"^\d+ [01]$")  # mid-batch
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    written: list[int] = []
    uncommitted: list[int] = []  # printed after the last "committed" line
    for line in out.read_text().splitlines():
        if line == "committed":
            uncommitted = []
        elif re.fullmatch(r"\d+ [01]", line):
            seq = int(line.split()[0])
            written.append(seq)
            uncommitted.append(seq)
    drained = _drain(broker.tcp_url, qname)
    drained_seqs, both, lost = _reconcile(messages, written, drained)
    figures = (
        f"sent {messages}, written {len(written)}, drained {len(drained)}, lost {len(lost)}, "
        f"uncommitted when killed {len(uncommitted)}, in both {len(both)}"
    )
    print(figures)
    assert not lost, f"{sorted(lost)[:20]}: {figures}"
    assert len(written) == len(set(written)) and all(n == 1 for n in drained_seqs.values()), figures
    assert len(uncommitted) <= 50, figures
    assert both in (set(), set(uncommitted)), figures  # the batch: committed whole or rolled back whole
    assert all(redelivered for seq, redelivered in drained if seq in both), figures
