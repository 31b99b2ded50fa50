"""Provider jars without Maven (issue 35, item 1): pyjms's lock names each provider's jars with
their sha256; pyjms downloads them from Maven Central over HTTPS with the standard library,
checks each checksum, caches them and works offline afterwards. Real downloads from Maven
Central; no JVM. (tests/packaging/test_lock.py proves the lock is what Maven resolves.)"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import pytest

import pyjms
from pyjms.bridge import classpath, jarlock, maven
from pyjms.cli.main import main

# an unreachable repository: a fetch that needs the network fails at once
NOWHERE = "https://127.0.0.1:9/maven2"


def _small_lock(*jars: jarlock.LockedJar) -> jarlock.Lock:
    return jarlock.Lock(Path("test.lock.json"), "0" * 64, {"small": jars})


def _jms_api() -> jarlock.LockedJar:
    """The smallest jar every provider has: the Jakarta Messaging API (59 kB)."""
    return next(j for j in classpath.lock().jars("activemq") if j.artifact == "jakarta.jms-api")


def test_the_lock_names_every_provider_s_jars_with_sha256_and_matches_the_pom():
    lock = classpath.lock()
    assert set(lock.providers) == set(maven.PROVIDERS)
    assert lock.pom_sha256 == maven.pom_sha256(classpath.SOURCE_POM)
    for provider in ("activemq", "artemis", "amqp"):
        jars = lock.jars(provider)
        assert any(j.artifact == "jakarta.jms-api" for j in jars)
        for jar in jars:
            assert re.fullmatch(r"[0-9a-f]{64}", jar.sha256) and jar.size > 0, jar
    names = {j.file_name for j in lock.jars("artemis")}
    assert "artemis-jakarta-client-2.55.0.jar" in names and "artemis-server-2.55.0.jar" in names
    epoll = next(j for j in lock.jars("amqp") if j.classifier)
    assert epoll.path.startswith("io/netty/netty-transport-native-") and epoll.path.endswith(
        f"-{epoll.classifier}.jar"
    )


def test_a_jar_downloads_by_the_lock_verified_and_then_works_offline(tmp_path, monkeypatch):
    jar = _jms_api()
    lock = _small_lock(jar)
    lines: list[str] = []
    monkeypatch.delenv("PYJMS_MAVEN_REPOSITORY", raising=False)
    (path,) = jarlock.fetch(lock, "small", tmp_path, lines.append)
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == jar.sha256
    assert Path(path) == tmp_path / "jars" / "jakarta" / "jms" / "jakarta.jms-api" / "3.1.0" / jar.file_name
    assert "https://repo.maven.apache.org/maven2" in lines[0] and "sha256" in lines[0]
    # offline now: the repository cannot be reached, and nothing asks it
    monkeypatch.setenv("PYJMS_MAVEN_REPOSITORY", NOWHERE)
    quiet: list[str] = []
    assert jarlock.fetch(lock, "small", tmp_path, quiet.append) == [path] and quiet == []
    assert jarlock.cached(lock, "small", tmp_path) == [path]


def test_a_wrong_checksum_is_one_clear_error_and_the_jar_is_not_cached(tmp_path):
    real = _jms_api()
    tampered = dataclasses.replace(real, sha256="ab" * 32)
    with pytest.raises(jarlock.LockError) as e:
        jarlock.fetch(_small_lock(tampered), "small", tmp_path, lambda _: None)
    message = str(e.value)
    assert "\n" not in message
    assert "checksum mismatch for jakarta.jms:jakarta.jms-api:3.1.0" in message
    assert (
        f"sha256 {real.sha256}, the lock says {'ab' * 32}" in message and "not used (not cached)" in message
    )
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # neither the jar nor a partial one
    assert jarlock.cached(_small_lock(tampered), "small", tmp_path) is None


def test_an_unreachable_repository_names_the_url_and_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("PYJMS_MAVEN_REPOSITORY", NOWHERE)
    with pytest.raises(
        jarlock.LockError,
        match=r"cannot download jakarta.jms:jakarta.jms-api:3.1.0 from "
        r"https://127.0.0.1:9/maven2/jakarta/jms/.*PYJMS_CLASSPATH",
    ):
        jarlock.fetch(_small_lock(_jms_api()), "small", tmp_path, lambda _: None)
    missing = dataclasses.replace(_jms_api(), version="0.0.404")
    monkeypatch.delenv("PYJMS_MAVEN_REPOSITORY")
    with pytest.raises(jarlock.LockError, match=r"jakarta.jms-api:0.0.404 .* HTTP 404"):
        jarlock.download(missing, tmp_path)


def test_a_provider_not_in_the_cache_is_a_setup_error_without_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("PYJMS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYJMS_MAVEN_REPOSITORY", NOWHERE)
    with pytest.raises(pyjms.SetupError, match="pyjms providers fetch artemis"):
        classpath.provider_jars("artemis", fetch=False)
    with pytest.raises(pyjms.SetupError, match="cannot download"):  # a fetch that fails: a SetupError
        classpath.provider_jars("artemis")
    assert "artemis" not in classpath.resolved_providers()


def test_a_malformed_or_foreign_lock_names_the_file(tmp_path):
    bad = tmp_path / "jars.lock.json"
    bad.write_text("{not json")
    with pytest.raises(jarlock.LockError, match=f"{re.escape(str(bad))} cannot be read"):
        jarlock.read(bad)
    bad.write_text('{"format": 9}')
    with pytest.raises(jarlock.LockError, match="has format 9; this pyjms reads format 1"):
        jarlock.read(bad)
    bad.write_text('{"format": 1, "pom_sha256": "x", "providers": {"a": [{"group": "g"}]}}')
    with pytest.raises(jarlock.LockError, match=r"is malformed \(KeyError"):
        jarlock.read(bad)
    with pytest.raises(jarlock.LockError, match="is missing"):
        jarlock.read(tmp_path / "none.json")
    with pytest.raises(jarlock.LockError, match="has no provider 'kafka'"):
        classpath.lock().jars("kafka")


def test_a_pom_changed_since_the_lock_says_make_lock(tmp_path, monkeypatch):
    stale = tmp_path / "jars.lock.json"
    stale.write_text(jarlock.LOCK_FILE.read_text().replace(classpath.lock().pom_sha256, "0" * 64))
    with pytest.raises(pyjms.SetupError, match="java/pom.xml has changed since jars.lock.json .*'make lock'"):
        classpath.lock(stale)


def test_a_mirror_serving_a_wrong_jar_fails_the_fetch_in_one_line_and_caches_nothing(
    tmp_path, monkeypatch, capsys
):
    # a local mirror (file://, Maven's layout) whose Jakarta Messaging API jar is not the locked one
    jar = _jms_api()
    served = tmp_path / "mirror" / jar.path
    served.parent.mkdir(parents=True)
    served.write_bytes(b"not the jar the lock names")
    cache = tmp_path / "cache"
    monkeypatch.setenv("PYJMS_CACHE_DIR", str(cache))
    monkeypatch.setenv("PYJMS_MAVEN_REPOSITORY", (tmp_path / "mirror").as_uri())
    assert main(["providers", "fetch", "amqp"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("pyjms: ")]
    digest = hashlib.sha256(b"not the jar the lock names").hexdigest()
    assert errors == [
        f"pyjms providers: error: checksum mismatch for jakarta.jms:jakarta.jms-api:3.1.0 from "
        f"{served.as_uri()}: sha256 {digest}, the lock says {jar.sha256}; the jar was not used (not cached)"
    ]
    assert not (cache / "jars").exists() or [p for p in (cache / "jars").rglob("*") if p.is_file()] == []
