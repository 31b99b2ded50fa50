"""``pyjms dlq-handler`` as a process: progress, totals, SIGINT, and SIGKILL losing nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pyjms
from pyjms.dlq import DLQHandler, dead_letter
from pyjms.dlq.cli import main
from pyjms.rules.reasons import MQRC
from tests.conftest import ROOT, BrokerProcess
from tests.dlq.conftest import browse, drain_all


def handler_process(*args: str, rules: str | None = None) -> subprocess.Popen[str]:
    """``pyjms dlq-handler`` run as ``python -m pyjms.dlq.cli`` (the same code, unregistered)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pyjms.dlq.cli", *args],
        cwd=ROOT,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    if rules is not None:
        process.stdin.write(rules)
    process.stdin.close()
    process.stdin = None  # so that communicate() does not flush it
    return process


def put_many(url: str, dlq: str, count: int, dest_q: str) -> None:
    # persistent, with a dead-letter header each (JMS_PYJMS_* headers go by pyjms's own route)
    with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as ctx:
        for i in range(count):
            dead_letter(ctx, pyjms.TextMessage(f"m{i}"), dlq, MQRC.Q_FULL, dest_q=dest_q)
        ctx.commit()


def test_q07_cli_reports_every_table_error_and_does_not_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    rules = tmp_path / "rules.txt"
    rules.write_text("* a comment\nACTION(FWD)\nREASON(MQRC_NO_SUCH) ACTION(DISCARD)\n")
    assert main(["--url", "tcp://127.0.0.1:1", "-q", "DLQ", "-r", str(rules)]) == 2
    err = capsys.readouterr().err
    assert "line 2: ACTION(FWD) needs FWDQ" in err and "line 3: REASON(MQRC_NO_SUCH)" in err
    assert main(["-r", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read the rules table" in capsys.readouterr().err


def test_cli_prints_progress_and_totals_and_stops_on_sigint(tcp_broker: BrokerProcess, qname: str):
    dlq, target = qname + ".DLQ", qname + ".TARGET"
    put_many(tcp_broker.tcp_url, dlq, 50, qname)
    process = handler_process(
        "--url",
        tcp_broker.tcp_url,
        "-q",
        dlq,
        "-m",
        "QM1",
        "--progress",
        "0.2",
        rules=f"RETRYINT(5)\nACTION(FWD) FWDQ({target})\n",
    )  # table on stdin, WAIT(YES)
    assert process.stdout is not None
    lines = []
    for line in process.stdout:  # until the progress shows every message done
        lines.append(line)
        if "processed 50 " in line:
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    lines += out.splitlines()
    assert process.returncode == 130, err  # Ctrl-C's status, as for every command
    assert "processing queue://" in lines[0] and "RETRYINT 5 s, WAIT(YES)" in lines[0]
    assert lines[-1].strip() == (
        "dlq-handler: stopped; totals: processed 50 (DISCARD 0, FWD 50, RETRY 0, IGNORE 0), "
        "errors 0 (failed attempts 0, without header 0)"
    )
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        assert len(browse(ctx, target)) == 50 and browse(ctx, dlq) == []


def test_q11_a_handler_killed_mid_run_loses_and_duplicates_nothing(tcp_broker: BrokerProcess, qname: str):
    # enough messages that the handler is still at work when the kill lands: it moves a few
    # thousand a second, and this process may wait for a core on a busy machine (1,000 and a
    # kill after 100 moved once let it finish first)
    dlq, target, count = qname + ".DLQ", qname + ".TARGET", 4000
    url = tcp_broker.tcp_url
    put_many(url, dlq, count, qname)
    rules = f"ACTION(FWD) FWDQ({target})\n"
    process = handler_process("--url", url, "-q", dlq, rules=rules)
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        deadline = time.monotonic() + 60
        while not browse(ctx, target):  # it is moving messages now
            assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()  # type: ignore[union-attr]
            time.sleep(0.02)
        process.kill()  # SIGKILL, in the middle of a move or between two
        process.wait(30)
        on_dlq = len(browse(ctx, dlq))
    assert on_dlq > 0, "the handler finished before it was killed; the test proves nothing"

    stats = DLQHandler(url, dlq, "WAIT(NO)\n" + rules).run()  # another handler finishes the job

    with pyjms.ConnectionFactory(url).create_context() as ctx:
        moved = sorted(m.get_text() for m in drain_all(ctx, target))
        assert drain_all(ctx, dlq) == []
    assert moved == sorted(f"m{i}" for i in range(count))  # every message once: none lost, none twice
    assert 0 < stats.forwarded < count
