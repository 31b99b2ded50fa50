"""Issue 32, part 5 across a failover pair: pyjms's services keep working when the BROKER is
SIGKILLed, not only a service.

Two ``pyjms broker --shared-store`` processes share one data directory: on ActiveMQ Classic the
first holds KahaDB's lock and serves; on Artemis the first is the shared-store primary and the
second its backup. The second says it is standing by and takes the store over when the first
dies (tests/faults/broker_pair.py). Clients and services reach the pair by
``failover:(tcp://A,tcp://B)`` or ``artemis+(tcp://A,tcp://B)?ha=true&...``. Under delayed load
the serving broker is SIGKILLed mid-run: the standby must serve (its time is printed), and
every delayed message must be handled once, none before it was due. Under cooperative
dispatchers, no message goes to two of them at once.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import pyjms
from pyjms.browse import mark_browse_interval, set_mark_browse_interval
from tests.cli.conftest import run_cli
from tests.faults.broker_pair import BrokerPair, PairedBroker, is_standing_by
from tests.faults.mark_services import MARK_LEASE_MS, Dispatch, dispatch
from tests.faults.processes import ProcessorProcess
from tests.ports import free_port

pytestmark = pytest.mark.slow

#: delayed messages, due over SPREAD_MS from FIRST_DELAY_MS after they are sent (the kills fall
#: mid-run by the clock, whatever their number: 67 and 252 of 500 had come by the broker's kill)
N = 500
FIRST_DELAY_MS = 800
SPREAD_MS = 4000
#: a standby SERVICE takes over within this long of the active one's SIGKILL (issue 32). How long
#: the standby BROKER takes to serve is printed, not asserted: it is the broker's own time to
#: take the store over and start, which a loaded machine stretches (docs/reliability.md gives the
#: measured times); the tests wait up to 30 s for it
TAKEOVER_S = 5.0
#: ActiveMQ Classic's pair and Artemis's (shared-store HA)
PROVIDERS = ["activemq", "artemis"]


@dataclass
class _Received:
    """(seq, received at ms, due at ms) of every message whose acknowledge returned; of those
    whose acknowledge's outcome the takeover left unknown (``in_doubt``: the message may come
    again, or not); and how many acknowledges the takeover rolled back (their messages come
    again)."""

    rows: list[tuple[int, int, int]] = field(default_factory=list)
    in_doubt: list[tuple[int, int, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    error: BaseException | None = None
    rolled_back: int = 0

    def seqs(self) -> set[int]:
        with self.lock:
            return {row[0] for row in self.rows}


def _receive(url: str, target: str, run: str, got: _Received, stop: threading.Event) -> None:
    """A failover CLIENT_ACKNOWLEDGE consumer that counts a message as handled once its acknowledge
    returned. ActiveMQ's failover consumer hands each message over once across a reconnect (as
    tests/faults/test_kills.py); Artemis's recreates its session on the broker that took over: an
    acknowledge the takeover rolled back raises TransactionRolledBackRuntimeException (its message
    comes again), one whose answer it lost raises ConnectionBrokenRuntimeException (its message
    may come again; docs/reliability.md)."""
    try:
        with pyjms.ConnectionFactory(url).create_context(pyjms.CLIENT_ACKNOWLEDGE) as ctx:
            consumer = ctx.create_consumer(ctx.create_queue(target), f"run = '{run}'")
            while not stop.is_set():
                m = consumer.receive(200)
                if m is None:
                    continue
                row = (m.get_int_property("seq"), int(time.time() * 1000), m.get_jms_delivery_time())
                try:
                    m.acknowledge()
                except pyjms.TransactionRolledBackRuntimeException:
                    got.rolled_back += 1
                    continue
                except pyjms.ConnectionBrokenRuntimeException:
                    with got.lock:
                        got.in_doubt.append(row)
                    continue
                with got.lock:
                    got.rows.append(row)
    except BaseException as e:  # noqa: BLE001 - reported by the test
        got.error = e


def _send_delayed(url: str, target: str, run: str, spread_ms: int = SPREAD_MS) -> None:
    """N persistent messages through the staging queue, due over ``spread_ms``."""
    factory = pyjms.ConnectionFactory(url, delivery_delay="staging")
    with factory.create_context(pyjms.SESSION_TRANSACTED) as ctx:
        q = ctx.create_queue(target)
        p = ctx.create_producer().set_delivery_mode(pyjms.PERSISTENT).set_property("run", run)
        for i in range(N):
            p.set_delivery_delay(FIRST_DELAY_MS + i * spread_ms // N).set_property("seq", i).send(q, str(i))
            if i % 100 == 99:
                ctx.commit()
        ctx.commit()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_delayed_delivery_carries_on_when_the_serving_broker_of_a_pair_is_sigkilled(
    tmp_path: Path, provider: str
) -> None:
    """Each broker of the pair runs its own delay processor: the killed broker's dies with it,
    the one that takes the store over starts its own and finds what was staged and filed."""
    pair = BrokerPair(tmp_path, provider=provider)
    assert pair.second is not None
    standby = pair.second
    assert standby.ready_at(1) is None, "one broker serves at a time"
    url, target, run = pair.url, f"PAIR.{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]
    got, stop = _Received(), threading.Event()
    consumer = threading.Thread(target=_receive, args=(url, target, run, got, stop), daemon=True)
    consumer.start()
    try:
        _send_delayed(url, target, run)
        sent = time.monotonic()
        # mid-run: some delivered, some filed in slots, some still staged (on a loaded machine
        # the first deliveries may come later: then it is killed as soon as they do)
        while (time.monotonic() < sent + (FIRST_DELAY_MS + SPREAD_MS / 3) / 1000 or not got.rows) and (
            time.monotonic() < sent + 30
        ):
            time.sleep(0.05)
        delivered_at_kill = len(got.seqs())
        assert 0 < delivered_at_kill < N, delivered_at_kill
        killed = time.monotonic()
        pair.first.kill()
        ready = standby.ready_at(30, after=killed)
        assert ready is not None, standby.stderr()[-3000:]
        takeover_s = ready - killed
        _wait_until_delivered(got)
    finally:
        stop.set()
        consumer.join(30)
        pair.stop()
    wrong = _lost_duplicated_early(got)
    figures = (
        f"killed after {delivered_at_kill} of {N} delivered; the standby served {takeover_s:.2f} s after; "
        + _counted(wrong)
        + f"; acknowledges rolled back by the takeover {got.rolled_back}, in doubt {len(got.in_doubt)}"
    )
    print(figures)
    assert wrong == ([], [], []), figures


def _lost_duplicated_early(got: _Received) -> tuple[list[int], list[int], list[int]]:
    """The seqs never handled, handled more than once, and received before they were due. A
    message whose acknowledge was in doubt counts as handled if it did not come again."""
    assert got.error is None, repr(got.error)
    counts = Counter(seq for seq, _, _ in got.rows)
    lost = sorted(set(range(N)) - set(counts) - {seq for seq, _, _ in got.in_doubt})
    duplicated = sorted(seq for seq, n in counts.items() if n > 1)
    early = sorted(seq for seq, at, due in got.rows + got.in_doubt if at < due)
    return lost, duplicated, early


def _counted(wrong: tuple[list[int], list[int], list[int]]) -> str:
    lost, duplicated, early = wrong
    return f"lost {len(lost)}, duplicated {len(duplicated)}, early {len(early)} (e.g. {lost[:3]}, {duplicated[:3]}, {early[:3]})"


def _wait_until_delivered(got: _Received, within_s: float = 60) -> None:
    """Until every message came (or ``within_s``), then 1.5 s more: a duplicate shows up then."""
    deadline = time.monotonic() + within_s
    while len(got.seqs()) < N and time.monotonic() < deadline and got.error is None:
        time.sleep(0.1)
    time.sleep(1.5)


def _elected(
    processors: list[ProcessorProcess], timeout: float, since: list[float]
) -> ProcessorProcess | None:
    """The processor that said it became active since its time in ``since``, waiting up to
    ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p, after in zip(processors, since, strict=True):
            if p.active_at(0.05, after) is not None:
                return p
    return None


