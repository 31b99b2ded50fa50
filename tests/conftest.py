"""Shared fixtures: a real embedded broker (vm://) and a real standalone broker process (tcp://).

Every integration test that takes ``url`` runs twice, once per transport, against a real
ActiveMQ broker; nothing is mocked. A test or module marked ``providers("activemq", "artemis")``
runs against Apache Artemis too (in-vm, and a ``pyjms broker --provider artemis`` process).
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyjms.bridge.jvm import COMMAND_JVM_OPTIONS

ROOT = Path(__file__).resolve().parent.parent
_names = itertools.count(1)

# The suite's JVMs (each worker's, and every broker, service and command it starts, which
# inherit the environment) compile with C1 only, with pyjms's short commands' options
# (COMMAND_JVM_OPTIONS): they live seconds to a minute, and C2's compiles cost
# more CPU than they save. The suite is CPU-bound on two cores: test_dispatchers and
# test_processor_takeover took 327 CPU-seconds and 168 s with C2, 186 and 104 s without. A
# test that needs other options sets PYJMS_JVM_OPTIONS itself (test_jvm_options checks that a
# service keeps C2 by default); one set before the run is kept.
os.environ.setdefault("PYJMS_JVM_OPTIONS", " ".join(COMMAND_JVM_OPTIONS))
# and so does Maven, which test_lock runs four times: 28 CPU-seconds with C2, 16 without
# (66 s in a whole-suite run)
os.environ.setdefault("MAVEN_OPTS", " ".join(COMMAND_JVM_OPTIONS))


class BrokerProcess:
    """``python -m pyjms broker`` in its own process, as a user would run it."""

    #: every one started in this process (the session's end asks those still running to stop)
    started: weakref.WeakSet[BrokerProcess] = weakref.WeakSet()

    def __init__(self, *extra: str, provider: str = "activemq") -> None:
        BrokerProcess.started.add(self)
        listeners = ["--stomp-port", "0"] if provider == "activemq" else []  # Artemis has no STOMP here
        self.args = [
            sys.executable,
            "-m",
            "pyjms",
            "broker",
            "--provider",
            provider,
            "--port",
            "0",
            *listeners,
            *extra,
        ]
        # its log goes to a file: a pipe nobody reads fills up, and then the broker blocks
        self.log = tempfile.NamedTemporaryFile(
            "w+", prefix=f"pyjms-broker-{provider}-", suffix=".log", delete=False
        )
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=ROOT)
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if "ready:" in line or not line:
                break
        if "ready:" not in line:
            self.proc.kill()
            raise RuntimeError(
                f"standalone broker did not start: {line!r} {Path(self.log.name).read_text()[-4000:]}"
            )
        self.ready_line = line
        self.uris = line.split("ready:", 1)[1].split()
        # the broker's own protocol: tcp:// (ActiveMQ's OpenWire) or artemis+tcp:// (Artemis's core);
        # ssl:// or artemis+ssl:// for a broker started with --tls-keystore
        self.tcp_url = next(u for u in self.uris if re.match(r"^(artemis\+)?(tcp|ssl)://", u))
        stomp = next((u for u in self.uris if u.startswith("stomp://")), None)
        self.stomp_port = int(re.search(r":(\d+)$", stomp).group(1)) if stomp else None
        self.amqp_url = next((u for u in self.uris if u.startswith(("amqp://", "amqps://"))), None)

    def stop(self, sig: int | None = None, wait: bool = True) -> int | None:
        """Stops the broker (SIGTERM, or ``sig``) and waits up to 30 s for it (then SIGKILL);
        ``wait=False`` only asks (pytest_sessionfinish waits for the session's brokers)."""
        if self.proc.poll() is None:
            if sig is None:
                self.proc.terminate()
            else:
                self.proc.send_signal(sig)
            if not wait:
                return None
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The session's brokers were asked to stop by their fixtures (``stop(wait=False)``): an
    Artemis broker takes 3-11 s to stop, and they stop side by side; the session waits here."""
    for broker in list(BrokerProcess.started):
        broker.stop()


@pytest.fixture(scope="session")
def tcp_broker() -> Iterator[BrokerProcess]:
    broker = BrokerProcess()
    yield broker
    broker.stop(wait=False)


@pytest.fixture(scope="session")
def embedded_broker():
    from pyjms.broker import default_broker

    return default_broker()


@pytest.fixture(scope="session")
def artemis_broker():
    """An Artemis broker in this process (in-vm only), with pyjms's services."""
    from pyjms.providers.artemis import EmbeddedArtemisBroker

    broker = EmbeddedArtemisBroker()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def artemis_tcp_broker() -> Iterator[BrokerProcess]:
    """``pyjms broker --provider artemis``: reached at its artemis+tcp:// URL, as printed."""
    broker = BrokerProcess(provider="artemis")
    yield broker
    broker.stop(wait=False)


#: the url params per provider: its embedded broker in-vm, and its broker process over TCP
#: (AMQP 1.0: Qpid JMS to the Artemis broker process's AMQP acceptor)
TRANSPORTS = {
    "activemq": ("vm", "tcp"),
    "artemis": ("artemis-vm", "artemis-tcp"),
    "amqp": ("amqp-artemis",),
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "providers(*names): run the test's url against these providers (default: activemq)"
    )
    config.addinivalue_line(
        "markers",
        "artemis_in_vm: run the test's url against the in-process Artemis broker (vm://N) too; "
        "otherwise Artemis is reached over TCP only",
    )
    config.addinivalue_line(
        "markers",
        "activemq_tcp_only: run the test's ActiveMQ url over TCP only, not in-vm too (for a test whose "
        "behaviour does not depend on the transport: over TCP it takes the same client and broker code)",
    )


#: the test files that take longest, longest first (seconds summed over their tests in a full
#: run under load, rounded; where a test was shortened since, scaled by its measured cut).
#: `make test` runs --dist loadfile --no-loadscope-reorder: xdist hands each worker a whole file
#: at a time in collection order (it would otherwise order files by their number of tests, which
#: puts these few-test long files last), so these are ordered first and the run ends on short
#: files, not with one worker idle while the other runs a long file it took late. A file not
#: listed keeps its place after these; a stale order costs time, never a test.
SLOWEST_FILES = (
    "tests/faults/test_failover_pair.py",  # 280, with the Artemis pair
    "tests/spark/test_write.py",  # 230
    "tests/bench/test_bench_smoke.py",  # 195
    "tests/faults/test_mark_takeover.py",  # 160
    "tests/cli/test_commands.py",  # 160
    "tests/browse/test_dispatchers.py",  # 140
    "tests/dlq/test_handler.py",  # 140
    "tests/faults/test_processor_takeover.py",  # 135
    "tests/integration/test_staging_delay.py",  # 130
    "tests/spark/test_read.py",  # 120
    "tests/spark/test_broker_kill.py",  # 120
    "tests/amqp/test_conformance.py",  # 110: both configurations' kit runs side by side
    "tests/aio/test_cancellation.py",  # 105
    "tests/otel/test_java_trace.py",  # 105
    "tests/integration/test_conformance.py",  # 95: both configurations' kit runs side by side
    "tests/cli/test_no_loss.py",  # 90
    "tests/cli/test_waits.py",  # 90
    "tests/security/test_broker_auth.py",  # 90
    "tests/dlq/test_cli.py",  # 90
    "tests/security/test_delay_poison.py",  # 90
    "tests/integration/test_delayed_publications.py",  # 60
    "tests/spark/test_stream.py",  # 60
    "tests/faults/test_kills.py",  # 60
    "tests/packaging/test_wheel.py",  # 50
    "tests/security/test_service_fuzz.py",  # 50
)


def slowest_first(item: pytest.Item) -> int:
    """An item's place by its file in SLOWEST_FILES (a file not listed: after them)."""
    path = item.nodeid.split("::", 1)[0]
    return SLOWEST_FILES.index(path) if path in SLOWEST_FILES else len(SLOWEST_FILES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test's ``url`` runs over the transports of the providers it is marked for (ActiveMQ
    unless marked): the others are deselected. ActiveMQ runs in-vm (the default embedded broker)
    and over TCP, over TCP only where a test is marked ``activemq_tcp_only``; Artemis over TCP,
    and in-vm only where a test is marked ``artemis_in_vm`` (its in-vm transport is the same
    client and broker: the suite's time goes where it finds more).
    The slowest files come first (SLOWEST_FILES); the sort is stable, so each file's tests, and
    the other files, keep their order."""
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        transport = callspec.params.get("url") if callspec is not None else None
        marker = item.get_closest_marker("providers")
        providers = marker.args if marker else ("activemq",)
        wanted = transport is None or any(transport in TRANSPORTS[p] for p in providers)
        if transport == "artemis-vm" and item.get_closest_marker("artemis_in_vm") is None:
            wanted = False
        if transport == "vm" and item.get_closest_marker("activemq_tcp_only") is not None:
            wanted = False
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = sorted(keep, key=slowest_first)


@pytest.fixture(params=[t for transports in TRANSPORTS.values() for t in transports])
def url(request: pytest.FixtureRequest) -> str:
    transport = request.param
    if transport == "vm":
        return request.getfixturevalue("embedded_broker").vm_url
    if transport == "tcp":
        return request.getfixturevalue("tcp_broker").tcp_url
    if transport == "artemis-vm":
        return request.getfixturevalue("artemis_broker").vm_url
    if transport == "amqp-artemis":
        return request.getfixturevalue("artemis_tcp_broker").amqp_url
    return request.getfixturevalue("artemis_tcp_broker").tcp_url


def provider_of(url: str) -> str:
    """Which provider a test url is for (pyjms.bridge.urls decides it the same way)."""
    from pyjms.bridge.urls import choose

    return choose(url)[0]


def delay_mode(url: str, mode: str) -> str:
    """A test's delay mode: "own" is the provider's own mechanism (ActiveMQ Classic: its broker's
    scheduler, as its client has no setDeliveryDelay; Artemis: the client's native delay)."""
    if mode != "own":
        return mode
    return "native" if provider_of(url) in ("artemis", "amqp") else "scheduler"


@pytest.fixture
def factory(url: str):
    import pyjms

    return pyjms.ConnectionFactory(url)


@pytest.fixture
def ctx(factory):
    with factory.create_context() as c:
        yield c


@pytest.fixture
def qname(request: pytest.FixtureRequest) -> str:
    """A queue name no other test uses."""
    base = re.sub(r"[^A-Za-z0-9]+", "_", request.node.name)[:60]
    return f"T.{base}.{next(_names)}.{uuid.uuid4().hex[:6]}"


def drain(consumer, timeout_ms: int = 300, first_ms: int | None = None) -> list:
    """What comes, until nothing does for ``timeout_ms``; the first message is waited for up to
    ``first_ms`` (a delayed one), so the drain ends ``timeout_ms``, not ``first_ms``, after the last."""
    out = []
    wait = timeout_ms if first_ms is None else first_ms
    while (m := consumer.receive(wait)) is not None:
        out.append(m)
        wait = timeout_ms
    return out


def move_to_a_full_queue(factory, admin, qname: str):
    """The move a DLQ handler makes (Q02), to a full queue: ``qname`` holds one message at
    MAXDEPTH 1, and one transaction gets a message off ``qname.SOURCE`` and puts it there. The
    client sends a put in a transaction without waiting for the broker, so the broker's refusal
    must fail the commit; checks that it does and that nothing is lost (the get is rolled back),
    and returns the commit's error. The transaction is on a connection of its own: ActiveMQ
    withholds a message got in a failed commit until that connection closes."""
    import pyjms

    full, source = pyjms.Queue(qname), pyjms.Queue(f"{qname}.SOURCE")
    admin.define_queue(full, max_depth=1)
    with factory.create_context() as ctx:
        ctx.create_producer().send(full, "fills it")
        ctx.create_producer().send(source, "moved")
        with factory.create_context(pyjms.SESSION_TRANSACTED) as tx, tx.create_consumer(source) as consumer:
            got = consumer.receive(5000)
            assert got is not None
            tx.create_producer().send(full, got)
            with pytest.raises(pyjms.TransactionRolledBackRuntimeException) as refused:
                tx.commit()
        with ctx.create_browser(source) as b:
            assert [m.get_text() for m in b] == ["moved"]  # the get was rolled back with the put
        with ctx.create_browser(full) as b:
            assert [m.get_text() for m in b] == ["fills it"]
    admin.delete(full)
    return refused.value


def take_batches(consumer, count: int, timeout_ms: int = 5000) -> list:
    """Exactly ``count`` messages through receive_batch, fewer only if none came within
    ``timeout_ms``: a call takes what has arrived, which on a loaded broker may be part."""
    got: list = []
    while len(got) < count and (batch := consumer.receive_batch(count - len(got), timeout_ms)):
        got += batch
    return got


def drain_expecting(consumer, count: int, within_s: float = 60, idle_ms: int = 1000) -> list:
    """The messages on the consumer's queue, taken: waits up to ``within_s`` for ``count`` of
    them (a failed reader's rollback may reach the broker only later on a loaded machine), then
    takes whatever else comes within ``idle_ms``, so an extra message still shows."""
    out = []
    deadline = time.monotonic() + within_s
    while len(out) < count and (left_s := deadline - time.monotonic()) > 0:
        if (m := consumer.receive(max(1, int(min(left_s, 1.0) * 1000)))) is not None:
            out.append(m)
    return out + drain(consumer, idle_ms)
