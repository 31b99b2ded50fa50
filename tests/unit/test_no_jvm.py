"""The guard of tests/unit/conftest.py: a unit test cannot start a JVM, in process or as a child."""

from __future__ import annotations

import subprocess
import sys

import jpype
import pytest

from pyjms.bridge import jvm
from tests.unit.conftest import JVMStartedInUnitTest


def test_starting_the_jvm_through_pyjms_fails_the_test() -> None:
    if jpype.isJVMStarted():
        pytest.skip("a JVM runs in this process already (other tests of a whole-suite run started it)")
    with pytest.raises(JVMStartedInUnitTest):
        jvm.start()
    assert not jpype.isJVMStarted() and not jvm.is_started()


@pytest.mark.parametrize("argv", [["javac", "-version"], ["/usr/bin/java", "-version"], "mvn -v"])
def test_running_a_jvm_program_fails_the_test(argv: list[str] | str) -> None:
    with pytest.raises(JVMStartedInUnitTest):
        subprocess.run(argv, shell=isinstance(argv, str), capture_output=True)


def test_other_programs_still_run() -> None:
    done = subprocess.run([sys.executable, "-c", "print('ok')"], capture_output=True, text=True, check=True)
    assert done.stdout == "ok\n"
