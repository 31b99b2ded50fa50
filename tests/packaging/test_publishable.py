"""The distribution is fit to publish (issue 35): `python -m build` makes an sdist and a wheel
that `twine check --strict` passes; the metadata has classifiers (Typing :: Typed), project
URLs, the licence expression and both licence files; the wheel carries LICENSE and
THIRD_PARTY_NOTICES, and the notices are exactly what tools/third_party_notices.py gives for
the jars this wheel bundles; the README PyPI shows has absolute links only; and the
opentelemetry_instrumentor entry point is declared. The run's one build (tests/packaging/conftest.py,
shared with test_wheel.py), about 1-2 minutes for whichever of the two asks first."""

from __future__ import annotations

import email
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tools.third_party_notices import jars_in_wheel, render

pytestmark = pytest.mark.slow


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(args, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, f"{args}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def test_the_sdist_and_wheel_are_fit_to_publish(dist: Path) -> None:
    wheel = next(dist.glob("pyjms_jakarta-*.whl"))
    sdist = next(dist.glob("pyjms_jakarta-*.tar.gz"))

    checked = _run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)])
    assert checked.stdout.count("PASSED") == 2, checked.stdout

    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        info = next(n.rsplit("/", 1)[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(z.read(f"{info}/METADATA"))
        entry_points = z.read(f"{info}/entry_points.txt").decode()
        notices_in_wheel = z.read(f"{info}/licenses/THIRD_PARTY_NOTICES").decode()
        assert z.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert metadata["Name"] == "pyjms-jakarta"
    assert metadata["License-Expression"] == "Apache-2.0"
    assert sorted(metadata.get_all("License-File") or []) == ["LICENSE", "THIRD_PARTY_NOTICES"]
    classifiers = metadata.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL") or [])
    assert {"Repository", "Documentation", "Issues"} <= set(urls), urls
    assert (
        "Apache License" in (ROOT / "LICENSE").read_text() and "Version 2.0" in (ROOT / "LICENSE").read_text()
    )

    # the README as PyPI shows it: every link absolute (relative ones lead nowhere there)
    assert metadata["Description-Content-Type"].startswith("text/markdown")
    description = metadata.get_payload()
    links = re.findall(r"\]\(([^)]+)\)", description)
    assert links and all(link.startswith("https://") for link in links), links

    # the notices name every jar the wheel bundles, as the jars' poms declare their licences
    jars = jars_in_wheel(wheel)
    assert any(name.startswith("activemq-client-") for name in jars), sorted(jars)
    expected = render(jars)
    assert notices_in_wheel == expected, (
        "THIRD_PARTY_NOTICES is not what the bundled jars say: "
        f"python tools/third_party_notices.py --wheel {wheel.name} > THIRD_PARTY_NOTICES"
    )
    assert (ROOT / "THIRD_PARTY_NOTICES").read_text() == expected

    assert re.search(
        r"\[opentelemetry_instrumentor\]\s+pyjms = pyjms\.otel\.instrumentor:PyjmsInstrumentor", entry_points
    )

    with tarfile.open(sdist) as t:
        members = {m.split("/", 1)[1] for m in t.getnames() if "/" in m}
    assert {"LICENSE", "THIRD_PARTY_NOTICES", "README.md", "java/pom.xml"} <= members
