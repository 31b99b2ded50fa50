"""The pyjms command, the standalone broker process, persistence, and loopback-only binding."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import pyjms
from tests.conftest import ROOT, BrokerProcess


def run_cli(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyjms", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=env,
    )


def test_cli_send_then_receive_over_tcp(tcp_broker, qname):
    sent = run_cli("send", "--url", tcp_broker.tcp_url, "-q", qname, "-p", "kind=cli", "one", "two")
    assert sent.returncode == 0, sent.stderr
    assert "sent 2 message(s)" in sent.stdout
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        m = ctx.create_consumer(ctx.create_queue(qname)).receive(5000)
        assert m.get_text() == "one" and m.get_string_property("kind") == "cli"
    got = run_cli("receive", "--url", tcp_broker.tcp_url, "-q", qname, "--timeout", "500")
    assert got.returncode == 0, got.stderr
    assert "'two'" in got.stdout and "received 1 message(s)" in got.stderr


def test_cli_errors_are_pyjms_errors(tcp_broker, qname):
    bad = run_cli("send", "--url", tcp_broker.tcp_url, "-q", qname, "--ttl", "-5", "x")
    assert bad.returncode == 2
    assert "MQRC_EXPIRY_ERROR" in bad.stderr and "Traceback" not in bad.stderr


def test_console_script_and_module_are_the_same_program():
    from pyjms.cli.main import build_parser

    module_help = run_cli("--help")
    assert module_help.returncode == 0
    assert build_parser().format_help().split()[:3] == module_help.stdout.split()[:3]


def _listening_addresses(port: int) -> set[str]:
    addrs = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            host, p = local.rsplit(":", 1)
            if state == "0A" and int(p, 16) == port:  # 0A = LISTEN
                addrs.add(host)
    return addrs


def test_standalone_broker_listens_on_loopback_only(tcp_broker):
    port = int(tcp_broker.tcp_url.rsplit(":", 1)[1])
    assert tcp_broker.tcp_url.startswith("tcp://127.0.0.1:")
    addrs = _listening_addresses(port) | _listening_addresses(tcp_broker.stomp_port)
    assert addrs and addrs <= {"0100007F", "0000000000000000FFFF00000100007F"}, addrs


def test_embedded_broker_refuses_a_public_connector():
    import pytest

    from pyjms.bridge import jvm
    from pyjms.bridge.errors import translate

    s = jvm.start()
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="must bind to 127.0.0.1"):
        try:
            s.jclass("org.pyjms.shim.activemq.EmbeddedBroker").start(
                "pyjms-public", None, ["tcp://0.0.0.0:0"]
            )
        except s.JException as e:
            raise translate(e) from None


def test_persistent_broker_keeps_messages_across_restarts(tmp_path, qname):
    data = tmp_path / "kahadb"
    first = BrokerProcess("--data", str(data))
    try:
        with pyjms.ConnectionFactory(first.tcp_url).create_context() as ctx:
            ctx.create_producer().set_delivery_mode(pyjms.PERSISTENT).send(ctx.create_queue(qname), "durable")
    finally:
        assert first.stop() == 0
    second = BrokerProcess("--data", str(data))
    try:
        with pyjms.ConnectionFactory(second.tcp_url).create_context() as ctx:
            m = ctx.create_consumer(ctx.create_queue(qname)).receive(10000)
            assert m is not None and m.get_text() == "durable"
    finally:
        second.stop()


def test_default_factory_uses_pyjms_url(tcp_broker, qname):
    code = (
        "import pyjms\n"
        "cf = pyjms.ConnectionFactory()\n"
        "print(cf.url)\n"
        f"with cf.create_context() as c: c.create_producer().send(c.create_queue('{qname}'), 'via env')\n"
    )
    env = {**os.environ, "PYJMS_URL": tcp_broker.tcp_url}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == tcp_broker.tcp_url
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        assert ctx.create_consumer(ctx.create_queue(qname)).receive(5000).get_text() == "via env"


_SERVICE_FLAGS_PROBE = r"""
import os, signal, sys, threading, time
from pyjms.bridge import jvm
from pyjms.cli.main import main

def probe():
    while not jvm.is_started() or signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        time.sleep(0.05)  # until the command runs and stops on SIGTERM
    import jpype
    mf = jpype.JClass("java.lang.management.ManagementFactory")
    diag = mf.getPlatformMXBean(jpype.JClass("com.sun.management.HotSpotDiagnosticMXBean"))
    for flag in ("DisableExplicitGC", "MaxTenuringThreshold", "GCTimeRatio"):
        print(f"{flag}={diag.getVMOption(flag).getValue()}", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=probe, daemon=True).start()
sys.exit(main(sys.argv[1:]))
"""


def _service_flags(*argv: str, jvm_options: str = "") -> dict[str, str]:
    env = {**os.environ, "PYJMS_JVM_OPTIONS": jvm_options}
    done = subprocess.run(
        [sys.executable, "-c", _SERVICE_FLAGS_PROBE, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return dict(
        line.split("=", 1)
        for line in done.stderr.splitlines()
        if line.startswith(("Disable", "MaxTen", "GCTime"))
    )


def test_service_commands_run_with_low_pause_gc_options_that_pyjms_jvm_options_overrides(tcp_broker):
    # the broker and the delay processor must not stop for JPype's System.gc(), nor grow their
    # heap as a throughput server would (see jvm.SERVICE_JVM_OPTIONS)
    service = {"DisableExplicitGC": "true", "MaxTenuringThreshold": "0", "GCTimeRatio": "4"}
    assert _service_flags("broker", "--port", "0") == service
    # its own staging queue: the broker's own processor serves the default one (and a second is refused)
    assert (
        _service_flags("delay-processor", "--url", tcp_broker.tcp_url, "--staging-queue", "T.FLAGS.STAGING")
        == service
    )
    assert _service_flags(
        "broker", "--port", "0", jvm_options="-XX:-DisableExplicitGC -XX:GCTimeRatio=12"
    ) == {**service, "DisableExplicitGC": "false", "GCTimeRatio": "12"}


def test_cli_send_refuses_a_property_without_a_value(tcp_broker, qname):
    bad = run_cli("send", "--url", tcp_broker.tcp_url, "-q", qname, "-p", "kind", "x")
    assert bad.returncode == 2 and "--property 'kind' is not NAME=VALUE" in bad.stderr
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        assert ctx.create_consumer(ctx.create_queue(qname)).receive(300) is None  # nothing half-sent


@pytest.mark.parametrize("provider", ["activemq", "artemis"])
def test_a_broker_process_stops_on_sigterm_with_status_0(provider):
    """A supervisor's stop: the broker process ends, and promptly. (An Artemis broker used to
    linger until its in-vm connector's idle threads timed out, over 30 s.)"""
    broker = BrokerProcess(provider=provider)
    broker.proc.send_signal(signal.SIGTERM)
    try:
        assert broker.proc.wait(timeout=20) == 0
    finally:
        broker.stop(signal.SIGKILL)
