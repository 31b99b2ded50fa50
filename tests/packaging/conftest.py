"""The packaging tests' one build of this checkout (tests/packaging/building.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.packaging.building import built_once


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of this test run's one sdist and wheel (read them, never change them)."""
    run_dir = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_dir = run_dir.parent  # the run's directory, above each worker's own
    return built_once(run_dir / "pyjms-dist")
