"""Issue 16, finding 17: when Spark's Python workers cannot import pyjms, the error names the
Python they run and PYSPARK_PYTHON, instead of a long AnalysisException."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.spark import needs_spark

needs_spark()

from pyjms.spark import WorkerPythonError, check_worker_python  # noqa: E402


def _isolated_python3(tmp_path: Path) -> Path:
    """A python3 on PATH that sees none of this environment's packages (as a system python3)."""
    stub = tmp_path / "python3"
    stub.write_text(f'#!/bin/sh\nexec {sys.base_prefix}/bin/python3 -I "$@"\n')
    stub.chmod(0o755)
    return stub


def test_a_worker_python_without_pyjms_is_named_with_pyspark_python(tmp_path, monkeypatch):
    stub = _isolated_python3(tmp_path)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(WorkerPythonError) as e:
        check_worker_python()
    text = str(e.value)
    assert f"run python3 ({stub}" in text and f"PYSPARK_PYTHON={sys.executable}" in text
    assert "No module named" in text


def test_spark_pyspark_python_is_the_one_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    stub = _isolated_python3(tmp_path)
    with pytest.raises(WorkerPythonError, match="spark.pyspark.python"):
        check_worker_python(str(stub))
    assert check_worker_python() == sys.executable  # this interpreter imports pyjms: no error
