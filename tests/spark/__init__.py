"""Tests of pyjms.spark against a real local Spark and the real standalone broker."""

import pytest


def needs_spark() -> None:
    """Skips the calling test module when PySpark (or pyarrow) cannot be imported."""
    reason = "pyjms.spark needs PySpark 4 with pyarrow and pandas < 3: pip install 'pyjms-jakarta[spark]'"
    pytest.importorskip("pyspark", reason=reason)
    pytest.importorskip("pyarrow", reason=reason)
