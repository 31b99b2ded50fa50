"""Issue 16: names as users write them (queue://X, wildcards) and input that is not text
(findings 7-10), through ``python -m pyjms`` against a ``pyjms broker`` process."""

from __future__ import annotations

import pyjms
from tests.cli.conftest import drain_texts, run_cli


def test_finding_9_queue_and_topic_urls_name_the_destination(tcp_broker, qname):
    url = tcp_broker.tcp_url
    assert run_cli("send", "--url", url, "-q", f"queue://{qname}", "by url").returncode == 0
    assert drain_texts(url, qname) == ["by url"]  # not a queue literally named queue://...
    wrong = run_cli("send", "--url", url, "-q", f"topic://{qname}", "x")
    assert wrong.returncode == 2 and f"names a topic: use -t topic://{qname}" in wrong.stderr


def test_finding_10_a_wildcard_send_is_refused_unless_asked_for(tcp_broker, qname):
    url = tcp_broker.tcp_url
    with pyjms.ConnectionFactory(url).create_context() as ctx:  # two queues a wildcard would match
        ctx.create_consumer(ctx.create_queue(f"{qname}.A")).receive(1)
    refused = run_cli("send", "--url", url, "-q", f"{qname}.>", "fan-out")
    assert refused.returncode == 2 and "--allow-wildcards" in refused.stderr and "'>'" in refused.stderr
    assert drain_texts(url, f"{qname}.A", 300) == []
    allowed = run_cli("send", "--url", url, "-q", f"{qname}.>", "--allow-wildcards", "fan-out")
    assert allowed.returncode == 0, allowed.stderr
    assert drain_texts(url, f"{qname}.A") == ["fan-out"]  # the broker matched the wildcard


def test_finding_7_a_rules_table_that_is_not_utf8_is_one_line_naming_the_file(tcp_broker, tmp_path):
    rules = tmp_path / "rules.txt"
    rules.write_bytes(b"* r\xe8gles\nACTION(DISCARD)\n")
    done = run_cli("dlq-handler", "--url", tcp_broker.tcp_url, "-q", "DLQ", "-r", str(rules))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"pyjms dlq-handler: error: the rules table {rules} is not UTF-8 text: byte 0xe8 at byte offset 3"
    ]
    binary = tmp_path / "rules.bin"
    binary.write_bytes(b"ACTION(DISCARD)\n\0\0")
    done = run_cli("dlq-handler", "--url", tcp_broker.tcp_url, "-q", "DLQ", "-r", str(binary))
    assert done.returncode == 2 and f"the rules table {binary} is not text" in done.stderr


def test_admin_understands_queue_and_topic_urls(tcp_broker, qname):
    url = tcp_broker.tcp_url
    defined = run_cli("admin", "--url", url, "define-queue", f"queue://{qname}", "--max-depth", "3")
    assert defined.returncode == 0, defined.stderr
    described = run_cli("admin", "--url", url, "describe", qname)
    assert described.returncode == 0 and "max_depth=3" in described.stdout
    wrong = run_cli("admin", "--url", url, "define-queue", f"topic://{qname}")
    assert wrong.returncode == 2 and "names a topic, not a queue" in wrong.stderr
    assert run_cli("admin", "--url", url, "delete", f"queue://{qname}").returncode == 0
