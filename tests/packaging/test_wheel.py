"""The distribution a user installs (issue 18): `python -m build` makes an sdist and a wheel,
and the wheel, installed into a fresh venv on a machine with only a JDK (no Maven on PATH, an
empty home, so no cache of pyjms's), gives a working `pyjms` command and library."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def _run(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(args, capture_output=True, text=True, timeout=900, **kw)
    assert out.returncode == 0, f"{args}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def test_the_wheel_installs_and_works_with_only_a_jdk(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)])
    wheels, sdists = list(dist.glob("pyjms_jakarta-*.whl")), list(dist.glob("pyjms_jakarta-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    assert "pyjms/py.typed" in zipfile.ZipFile(wheels[0]).namelist()  # typed for its users (PEP 561)

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    home = tmp_path / "home"
    home.mkdir()
    java = shutil.which("java")
    assert java is not None
    # only the venv and the JDK: no mvn, no ~/.cache/pyjms
    env = {
        "PATH": os.pathsep.join([str(venv / "bin"), str(Path(java).resolve().parent)]),
        "HOME": str(home),
        "JAVA_HOME": os.environ.get("JAVA_HOME", str(Path(java).resolve().parent.parent)),
    }
    _run(
        [str(venv / "bin" / "pip"), "install", "-q", str(wheels[0])], env={**env, "PATH": os.environ["PATH"]}
    )
    assert shutil.which("mvn", path=env["PATH"]) is None

    assert "usage: pyjms" in _run([str(venv / "bin" / "pyjms"), "--help"], env=env, cwd=home).stdout
    program = textwrap.dedent("""
        import pyjms
        with pyjms.ConnectionFactory().create_context() as ctx:
            q = ctx.create_queue("WHEEL")
            ctx.create_producer().send(q, "from the wheel")
            with ctx.create_consumer(q) as consumer:
                print(consumer.receive(10_000).get_text(), pyjms.__file__)
    """)
    out = _run(
        [
            str(
                venv / "bin" / "python",
            ),
            "-c",
            program,
        ],
        env=env,
        cwd=home,
    ).stdout
    assert "from the wheel" in out and str(venv) in out  # the installed pyjms, not this checkout
