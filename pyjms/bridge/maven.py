"""Resolves a provider's jars from Maven Central with Maven itself.

The coordinates live in one place, ``java/pom.xml`` (a profile per provider). This module
runs ``mvn dependency:build-classpath`` for a profile, with strict checksums, and caches the
resulting list of jar paths (in the local Maven repository, ~/.m2) under the pyjms cache, so
a provider is resolved once and later runs neither start Maven nor touch the network.

It imports nothing from pyjms, so setup.py can load it by path while building a wheel.
"""

from __future__ import annotations

import hashlib
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


def cached_classpath_file(cache: Path, pom: Path, provider: str) -> Path:
    """Where the resolved classpath of ``provider`` is kept; a changed pom is a new file."""
    return cache / "classpath" / f"{provider}-{pom_digest(pom)}.txt"


def read_cached(cache: Path, pom: Path, provider: str) -> list[str] | None:
    """The cached jars of a provider, or None if not resolved yet (or a jar has gone)."""
    f = cached_classpath_file(cache, pom, provider)
    if not f.exists():
        return None
    jars = [line for line in f.read_text().splitlines() if line]
    return jars if jars and all(os.path.exists(j) for j in jars) else None


def mvn_executable() -> str:
    found = shutil.which("mvn")
    if not found:
        raise ResolveError(
            "Maven ('mvn') is not on the PATH; pyjms uses it to resolve Java providers from Maven "
            "Central (install it, e.g. Debian: apt-get install maven), or put the provider's jars "
            "on PYJMS_CLASSPATH"
        )
    return found


def resolve(pom: Path, provider: str, cache: Path, progress: Progress = stderr_progress) -> list[str]:
    """The jars of ``provider`` (its profile plus the common dependencies), resolving them
    with Maven on first use. Maven prints each artifact it downloads; those lines are passed
    on to ``progress`` so the user sees what comes from the network and where it goes."""
    if provider not in PROVIDERS:
        raise ResolveError(f"unknown provider '{provider}': choose one of {', '.join(PROVIDERS)}")
    cached = read_cached(cache, pom, provider)
    if cached is not None:
        return cached
    target = cached_classpath_file(cache, pom, provider)
    target.parent.mkdir(parents=True, exist_ok=True)
    progress(
        f"resolving the {provider} provider's jars from Maven Central ({pom}, profile "
        f"'{provider}'); they go to the local Maven repository, the list to {target}"
    )
    with tempfile.TemporaryDirectory(prefix="pyjms-mvn-") as tmp:
        out = Path(tmp) / "classpath.txt"
        cmd = [
            mvn_executable(),
            "-B",
            "-C",
            "-f",
            str(pom),
            "-P",
            provider,
            "dependency:build-classpath",
            "-Dmdep.includeScope=runtime",
            f"-Dmdep.outputFile={out}",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
        log: list[str] = []
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            log.append(line)
            if line.startswith("Downloaded from"):
                progress("  " + re.sub(r"\s+\(.*\)$", "", line.split(": ", 1)[-1]))
        if proc.wait() != 0 or not out.exists():
            errors = [ln for ln in log if "[ERROR]" in ln][:6] or log[-10:]
            raise ResolveError(f"Maven could not resolve the {provider} provider:\n" + "\n".join(errors))
        jars = [j for j in out.read_text().strip().split(os.pathsep) if j]
    staged = target.with_suffix(f".{os.getpid()}.tmp")
    staged.write_text("\n".join(jars) + "\n")
    os.replace(staged, target)  # concurrent resolvers each land a whole list
    size = sum(os.path.getsize(j) for j in jars) / 1e6
    progress(f"{provider}: {len(jars)} jars ({size:.0f} MB) resolved; classpath cached in {target}")
    return jars


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
