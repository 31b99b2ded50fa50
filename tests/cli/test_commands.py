"""Issue 16, "a CLI people expect" and strict names (findings 11, 18, 21, 23): help, --version,
queues, --no-create, --delivery-delay, topics, the example's backout lines. Commands run as
``python -m pyjms`` against a ``pyjms broker`` process."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

import pyjms
from pyjms.broker.admin import Admin
from pyjms.cli.main import build_parser
from tests.cli.conftest import drain_texts, run_cli, start_cli
from tests.conftest import ROOT


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_finding_23_every_subcommand_and_option_has_help():
    parser = build_parser()
    missing = []
    for name, sub in _subparsers(parser).items():
        if not sub.description:
            missing.append(f"{name}: no description")
        for action in sub._actions:
            if action.help in (None, "") and action.dest != "help":
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []
    assert "waits forever" in _subparsers(parser)["receive"].format_help().replace(
        "\n", " "
    ) or "wait forever" in " ".join(_subparsers(parser)["receive"].format_help().split())


def test_version_comes_from_one_place():
    done = run_cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"pyjms {pyjms.__version__}"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'version = {attr = "pyjms.version.__version__"}' in pyproject and '\nversion = "' not in pyproject


@pytest.fixture(params=["activemq", "artemis"])
def pyjms_broker_url(request):
    """A pyjms broker process of each provider: both answer `queues` and `--no-create`."""
    fixture = "tcp_broker" if request.param == "activemq" else "artemis_tcp_broker"
    return request.getfixturevalue(fixture).tcp_url


def test_queues_lists_depth_and_consumers(pyjms_broker_url, qname):
    url = pyjms_broker_url
    assert run_cli("send", "--url", url, "-q", qname, "a", "b", "c").returncode == 0
    done = run_cli("queues", "--url", url, "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["destination"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert rows[f"queue://{qname}"]["depth"] == 3 and rows[f"queue://{qname}"]["consumers"] == 0
    table = run_cli("queues", "--url", url)
    assert "DEPTH" in table.stdout and "CONSUMERS" in table.stdout and f"queue://{qname}" in table.stdout
    assert "activemq.notifications" not in table.stdout  # Artemis's own management addresses
    drain_texts(url, qname)


def test_finding_11_no_create_refuses_an_unknown_queue_with_2085(pyjms_broker_url, qname):
    url = pyjms_broker_url
    typo = run_cli("send", "--url", url, "--no-create", "-q", qname + ".TYPO", "x")
    assert typo.returncode == 2 and "MQRC_UNKNOWN_OBJECT_NAME (2085)" in typo.stderr
    listed = run_cli("queues", "--url", url, "--json").stdout
    assert qname + ".TYPO" not in listed  # not created by the refused send
    assert run_cli("admin", "--url", url, "define-queue", qname).returncode == 0  # defined, as on IBM MQ
    sent = run_cli("send", "--url", url, "--no-create", "-q", qname, "x")
    assert sent.returncode == 0, sent.stderr
    assert drain_texts(url, qname) == ["x"]


def test_admin_remove_takes_only_an_empty_unused_destination_off_the_broker(pyjms_broker_url, qname):
    """IBM MQ's DELETE QLOCAL / DELETE TOPIC: refused with 2055 while the queue holds messages,
    2042 while a consumer or subscriber uses it, 2085 once it is gone; otherwise gone from
    `pyjms queues` (the conformance kit removes its named queues so)."""
    url = pyjms_broker_url
    factory = pyjms.ConnectionFactory(url)
    admin = Admin(factory)
    topic = pyjms.Topic(f"{qname}.T")
    with factory.create_context() as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send(q, "x")
        with pytest.raises(pyjms.JMSRuntimeException) as full:
            admin.remove(q)
        assert full.value.reason == pyjms.MQRC.Q_NOT_EMPTY and qname in str(full.value)
        with ctx.create_consumer(q) as consumer, ctx.create_consumer(topic):
            assert consumer.receive(5000).get_text() == "x"
            for used in (q, topic):
                with pytest.raises(pyjms.JMSRuntimeException) as in_use:
                    admin.remove(used)
                assert in_use.value.reason == pyjms.MQRC.OBJECT_IN_USE, used
    removed = run_cli("admin", "--url", url, "remove", f"queue://{qname}")
    assert removed.returncode == 0 and "removed from the broker" in removed.stdout, removed.stderr
    if f"topic://{topic.name}" in [d["destination"] for d in admin.destinations()]:
        admin.remove(topic)  # (Artemis removes an address it made on demand once nothing uses it)
    listed = [d["destination"] for d in admin.destinations()]
    assert f"queue://{qname}" not in listed and f"topic://{topic.name}" not in listed
    gone = run_cli("admin", "--url", url, "remove", f"queue://{qname}")
    assert gone.returncode != 0 and gone.stderr.count("MQRC_UNKNOWN_OBJECT_NAME (2085)") == 1, gone.stderr


def test_strict_mode_in_the_library_and_queue_urls_in_create_queue(tcp_broker, qname):
    strict = pyjms.ConnectionFactory(tcp_broker.tcp_url, create_destinations=False)
    with strict.create_context() as ctx:
        assert ctx.create_queue(f"queue://{qname}") == ctx.create_queue(qname)
        with pytest.raises(pyjms.InvalidDestinationRuntimeException) as refused:
            ctx.create_producer().send(ctx.create_queue(qname), "x")
        assert refused.value.reason == pyjms.MQRC.UNKNOWN_OBJECT_NAME
        with pytest.raises(pyjms.InvalidDestinationRuntimeException, match="names a topic"):
            ctx.create_queue(f"topic://{qname}")
        temp = ctx.create_temporary_queue()  # made by this connection: never refused
        ctx.create_producer().send(temp, "t")


def test_receive_reads_a_topic_and_shows_properties(tcp_broker, qname):
    url = tcp_broker.tcp_url
    proc = start_cli(
        "receive", "--url", url, "-t", f"topic://{qname}", "--timeout", "0", "--max", "1", "--json"
    )
    assert proc.stderr is not None
    assert b"waiting for messages" in proc.stderr.readline()  # --timeout 0 says it waits until Ctrl-C
    sent = run_cli("send", "--url", url, "-t", qname, "-p", "region=eu", "--priority", "7", "news")
    assert sent.returncode == 0, sent.stderr
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    m = json.loads(out)
    assert m["body"] == "news" and m["properties"] == {"region": "eu"}
    assert m["headers"]["JMSPriority"] == 7 and m["headers"]["JMSDestination"] == f"topic://{qname}"


def test_browse_shows_without_taking(tcp_broker, qname):
    url = tcp_broker.tcp_url
    assert run_cli("send", "--url", url, "-q", qname, "one", "two").returncode == 0
    shown = run_cli("browse", "--url", url, "-q", qname)
    assert shown.returncode == 0 and "'one'" in shown.stdout and "'two'" in shown.stdout
    assert "browsed 2 message(s)" in shown.stderr
    assert drain_texts(url, qname) == ["one", "two"]


def test_finding_18_delivery_delay_mode_is_an_option(tcp_broker, qname):
    url = tcp_broker.tcp_url
    assert "--delivery-delay" in run_cli("send", "--help").stdout
    done = run_cli(
        "send", "--url", url, "-q", qname, "--delay", "200", "--delivery-delay", "staging", "later"
    )
    assert done.returncode == 0, done.stderr
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        m = ctx.create_consumer(ctx.create_queue(qname)).receive(30_000)
        assert m is not None and m.get_text() == "later"
        assert m.get_jms_delivery_time() - m.get_jms_timestamp() == 200


def test_large_sends_print_progress(tcp_broker, qname):
    from pyjms.cli.messaging import PROGRESS_EVERY

    lines = "".join(f"{i}\n" for i in range(PROGRESS_EVERY + 1))
    done = run_cli("send", "--url", tcp_broker.tcp_url, "-q", qname, "--non-persistent", stdin=lines.encode())
    assert done.returncode == 0, done.stderr
    assert f"sent {PROGRESS_EVERY} message(s) to queue://{qname} so far" in done.stderr
    assert f"sent {PROGRESS_EVERY + 1} message(s)" in done.stdout
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(qname))
        got = 0
        while batch := consumer.receive_batch(2000, 2000):
            got += len(batch)
    assert got == PROGRESS_EVERY + 1


def test_finding_21_the_dispatch_example_prints_its_backouts(tcp_broker, qname):
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "cooperative_dispatch.py"),
            "--url",
            tcp_broker.tcp_url,
            "--queue",
            qname,
            "--dispatchers",
            "2",
            "--messages",
            "12",
            "--fail-every",
            "3",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "backed out" in done.stdout and "backout(s), every one dispatched again" in done.stdout
    assert "12 of 12 messages handled, each once" in done.stdout


def test_finding_18_staging_put_disabled_refuses_a_staged_send_with_2051(tcp_broker, qname):
    url, staging = tcp_broker.tcp_url, qname + ".STAGING"
    assert run_cli("admin", "--url", url, "define-queue", staging, "--put", "disabled").returncode == 0
    refused = run_cli(
        "send",
        "--url",
        url,
        "-q",
        qname,
        "--delay",
        "1000",
        "--delivery-delay",
        "staging",
        "--staging-queue",
        staging,
        "later",
    )
    assert refused.returncode == 2 and "2051" in refused.stderr, refused.stderr
    # auto with a staging queue no processor serves: the broker's scheduler, which that queue does not stop
    auto = run_cli("send", "--url", url, "-q", qname, "--delay", "100", "--staging-queue", staging, "later")
    assert auto.returncode == 0, auto.stderr
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        m = ctx.create_consumer(ctx.create_queue(qname)).receive(30_000)
        assert m is not None and m.get_text() == "later"
