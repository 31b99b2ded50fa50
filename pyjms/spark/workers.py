"""Spark's Python workers are other processes, started with another interpreter than the
driver's unless told: ``spark.pyspark.python``, else ``PYSPARK_PYTHON``, else ``python3`` from
PATH. A virtualenv that is not activated is not what they run, and a worker that cannot import
pyjms fails with a long AnalysisException ending in "No module named 'pyjms'". This module
asks that interpreter first, so the error says which Python the workers run and what to set."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from pyjms.errors import JMSRuntimeException

#: what a worker imports to run the data source
_PROBE = "import jpype, pyspark, pyjms.spark"


class WorkerPythonError(JMSRuntimeException, ImportError):
    """Spark's Python workers cannot import pyjms (or JPype, or PySpark)."""


def worker_python(conf_python: str | None = None) -> str:
    """The interpreter Spark starts its Python workers with."""
    return conf_python or os.environ.get("PYSPARK_PYTHON") or "python3"


def check_worker_python(conf_python: str | None = None) -> str:
    """The workers' interpreter, once it imported what the data source needs; WorkerPythonError
    naming it, and PYSPARK_PYTHON, otherwise."""
    python = worker_python(conf_python)
    resolved = shutil.which(python) or python
    how = (
        "spark.pyspark.python"
        if conf_python
        else "PYSPARK_PYTHON"
        if os.environ.get("PYSPARK_PYTHON")
        else "the default, as neither spark.pyspark.python nor PYSPARK_PYTHON is set"
    )
    try:
        done = subprocess.run([resolved, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    except OSError as e:
        problem = f"cannot be run ({e.strerror or e})"
    else:
        if done.returncode == 0:
            return resolved
        lines = (done.stderr or done.stdout).strip().splitlines()
        problem = (
            f"cannot import pyjms's Spark data source ({lines[-1] if lines else f'exit {done.returncode}'})"
        )
    raise WorkerPythonError(
        f"Spark's Python workers run {python} ({resolved}; {how}), which {problem}: set "
        f"PYSPARK_PYTHON={sys.executable} before the SparkSession starts, or install 'pyjms-jakarta[spark]' there"
    )
