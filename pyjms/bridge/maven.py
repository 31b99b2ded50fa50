"""Maven, for pyjms's maintainers: writes the lock of the providers' jars from java/pom.xml.

The coordinates live in one place, ``java/pom.xml`` (a profile per provider). This module
runs ``mvn dependency:build-classpath dependency:list`` for each profile, with strict
checksums, and writes what Maven resolved (coordinates, size and sha256 of each jar, in
classpath order) as the lock ``pyjms/bridge/jars.lock.json``, which bridge.jarlock reads at
run time to download the same jars without Maven. ``make lock`` (``python3
pyjms/bridge/maven.py lock``) rewrites it after the pom changes; setup.py writes it into a
wheel when the committed one is older than the pom.

It imports nothing from pyjms, so setup.py can load it by path while building a wheel.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

#: the providers java/pom.xml has a profile for
PROVIDERS = ("activemq", "artemis", "amqp", "ibmmq")
#: the provider a wheel carries, and the embedded broker's
DEFAULT_PROVIDER = "activemq"
#: the providers whose classes the shim's provider packages compile against
SHIM_PROVIDERS = ("activemq", "artemis", "amqp")

Progress = Callable[[str], None]


class ResolveError(RuntimeError):
    pass


def stderr_progress(line: str) -> None:
    print(f"pyjms: {line}", file=sys.stderr, flush=True)


def default_cache_dir() -> Path:
    base = os.environ.get("PYJMS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pyjms"
    )
    return Path(base)


def pom_digest(pom: Path) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()[:12]


def pom_sha256(pom: Path) -> str:
    """What the lock records of the pom it was written from."""
    return hashlib.sha256(pom.read_bytes()).hexdigest()


def mvn_executable() -> str:
    found = shutil.which("mvn")
    if not found:
        raise ResolveError(
            "Maven ('mvn') is not on the PATH; pyjms's maintainers use it to write the lock of "
            "the providers' jars from java/pom.xml (install it, e.g. Debian: apt-get install maven)"
        )
    return found


def locked_jars(pom: Path, provider: str, progress: Progress = stderr_progress) -> list[dict[str, object]]:
    """The runtime classpath of ``provider`` (its profile plus the common dependencies) as
    Maven resolves it, in classpath order: each jar's coordinates, size and sha256. Maven
    verifies each download against Central's checksums (-C); Maven prints each artifact it
    downloads, and those lines go to ``progress``."""
    if provider not in PROVIDERS:
        raise ResolveError(f"unknown provider '{provider}': choose one of {', '.join(PROVIDERS)}")
    progress(f"resolving the {provider} provider's jars with Maven ({pom}, profile '{provider}')")
    with tempfile.TemporaryDirectory(prefix="pyjms-mvn-") as tmp:
        order, listing = Path(tmp) / "classpath.txt", Path(tmp) / "list.txt"
        cmd = [
            mvn_executable(),
            "-B",
            "-C",
            "-f",
            str(pom),
            "-P",
            provider,
            "dependency:build-classpath",
            "dependency:list",
            "-Dmdep.includeScope=runtime",
            f"-Dmdep.outputFile={order}",
            "-DincludeScope=runtime",
            "-DoutputAbsoluteArtifactFilename=true",
            f"-DoutputFile={listing}",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
        log: list[str] = []
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            log.append(line)
            if line.startswith("Downloaded from"):
                progress("  " + re.sub(r"\s+\(.*\)$", "", line.split(": ", 1)[-1]))
        if proc.wait() != 0 or not order.exists() or not listing.exists():
            errors = [ln for ln in log if "[ERROR]" in ln][:6] or log[-10:]
            raise ResolveError(f"Maven could not resolve the {provider} provider:\n" + "\n".join(errors))
        jars = [j for j in order.read_text().strip().split(os.pathsep) if j]
        coordinates = _listed_coordinates(listing.read_text())
    out: list[dict[str, object]] = []
    for jar in jars:
        group, artifact, classifier, version = coordinates[os.path.realpath(jar)]
        data = Path(jar).read_bytes()
        out.append(
            {
                "group": group,
                "artifact": artifact,
                "version": version,
                "classifier": classifier,
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
    return out


def _listed_coordinates(listing: str) -> dict[str, tuple[str, str, str, str]]:
    """(group, artifact, classifier, version) by jar path, from ``dependency:list`` lines such
    as ``g:a:jar[:classifier]:version:scope:/path/a.jar -- module m``."""
    out = {}
    for line in listing.splitlines():
        line = line.strip().split(" -- ", 1)[0]
        parts = line.split(":")
        if len(parts) < 6 or not parts[-1].endswith(".jar"):
            continue
        path = parts[-1]
        if len(parts) == 7:
            group, artifact, _type, classifier, version = parts[:5]
        else:
            group, artifact, _type, version = parts[:4]
            classifier = ""
        out[os.path.realpath(path)] = (group, artifact, classifier, version)
    return out


def lock_text(pom: Path, progress: Progress = stderr_progress) -> str:
    """The lock of every provider's jars (bridge.jarlock reads it), as Maven resolves
    ``pom`` now: one jar a line, so a changed version is a one-line diff."""
    lines = [
        "{",
        '  "format": 1,',
        '  "comment": "written by `make lock` from java/pom.xml (pyjms.bridge.maven); do not edit",',
        f'  "pom_sha256": "{hashlib.sha256(pom.read_bytes()).hexdigest()}",',
        '  "providers": {',
    ]
    for i, provider in enumerate(PROVIDERS):
        jars = locked_jars(pom, provider, progress)
        lines.append(f"    {json.dumps(provider)}: [")
        lines.extend(f"      {json.dumps(j)}{',' if k < len(jars) - 1 else ''}" for k, j in enumerate(jars))
        lines.append("    ]" + ("," if i < len(PROVIDERS) - 1 else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


_VERSIONED = re.compile(r"^(?P<name>.+?)-(?P<version>\d[^-]*(?:-[A-Za-z]+\d*)?)(?P<rest>(?:-[^.]+)?)\.jar$")


def artifact_key(jar: str) -> tuple[str, tuple[object, ...]]:
    """(artifact name with classifier, sortable version) of a jar path, for de-duplication.
    Uses the local repository's layout (…/artifact/version/artifact-version[-cls].jar) and
    falls back to the file name."""
    p = Path(jar)
    version, artifact = p.parent.name, p.parent.parent.name
    if p.name.startswith(f"{artifact}-{version}"):
        name = artifact + p.name[len(artifact) + len(version) + 1 : -4]
    else:
        m = _VERSIONED.match(p.name)
        if not m:
            return p.name, ()
        name, version = m["name"] + m["rest"], m["version"]
    parts = re.split(r"[.\-]", version)
    return name, tuple((0, int(x)) if x.isdigit() else (-1, x) for x in parts)


def merge(*classpaths: Sequence[str]) -> list[str]:
    """Several providers' jars as one classpath: one jar per artifact, the newest version,
    in first-seen order (providers share SLF4J, Netty, the JMS API...)."""
    best: dict[str, tuple[tuple[object, ...], str]] = {}
    order: list[str] = []
    for cp in classpaths:
        for jar in cp:
            name, version = artifact_key(jar)
            if name not in best:
                order.append(name)
                best[name] = (version, jar)
            elif version > best[name][0]:
                best[name] = (version, jar)
    return [best[name][1] for name in order]


def main(argv: Sequence[str]) -> int:
    """``python3 pyjms/bridge/maven.py lock``: rewrites the lock from java/pom.xml."""
    if list(argv) != ["lock"]:
        print("usage: python3 pyjms/bridge/maven.py lock", file=sys.stderr)
        return 2
    here = Path(__file__).resolve().parent
    lock = here / "jars.lock.json"
    text = lock_text(here.parent.parent / "java" / "pom.xml")
    staged = lock.with_suffix(".tmp")
    staged.write_text(text)
    os.replace(staged, lock)
    print(f"wrote {lock}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