def _is_standing_by(line: str) -> bool:
    return line.startswith("standing by")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_standalone_processors_on_a_pair_stand_again_on_the_broker_that_took_over(
    tmp_path: Path, provider: str
) -> None:
    """Two ``pyjms delay-processor`` processes on the pair's failover URL, beside brokers that run
    none. The serving broker is SIGKILLed mid-run: the processors' connections end with it (a
    service's connection does not fail over: its leadership went with the broker), they stand
    again on the broker that took over, and one is active. Then the active one is SIGKILLed
    and the other takes over within 5 s: the election works on the new broker too."""
    pair = BrokerPair(tmp_path, "--no-delay-processor", provider=provider)
    assert pair.second is not None
    standby = pair.second
    url, target, run = pair.url, f"PAIR.{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]
    processors = [ProcessorProcess(url), ProcessorProcess(url)]
    got, stop = _Received(), threading.Event()
    consumer = threading.Thread(target=_receive, args=(url, target, run, got, stop), daemon=True)
    try:
        first_leader = _elected(processors, 60, [0.0, 0.0])
        assert first_leader is not None, [p.states for p in processors]
        other = next(p for p in processors if p is not first_leader)
        assert other.wait_line(_is_standing_by, 30) is not None, other.states
        consumer.start()
        spread_ms = 2 * SPREAD_MS  # room for two takeovers
        _send_delayed(url, target, run, spread_ms)
        sent = time.monotonic()
        while (time.monotonic() < sent + (FIRST_DELAY_MS + spread_ms / 5) / 1000 or not got.rows) and (
            time.monotonic() < sent + 30
        ):
            time.sleep(0.05)
        delivered_at_kill = len(got.seqs())
        killed = time.monotonic()
        pair.first.kill()
        ready = standby.ready_at(30, after=killed)
        assert ready is not None, standby.stderr()[-3000:]
        # the active one says it stands by (its connections ended with the broker); then the broker
        # that took over elects one of the two
        deposed = first_leader.wait_line(_is_standing_by, 30, after=killed)
        assert deposed is not None, first_leader.states
        since = [deposed if p is first_leader else killed for p in processors]
        leader = _elected(processors, 30, since)
        assert leader is not None, [p.states for p in processors]
        leader_s = (leader.active_at(0, since[processors.index(leader)]) or 0) - killed
        delivered_at_second_kill = len(got.seqs())
        assert delivered_at_second_kill < N, "all delivered before the processor was killed"
        processor_killed = time.monotonic()
        leader.kill()
        survivor = next(p for p in processors if p is not leader)
        took_over = survivor.active_at(TAKEOVER_S + 5, processor_killed)
        assert took_over is not None, survivor.states
        processor_takeover_s = took_over - processor_killed
        _wait_until_delivered(got)
    finally:
        stop.set()
        consumer.join(30)
        for p in processors:
            p.stop()
        pair.stop()
    wrong = _lost_duplicated_early(got)
    figures = (
        f"broker killed after {delivered_at_kill} of {N} delivered, the standby broker served "
        f"{ready - killed:.2f} s after, a processor was active {leader_s:.2f} s after; the active "
        f"processor killed after {delivered_at_second_kill} delivered, the other active "
        f"{processor_takeover_s:.2f} s after; "
        + _counted(wrong)
        + f"; acknowledges rolled back by the takeover {got.rolled_back}, in doubt {len(got.in_doubt)}"
    )
    print(figures)
    assert wrong == ([], [], []), figures
    assert processor_takeover_s <= TAKEOVER_S, figures


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_auto_acknowledge_receive_after_a_takeover_gets_its_message_once(
    tmp_path: Path, provider: str
) -> None:
    """An AUTO_ACKNOWLEDGE context sent on its session (a request, say, whose answer it then
    waits for) when the serving broker was SIGKILLed: its next receive returns the message, once.
    Artemis's client rolls back the first acknowledgement after a failover of a session that had
    worked (AMQ219030); pyjms acknowledges an AUTO_ACKNOWLEDGE receive itself, on a
    CLIENT_ACKNOWLEDGE session, so that receive raised for a message its caller never saw."""
    pair = BrokerPair(tmp_path, "--no-delay-processor", provider=provider)
    assert pair.second is not None
    standby = pair.second
    try:
        with pyjms.ConnectionFactory(pair.url).create_context() as ctx:
            queue = ctx.create_queue(f"PAIR.AUTO.{uuid.uuid4().hex[:8]}")
            consumer = ctx.create_consumer(queue)
            ctx.create_producer().set_delivery_mode(pyjms.PERSISTENT).send(queue, "once")
            killed = time.monotonic()
            pair.first.kill()
            assert standby.ready_at(30, after=killed) is not None, standby.stderr()[-3000:]
            m = consumer.receive(30_000)
            assert m is not None and m.get_text() == "once"
            assert consumer.receive(1000) is None
    finally:
        pair.stop()


