"""Java's log output goes into Python's logging (issue 35): each Java logger's events are
records of ``pyjms.java.<Java logger>``, levels mapped, a Java exception's stack trace as the
record's exception text; Java filters at WARN unless ``pyjms.java`` has a level of its own; and
nothing reaches stderr in log4j2's own format. Each case runs in a new process (the bridge is
set up when the JVM starts), whose events logged just before it exits still arrive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.conftest import ROOT

PROGRAM = textwrap.dedent("""
    import json, logging, sys

    class Print(logging.Handler):
        def emit(self, r):
            print(json.dumps([r.name, r.levelname, r.getMessage(), r.exc_text, getattr(r, "java_thread", None)]), flush=True)

    java = logging.getLogger("pyjms.java")
    java.addHandler(Print())
    java.propagate = False
    if sys.argv[1] != "default":
        java.setLevel(getattr(logging, sys.argv[1]))

    import jpype
    from pyjms.bridge import jvm
    jvm.start()
    shop = jpype.JClass("org.slf4j.LoggerFactory").getLogger("org.example.Shop")  # as ActiveMQ logs
    shop.debug("counted the apples")
    shop.info("opened the shop")
    shop.warn("low on pears")
    shop.error("out of plums", jpype.JClass("java.lang.IllegalStateException")("no plums left"))
    jpype.JClass("org.apache.logging.log4j.LogManager").getLogger("org.example.Vault").fatal("the vault is open")
""")


def _records(level: str) -> tuple[list[list[str | None]], str]:
    env = {k: v for k, v in os.environ.items() if k != "PYJMS_JAVA_LOG"}
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, level], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("[")], out.stderr


def test_java_warnings_and_errors_become_python_records() -> None:
    records, stderr = _records("default")
    assert [r[:3] for r in records] == [
        ["pyjms.java.org.example.Shop", "WARNING", "low on pears"],
        ["pyjms.java.org.example.Shop", "ERROR", "out of plums"],
        ["pyjms.java.org.example.Vault", "CRITICAL", "the vault is open"],
    ]
    error = records[1]
    assert error[3] is not None and "java.lang.IllegalStateException: no plums left" in error[3]
    assert error[4] == "main"  # the Java thread that logged
    assert "low on pears" not in stderr and "[Shop]" not in stderr  # log4j2's console is gone


def test_a_level_on_pyjms_java_lowers_what_java_passes() -> None:
    records, _ = _records("DEBUG")
    assert [r[1] for r in records] == ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
    assert records[0][2] == "counted the apples"
