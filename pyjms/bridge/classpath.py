"""Where the JVM's jars come from, resolved in one place.

Order: the jars a caller names (an argument), then either ``PYJMS_CLASSPATH`` — which, when
set, replaces resolution entirely (air-gapped use) — or the providers' jars:

* a wheel carries the default provider's jars (ActiveMQ Classic) in ``pyjms/_jars``;
* otherwise a provider's jars are downloaded from Maven Central on its first use (``pyjms
  providers fetch NAME`` does it ahead) by pyjms's lock, ``bridge/jars.lock.json``: each jar
  checked against its sha256 and cached, so later runs make no network calls (see
  bridge.jarlock). No Maven is needed; Maven writes the lock from ``java/pom.xml`` (bridge.maven).

Entries may be jar files or directories of jars.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from pyjms.bridge import jarlock, maven
from pyjms.errors import SetupError

PACKAGE_DIR = Path(__file__).resolve().parent.parent
SOURCE_POM = PACKAGE_DIR.parent / "java" / "pom.xml"  # in a source checkout
BUNDLED_JARS = PACKAGE_DIR / "_jars"  # in a wheel: _jars/<provider>/classpath.txt and jars

DEFAULT_PROVIDER = maven.DEFAULT_PROVIDER
PROVIDERS = maven.PROVIDERS
cache_dir = maven.default_cache_dir
_locks: dict[Path, jarlock.Lock] = {}


def lock(path: Path = jarlock.LOCK_FILE) -> jarlock.Lock:
    """pyjms's lock of the providers' jars. In a source checkout it must be the one Maven
    writes from java/pom.xml as it is: a pom changed since is a SetupError saying to run
    ``make lock``."""
    if path not in _locks:
        try:
            found = jarlock.read(path)
        except jarlock.LockError as e:
            raise SetupError(str(e)) from None
        if SOURCE_POM.exists() and found.pom_sha256 != maven.pom_sha256(SOURCE_POM):
            raise SetupError(
                f"java/pom.xml has changed since {path.name} was written from it: run 'make lock' "
                "(Maven resolves the pom and rewrites the lock)"
            )
        _locks[path] = found
    return _locks[path]


def _expand(entry: str) -> list[str]:
    p = Path(entry).expanduser()
    if p.is_dir():
        return sorted(str(j) for j in p.glob("*.jar"))
    if not p.exists():
        raise SetupError(f"classpath entry '{entry}' does not exist")
    return [str(p)]


def _bundled(provider: str) -> list[str] | None:
    listing = BUNDLED_JARS / provider / "classpath.txt"
    if not listing.exists():
        return None
    return [str(BUNDLED_JARS / provider / name) for name in listing.read_text().split()]


def provider_jars(provider: str, *, fetch: bool = True) -> list[str]:
    """The jars of one provider: bundled in the wheel, cached, or (``fetch``) downloaded now
    by the lock, saying what it downloads. Without ``fetch`` a provider not cached yet is a
    SetupError saying how to get it."""
    if provider not in PROVIDERS:
        raise SetupError(f"unknown provider '{provider}': choose one of {', '.join(PROVIDERS)}")
    bundled = _bundled(provider)
    if bundled is not None:
        return bundled
    try:
        cached = jarlock.cached(lock(), provider, cache_dir())
        if cached is not None:
            return cached
        if not fetch:
            raise SetupError(
                f"the {provider} provider's jars are not downloaded yet: run "
                f"'pyjms providers fetch {provider}' (downloads them from Maven Central)"
            )
        return jarlock.fetch(lock(), provider, cache_dir())
    except jarlock.LockError as e:
        raise SetupError(str(e)) from None


def resolved_providers() -> list[str]:
    """The providers whose jars are at hand without downloading anything."""
    out = []
    for provider in PROVIDERS:
        if _bundled(provider) is not None:
            out.append(provider)
            continue
        try:
            if jarlock.cached(lock(), provider, cache_dir()) is not None:
                out.append(provider)
        except (SetupError, jarlock.LockError):
            pass
    return out


def shim_compile_classpath() -> list[str]:
    """What the shim compiles against: every provider it has a package for."""
    return maven.merge(*(provider_jars(p) for p in maven.SHIM_PROVIDERS))


def resolve(user_entries: Iterable[str] = (), providers: Sequence[str] = (DEFAULT_PROVIDER,)) -> list[str]:
    """The JVM's classpath: named jars first, then PYJMS_CLASSPATH if set, else the jars of
    ``providers`` and of every other provider already resolved (one JVM serves a process for
    its whole life, so a provider used later must be on the classpath from the start)."""
    out: list[str] = []
    for entry in user_entries:
        out.extend(_expand(entry))
    env = os.environ.get("PYJMS_CLASSPATH", "")
    if env:
        for entry in filter(None, env.split(os.pathsep)):
            out.extend(_expand(entry))
    else:
        wanted = list(dict.fromkeys([*providers, *resolved_providers()]))
        out.extend(maven.merge(*(provider_jars(p) for p in wanted)))
    seen: set[str] = set()
    return [j for j in out if not (j in seen or seen.add(j))]  # type: ignore[func-returns-value]
