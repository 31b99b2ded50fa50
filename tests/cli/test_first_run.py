"""Issue 16, finding 22: `make demo` installs only what the demo needs, with pip's progress;
`make test` installs the rest. Checked on make's plan (make -n) for a fresh virtualenv."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT


def _plan(target: str, tmp_path) -> list[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(
        ["make", "-n", target, f"VENV={tmp_path / 'venv'}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_make_demo_installs_pyjms_alone_and_shows_progress(tmp_path):
    installs = [line for line in _plan("demo", tmp_path) if "pip" in line and " install" in line]
    assert installs, "make demo installs nothing"
    for line in installs:
        assert "[test" not in line and "spark" not in line and " -q" not in line, line
    assert any(line.rstrip().endswith("install -e .") for line in installs)


def test_make_test_installs_the_test_spark_and_otel_extras(tmp_path):
    plan = _plan("test", tmp_path)
    assert any("install -e '.[test,spark,otel]'" in line and " -q" not in line for line in plan)
    assert any("pytest" in line for line in plan)