@pytest.mark.parametrize(
    "args, refusal",
    [
        (
            ("--port", "0", "--shared-store"),
            "--shared-store: the pair shares a data directory; give it (--data DIR)",
        ),
        (
            ("--port", "0", "--shared-store", "--data", "DATA", "--provider", "artemis"),
            "--shared-store --provider artemis: each broker of the pair needs a fixed --port, not 0",
        ),
        (
            (
                "--port",
                "61999",
                "--shared-store",
                "--data",
                "DATA",
                "--provider",
                "artemis",
                "--tls-keystore",
                "DATA",
            ),
            "--shared-store --provider artemis: the pair speaks plain TCP only, without --tls-keystore",
        ),
    ],
)
def test_a_shared_store_without_its_directory_or_an_artemis_pair_on_port_0_or_tls_is_one_line(
    tmp_path: Path, args: tuple[str, ...], refusal: str
) -> None:
    done = run_cli("broker", *(str(tmp_path) if a == "DATA" else a for a in args), timeout=60)
    assert done.returncode == 2 and done.stderr.strip() == f"pyjms broker: error: {refusal}", done.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_standby_broker_serves_nothing_and_ctrl_c_ends_it(tmp_path: Path, provider: str) -> None:
    """The second broker on a held store says it stands by, listens on nothing while it waits,
    and ends with 130 on Ctrl-C; without --shared-store the held store is refused (tests/cli)."""
    pair = BrokerPair(tmp_path, provider=provider)
    assert pair.second is not None
    try:
        standby = pair.second
        assert standby.line_at(is_standing_by) is not None and standby.ready_at(1) is None, standby.lines
        with pytest.raises(pyjms.JMSRuntimeException):
            scheme = "artemis+tcp" if provider == "artemis" else "tcp"
            pyjms.ConnectionFactory(f"{scheme}://127.0.0.1:{standby.port}").create_context().close()
        third = PairedBroker(
            free_port(), pair.data_dir, provider=provider
        )  # a second standby: any number may wait
        try:
            assert third.wait_line(is_standing_by, 60) is not None, third.stderr()[-2000:]
        finally:
            third.stop()
        assert third.proc.returncode == 130, third.stderr()[-2000:]
    finally:
        pair.stop()


