"""The providers' jars by lock: downloaded from Maven Central over HTTPS, each checked against
the sha256 the lock names, and cached, with Python's standard library only (no Maven).

The lock (``jars.lock.json`` beside this module, shipped in the wheel) names every jar of each
provider's runtime classpath, in classpath order: group, artifact, version, classifier, size
and sha256. Maven writes it from ``java/pom.xml`` (bridge.maven, ``make lock``); this module
only reads it. A jar lands in the cache (``<cache>/jars/<Maven layout>``) only after its
checksum matched, by an atomic rename, so a cached jar is a verified one and later runs make
no network call.

It imports nothing from pyjms, so setup.py can load it by path while building a wheel.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: the lock's file name, beside this module
LOCK_NAME = "jars.lock.json"
LOCK_FILE = Path(__file__).resolve().parent / LOCK_NAME
#: the lock format this module reads
FORMAT = 1
#: where jars come from; PYJMS_MAVEN_REPOSITORY names a mirror (https:// or file://, Maven's layout)
CENTRAL = "https://repo.maven.apache.org/maven2"
_CHUNK = 1 << 16

Progress = Callable[[str], None]


class LockError(RuntimeError):
    """A lock that cannot be read, a jar that cannot be downloaded, or one whose checksum is
    not the lock's: one line naming the file or URL and what is wrong."""


def stderr_progress(line: str) -> None:
    print(f"pyjms: {line}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class LockedJar:
    group: str
    artifact: str
    version: str
    classifier: str
    size: int
    sha256: str

    @property
    def file_name(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    @property
    def path(self) -> str:
        """Its path in a Maven repository (remote or a cache of the same layout)."""
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"

    @property
    def coordinates(self) -> str:
        tail = f":{self.classifier}" if self.classifier else ""
        return f"{self.group}:{self.artifact}:{self.version}{tail}"


@dataclass(frozen=True)
class Lock:
    source: Path
    pom_sha256: str
    providers: dict[str, tuple[LockedJar, ...]]

    def jars(self, provider: str) -> tuple[LockedJar, ...]:
        if provider not in self.providers:
            raise LockError(f"{self.source} has no provider '{provider}': it has {', '.join(self.providers)}")
        return self.providers[provider]


def read(path: Path = LOCK_FILE) -> Lock:
    """The lock in ``path``; a missing or malformed one is a LockError naming it."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LockError(
            f"the lock of pyjms's Java jars is missing ({path}): reinstall pyjms-jakarta"
        ) from None
    except (OSError, ValueError) as e:
        raise LockError(f"the lock {path} cannot be read: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise LockError(f"the lock {path} has format {got!r}; this pyjms reads format {FORMAT}")
    providers: dict[str, tuple[LockedJar, ...]] = {}
    try:
        for name, entries in doc["providers"].items():
            providers[name] = tuple(
                LockedJar(
                    group=str(e["group"]),
                    artifact=str(e["artifact"]),
                    version=str(e["version"]),
                    classifier=str(e.get("classifier", "")),
                    size=int(e["size"]),
                    sha256=str(e["sha256"]).lower(),
                )
                for e in entries
            )
        pom_sha256 = str(doc["pom_sha256"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise LockError(
            f"the lock {path} is malformed ({type(e).__name__}: {e}): regenerate it (make lock)"
        ) from None
    return Lock(path, pom_sha256, providers)


def repository() -> str:
    return (os.environ.get("PYJMS_MAVEN_REPOSITORY") or CENTRAL).rstrip("/")


def cached_path(jar: LockedJar, cache: Path) -> Path:
    return cache / "jars" / jar.path


def cached(lock: Lock, provider: str, cache: Path) -> list[str] | None:
    """The provider's jars if every one is in the cache (placed there only once verified),
    else None. No network, no hashing: a size check only."""
    jars = lock.jars(provider)
    if not all(_is_cached(j, cache) for j in jars):
        return None
    return [str(cached_path(j, cache)) for j in jars]


def download(jar: LockedJar, cache: Path, repo: str | None = None) -> Path:
    """Downloads one jar into the cache, checking its sha256 as it streams in. A mismatch
    raises LockError and leaves nothing in the cache."""
    target = cached_path(jar, cache)
    url = f"{repo or repository()}/{jar.path}"
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        got = _stream(url, staged, jar)
        if got != jar.sha256:
            raise LockError(
                f"checksum mismatch for {jar.coordinates} from {url}: sha256 {got}, the lock says "
                f"{jar.sha256}; the jar was not used (not cached)"
            )
        os.replace(staged, target)  # concurrent fetchers each land a whole, verified jar
    finally:
        staged.unlink(missing_ok=True)  # a failed or interrupted download leaves nothing behind
    return target


def fetch(lock: Lock, provider: str, cache: Path, progress: Progress = stderr_progress) -> list[str]:
    """The provider's jars, downloading those not cached yet; says what it downloads."""
    ready = cached(lock, provider, cache)
    if ready is not None:
        return ready
    jars = lock.jars(provider)
    missing = [j for j in jars if not _is_cached(j, cache)]
    repo = repository()
    progress(
        f"downloading the {provider} provider's jars from {repo} into {cache / 'jars'} "
        f"({len(missing)} of {len(jars)} jars, {sum(j.size for j in missing) / 1e6:.1f} MB; "
        "each checked against the sha256 in pyjms's lock)"
    )
    for jar in missing:
        download(jar, cache, repo)
        progress(f"  {jar.coordinates} ({jar.size / 1e6:.1f} MB)")
    progress(f"{provider}: {len(jars)} jars ready ({sum(j.size for j in jars) / 1e6:.0f} MB)")
    return [str(cached_path(j, cache)) for j in jars]


def _stream(url: str, into: Path, jar: LockedJar) -> str:
    """Downloads ``url`` into the file ``into``; its sha256."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=60) as response, into.open("wb") as out:
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as e:
        raise LockError(f"cannot download {jar.coordinates} from {url}: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        raise LockError(
            f"cannot download {jar.coordinates} from {url}: {reason} (offline? PYJMS_MAVEN_REPOSITORY "
            "names a mirror, PYJMS_CLASSPATH jars of your own)"
        ) from None
    return digest.hexdigest()


def _is_cached(jar: LockedJar, cache: Path) -> bool:
    try:
        return cached_path(jar, cache).stat().st_size == jar.size
    except OSError:
        return False
