"""Every snippet in the README runs (issue 16, finding 16): the Python blocks against the
embedded broker, the command-line session as ``python -m pyjms`` against a broker process. A
README that drifts from the code fails here."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
import uuid
from datetime import timedelta

import pytest

import pyjms
from pyjms.cli.main import build_parser
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
SHELL_BLOCKS = re.findall(r"```sh\n(.*?)```", README, re.S)


def test_the_readme_is_short_and_links_only_to_docs_that_exist():
    """At most 150 lines (issue 13): the guides live in docs/. Its links are absolute, to read
    on PyPI too (issue 35): those into the repository (pyproject's Repository URL) name files of
    this checkout."""
    assert len(README.splitlines()) <= 150
    repository = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    links = re.findall(r"\]\(([^)#]+)", README)
    assert links and all(link.startswith("https://") for link in links), links
    docs = [link.removeprefix(f"{repository}/blob/main/") for link in links if link.startswith(repository)]
    assert any(d.startswith("docs/") for d in docs)
    for target in docs:
        assert (ROOT / target).is_file(), target


def test_the_readme_has_snippets_to_run():
    assert len(PYTHON_BLOCKS) >= 4 and any("pyjms " in b for b in SHELL_BLOCKS)


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[f"python-{i}" for i in range(len(PYTHON_BLOCKS))])
def test_python_snippet_runs(block, monkeypatch, capsys):
    monkeypatch.delenv("PYJMS_URL", raising=False)  # as a reader runs it: the embedded broker
    # a snippet that continues the tour finds what the tour made: its imports, a factory, a
    # context, a queue with a message on it, and a producer
    factory = pyjms.ConnectionFactory()
    with factory.create_context() as ctx:
        q = ctx.create_queue(f"README.{uuid.uuid4().hex[:8]}")
        producer = ctx.create_producer()
        producer.send(q, "hello")
        exec(
            compile(block, "README.md", "exec"),
            {
                "pyjms": pyjms,
                "timedelta": timedelta,
                "factory": factory,
                "ctx": ctx,
                "q": q,
                "producer": producer,
            },
        )
    out = capsys.readouterr().out
    if "get_text()" in block and "print(" in block:
        assert "hello" in out  # the tour's consumer got its message


def _cli_lines() -> list[str]:
    return [
        line.split("#", 1)[0].strip()
        for block in SHELL_BLOCKS
        for line in block.splitlines()
        if line.startswith("pyjms ")
    ]


def test_every_command_line_in_the_readme_parses():
    parser = build_parser()
    for line in _cli_lines():
        parser.parse_args(shlex.split(line)[1:])  # exits (SystemExit) on an option that is not there


def test_the_readme_command_session_runs_against_a_broker(tcp_broker, qname):
    env = {**os.environ, "PYJMS_URL": tcp_broker.tcp_url}
    outputs = []
    for line in _cli_lines():
        argv = shlex.split(line.replace("ORDERS", qname))
        if argv[1] == "broker":
            continue  # tcp_broker is that broker
        done = subprocess.run(
            [sys.executable, "-m", "pyjms", *argv[1:]],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, f"{line}: {done.stderr}"
        outputs.append(done.stdout)
    joined = "\n".join(outputs)
    assert "first order" in joined and "second order" in joined and f"queue://{qname}" in joined


def test_finding_16_the_readme_pattern_closes_its_consumers_so_the_next_one_gets_the_next_message(ctx, qname):
    q = ctx.create_queue(qname)
    ctx.create_producer().send(q, "first").send(q, "second")
    got = []
    for _ in range(2):  # the README's pattern, twice in one context
        with ctx.create_consumer(q) as consumer:
            got.append(consumer.receive(5000).get_text())
    assert got == ["first", "second"]
