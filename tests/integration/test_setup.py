"""Setting up: resolving providers' jars (Maven when they are not cached), building the shim
with javac, and the providers command. Each may start a JVM (mvn, javac), so none is a unit test;
the set-up errors that need neither are in tests/unit/test_rules_and_setup.py."""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

from pyjms.bridge import classpath, maven, shimbuild
from pyjms.cli.main import main


def test_default_provider_resolves_from_maven_central(monkeypatch):
    monkeypatch.delenv("PYJMS_CLASSPATH", raising=False)
    cp = classpath.resolve()
    names = [Path(j).name for j in cp]
    assert "activemq-client-6.3.1.jar" in names and "jakarta.jms-api-3.1.0.jar" in names
    assert not any(n.startswith("activemq-all") for n in names)
    # one jar per artifact
    keys = [maven.artifact_key(j)[0] for j in cp]
    assert len(keys) == len(set(keys))


def test_resolved_provider_needs_neither_maven_nor_network(monkeypatch):
    jars = classpath.provider_jars("activemq")
    monkeypatch.setenv("PATH", "/nonexistent")  # no mvn: the cached list must do
    assert classpath.provider_jars("activemq") == jars


def test_shim_builds_from_sources_with_javac(tmp_path, capsys):
    java_dir = Path(__file__).resolve().parents[2] / "java"
    jars = classpath.shim_compile_classpath()
    out = shimbuild.build(java_dir, jars, tmp_path / "shim.jar")
    # issue 16, finding 22: a first run says why it waits
    assert "compiling pyjms's Java shim (first run" in capsys.readouterr().err
    names = zipfile.ZipFile(out).namelist()
    assert "org/pyjms/shim/Channel.class" in names
    assert "org/pyjms/shim/activemq/EmbeddedBroker.class" in names


def test_shim_is_rebuilt_when_a_source_changes(tmp_path):
    java_dir = tmp_path / "java"
    shutil.copytree(Path(__file__).resolve().parents[2] / "java", java_dir)
    jars = classpath.shim_compile_classpath()
    before = shimbuild.source_hash(java_dir, jars)
    channel = next(java_dir.rglob("Channel.java"))
    channel.write_text(channel.read_text() + "\n// edited\n")
    assert shimbuild.source_hash(java_dir, jars) != before


def test_providers_command_fetches_and_lists(capsys):
    assert main(["providers", "fetch", "activemq"]) == 0
    assert "activemq: " in capsys.readouterr().out
    assert main(["providers", "list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^activemq\s+resolved$", out, re.M) and "cache: " in out
    assert main(["providers", "fetch", "kafka"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown provider 'kafka'" in err
