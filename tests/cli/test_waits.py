"""Issue 16, "nothing hangs without a word" (findings 4, 5, 19, 24): the broker's data
directory, unreachable brokers, a second delay processor, and Ctrl-C on the services. Each
command runs as ``python -m pyjms`` in its own process."""

from __future__ import annotations

import signal
import time

import pytest

from tests.cli.conftest import run_cli, start_cli
from tests.conftest import BrokerProcess


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda tmp: (tmp / "afile").write_text("x") and tmp / "afile", "not a directory"),
        (lambda tmp: "/proc/nope", "cannot write there"),
    ],
)
def test_finding_4_a_bad_data_directory_is_one_line_naming_it(tmp_path, make, reason):
    data = make(tmp_path)
    done = run_cli("broker", "--port", "0", "--data", str(data), timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert f"--data {data}: {reason}" in done.stderr


@pytest.mark.parametrize("provider", ["activemq", "artemis"])
def test_finding_4_a_data_directory_in_use_is_refused_not_waited_for(tmp_path, provider):
    data = tmp_path / "store"
    first = BrokerProcess("--data", str(data), provider=provider)
    try:
        assert f"persistent (data in {data})" in first.ready_line  # finding 24: the ready line says so
        second = run_cli("broker", "--provider", provider, "--port", "0", "--data", str(data), timeout=60)
        assert second.returncode == 2 and "Traceback" not in second.stderr
        assert f"--data {data}: in use by another broker" in second.stderr and "lock" in second.stderr
    finally:
        assert first.stop(signal.SIGINT) == 130  # Ctrl-C ends a service as every command: 130


def test_finding_24_a_broker_without_data_says_it_is_not_persistent(tcp_broker):
    assert "non-persistent" in tcp_broker.ready_line and "--data DIR" in tcp_broker.ready_line


def test_finding_5_mark_service_against_nothing_is_one_line_at_once():
    done = run_cli("mark-service", "--url", "tcp://127.0.0.1:1", timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "did not start" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Connection refused" in lines[0] and "tcp://127.0.0.1:1" in lines[0]


def test_issue_32_a_second_delay_processor_stands_by_beside_the_brokers_own(tcp_broker):
    """The broker's own processor leads its staging queue; another one starts and stands by
    (issue 32: the broker elects the active one), and Ctrl-C ends it with 130."""
    proc = start_cli("delay-processor", "--url", tcp_broker.tcp_url)
    assert proc.stdout is not None
    assert b"running" in proc.stdout.readline()
    assert proc.stdout.readline().strip() == b"standing by"
    time.sleep(1)  # still standing by: the broker's own processor keeps the lead
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Traceback" not in err and b"active" not in out.splitlines()


def test_delay_processor_on_a_free_staging_queue_runs_and_ctrl_c_ends_it_with_130(tcp_broker, qname):
    proc = start_cli("delay-processor", "--url", tcp_broker.tcp_url, "--staging-queue", qname)
    assert proc.stdout is not None
    assert b"running" in proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Traceback" not in err and b"stopped:" in out


def test_a_command_against_nothing_is_one_line():
    done = run_cli("receive", "--url", "tcp://127.0.0.1:1", "-q", "Q", timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "Connection refused" in done.stderr


def test_issue_32_delay_processor_status_asks_the_brokers_own(tcp_broker):
    done = run_cli("delay-processor", "--url", tcp_broker.tcp_url, "--status", timeout=60)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "of queue SYSTEM.DDELAY.LOCAL.QUEUE: active, healthy" in done.stdout


def test_issue_32_delay_processor_status_where_none_answers(tcp_broker, qname):
    done = run_cli(
        "delay-processor", "--url", tcp_broker.tcp_url, "--staging-queue", qname, "--status", timeout=60
    )
    assert done.returncode == 1 and f"no delay processor answers on queue {qname}" in done.stdout