#: messages the cooperative dispatchers share, and how many they dispatch before the kill
MESSAGES = 400
BEFORE_KILL = 50
#: the MsgMarkBrowseInterval an administrator sets before the kill (pyjms broker's is 5000)
INTERVAL_MS = 7000


def _overlapping(dispatched: list[Dispatch]) -> list[tuple[Dispatch, Dispatch]]:
    """Hand-outs of one message to a dispatcher while another still held it (before that one's
    get and commit ended). A hand-out after another dispatcher got the message is no overlap: a
    browse after a takeover may show a message consumed just before (docs/browse.md), and the
    get finds nothing."""
    by_token: dict[str, list[Dispatch]] = {}
    for d in dispatched:
        by_token.setdefault(d.token, []).append(d)
    found = []
    for handouts in by_token.values():
        handouts.sort(key=lambda d: d.handed_at)
        for i, later in enumerate(handouts):
            found += [(earlier, later) for earlier in handouts[:i] if later.handed_at < earlier.done_at]
    return found


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cooperative_marks_hold_when_the_serving_broker_of_a_pair_is_sigkilled(
    tmp_path: Path, provider: str
) -> None:
    """Each broker of the pair runs its own mark service: the one that takes the store over
    finds the killed one's note (PYJMS.MARKS.EPOCH, persistent) and grants no claims while the
    handles restore their marks, so no message a dispatcher held goes to another; and the
    MsgMarkBrowseInterval an administrator set holds (B05), as the note carries it."""
    pair = BrokerPair(tmp_path, "--mark-lease", str(MARK_LEASE_MS), provider=provider)
    assert pair.second is not None
    standby = pair.second
    url, qname = pair.url, f"PAIR.MARKS.{uuid.uuid4().hex[:8]}"
    dispatched: list[Dispatch] = []
    feeding_done, stop = threading.Event(), threading.Event()
    feeding_done.set()
    threads = [
        threading.Thread(
            target=dispatch,
            args=(url, qname, f"d{i}", dispatched, feeding_done, TAKEOVER_S, stop),
            daemon=True,
        )
        for i in range(3)
    ]
    factory = pyjms.ConnectionFactory(url)
    try:
        assert set_mark_browse_interval(factory, INTERVAL_MS) == INTERVAL_MS
        with factory.create_context() as ctx:
            ctx.create_producer().send_batch(ctx.create_queue(qname), [f"m{i}" for i in range(MESSAGES)])
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(dispatched) < BEFORE_KILL and time.monotonic() < deadline:
            time.sleep(0.05)
        before_kill = len(dispatched)
        assert BEFORE_KILL <= before_kill < MESSAGES, before_kill
        killed = time.monotonic()
        pair.first.kill()
        ready = standby.ready_at(30, after=killed)
        assert ready is not None, standby.stderr()[-3000:]
        takeover_s = ready - killed
        for t in threads:
            t.join(120)
        with factory.create_context() as ctx:
            left = ctx.create_consumer(ctx.create_queue(qname)).receive(500)
        interval_after = mark_browse_interval(factory)
    finally:
        # every client ends before the brokers do: a failover client would retry them for ever
        stop.set()
        for t in threads:
            if t.is_alive():
                t.join(30)
        pair.stop()
    tokens = Counter(d.token for d in dispatched)
    got = Counter(d.token for d in dispatched if d.got)
    overlapping = _overlapping(dispatched)
    figures = (
        f"killed after {before_kill} dispatched; the standby served {takeover_s:.2f} s after; "
        f"{len(dispatched)} hand-outs of {len(tokens)} messages, {len(got)} got; "
        f"{len(overlapping)} to a second dispatcher while another held it, e.g. {overlapping[:2]}"
    )
    print(figures)
    assert len(tokens) == MESSAGES and left is None, figures  # every message dispatched and got
    assert not overlapping, figures
    assert all(n == 1 for n in got.values()), figures  # no message got twice
    assert interval_after == INTERVAL_MS, f"MsgMarkBrowseInterval after the takeover: {interval_after}"
