"""Issue 16, "no silent loss": where commands go, receive's acknowledgement after the write,
Ctrl-C (exit 130, no traceback, nothing lost) and send's streaming of standard input.
Every command runs as ``python -m pyjms`` against a ``pyjms broker`` process."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

import pyjms
from tests.cli.conftest import drain_texts, run_cli, start_cli


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "-q", "LOSTQ", "important order"],
        ["receive", "-q", "LOSTQ"],
        ["browse", "-q", "LOSTQ"],
        ["admin", "define-queue", "LOSTQ", "--max-depth", "5"],
        ["mark-interval", "--set", "100"],
        ["conformance"],
    ],
)
def test_finding_1_a_command_without_a_broker_url_fails_with_one_line_saying_how(argv):
    done = run_cli(*argv, url=None)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "pyjms broker" in lines[0] and "--url" in lines[0] and "PYJMS_URL" in lines[0]


def test_pyjms_url_names_the_broker_when_there_is_no_url_option(tcp_broker, qname):
    sent = run_cli("send", "-q", qname, "via PYJMS_URL", url=tcp_broker.tcp_url)
    assert sent.returncode == 0, sent.stderr
    assert drain_texts(tcp_broker.tcp_url, qname) == ["via PYJMS_URL"]


def _send_many(url: str, queue: str, n: int) -> list[str]:
    bodies = [f"m{i:05d}" for i in range(n)]
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        ctx.create_producer().send_batch(ctx.create_queue(queue), bodies)
    return bodies


def test_finding_2_ctrl_c_during_receive_loses_nothing_and_exits_130(tcp_broker, qname):
    bodies = _send_many(tcp_broker.tcp_url, qname, 400)
    proc = start_cli("receive", "--url", tcp_broker.tcp_url, "-q", qname, "--timeout", "0", "--json")
    written = []
    assert proc.stdout is not None
    while len(written) < 100:  # mid-stream: the receiver is still writing when SIGINT comes
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        written.append(json.loads(line)["body"])
    proc.send_signal(signal.SIGINT)
    # through the same buffered reader: what it already holds is output too (communicate() would skip it)
    rest = proc.stdout.read()
    proc.wait(timeout=60)
    err = proc.stderr.read() if proc.stderr else b""
    written += [json.loads(line)["body"] for line in rest.decode().splitlines() if line.strip()]
    left = drain_texts(tcp_broker.tcp_url, qname)
    print(
        f"Ctrl-C during receive: sent {len(bodies)}, written by receive {len(written)}, left on the queue "
        f"{len(left)}, lost {len(set(bodies) - set(written) - set(left))}"
    )
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"interrupted" in err
    assert sorted(set(written) | set(left)) == bodies  # every message written or still queued
    assert len(written) == len(set(written))


def test_receive_acknowledges_only_what_it_wrote(tcp_broker, qname):
    _send_many(tcp_broker.tcp_url, qname, 3)
    done = run_cli("receive", "--url", tcp_broker.tcp_url, "-q", qname, "--max", "2")
    assert done.returncode == 0, done.stderr
    assert "'m00000'" in done.stdout and "'m00001'" in done.stdout
    assert drain_texts(tcp_broker.tcp_url, qname) == ["m00002"]


def test_finding_3_send_streams_stdin_and_reports_what_ctrl_c_left(tcp_broker, qname):
    url = tcp_broker.tcp_url
    proc = start_cli("send", "--url", url, "-q", qname, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(qname))
        proc.stdin.write(b"first\n")
        proc.stdin.flush()
        m = consumer.receive(60_000)  # while send still waits for more input
        assert m is not None and m.get_text() == "first" and proc.poll() is None
        proc.stdin.write(b"second\nunfini")
        proc.stdin.flush()
        m = consumer.receive(60_000)
        assert m is not None and m.get_text() == "second"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert b"sent 2 message(s)" in err and b"6 byte(s) of an unfinished line were not sent" in err
    assert drain_texts(url, qname, 500) == []


def test_send_frames_by_nul_and_sends_bytes_with_binary(tcp_broker, qname):
    url = tcp_broker.tcp_url
    assert run_cli("send", "--url", url, "-q", qname, "--null", stdin=b"one\ntwo\0three\0").returncode == 0
    assert drain_texts(url, qname) == ["one\ntwo", "three"]
    raw = bytes(range(256))
    done = run_cli("send", "--url", url, "-q", qname, "--binary", stdin=raw)
    assert done.returncode == 0, done.stderr
    assert drain_texts(url, qname) == [raw]


def test_finding_8_stdin_that_is_not_utf8_is_refused_with_its_byte_offset(tcp_broker, qname):
    url = tcp_broker.tcp_url
    done = run_cli("send", "--url", url, "-q", qname, stdin=b"fine\nbad \xff here\nnever\n")
    assert done.returncode == 2
    assert "not UTF-8 at byte offset 9" in done.stderr and "--binary" in done.stderr
    assert "sent 1 message(s) before it" in done.stderr and "Traceback" not in done.stderr
    assert drain_texts(url, qname) == ["fine"]  # no U+FFFD anywhere, nothing after the bad line


def test_finding_8_an_argument_that_is_not_utf8_is_refused_before_anything_is_sent(tcp_broker, qname):
    url = tcp_broker.tcp_url
    done = run_cli("send", "--url", url, "-q", qname, "ok", "caf\udce9")  # é in Latin-1, as a shell passes it
    assert done.returncode == 2
    assert "argument 2 is not UTF-8 at byte offset 3" in done.stderr
    assert drain_texts(url, qname, 500) == []
    sent = run_cli("send", "--url", url, "-q", qname, "--binary", "caf\udce9")
    assert sent.returncode == 0, sent.stderr
    assert drain_texts(url, qname) == [b"caf\xe9"]


def test_ctrl_c_mid_stream_send_says_exactly_what_was_sent(tcp_broker, qname):
    import re
    import threading

    url = tcp_broker.tcp_url
    proc = start_cli("send", "--url", url, "-q", qname, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    stop = threading.Event()

    def feed() -> None:  # lines keep coming until the sender is interrupted
        i = 0
        try:
            while not stop.is_set():
                proc.stdin.write(f"line {i:06d}\n".encode())
                proc.stdin.flush()
                i += 1
        except (BrokenPipeError, ValueError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(qname))
        seen = [consumer.receive(60_000) for _ in range(20)]  # mid-stream
        assert all(m is not None for m in seen)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        stop.set()
        err = proc.stderr.read().decode() if proc.stderr else ""
        got = [m.get_text() for m in seen]
        while (m := consumer.receive(1000)) is not None:
            got.append(m.get_text())
    assert proc.returncode == 130 and "Traceback" not in err, err
    sent = int(re.search(r"interrupted: sent (\d+) message\(s\)", err).group(1))
    print(f"Ctrl-C during send: reported sent {sent}, received {len(got)}")
    assert got == [f"line {i:06d}" for i in range(sent)]  # what it says it sent arrived, in order, once
