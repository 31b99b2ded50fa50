"""OpenTelemetry fixtures: pyjms instrumented with an in-memory exporter, and the Java side of
the cross-language tests (OtelPeer.java with the OpenTelemetry Java SDK, and the Java agent).

The OpenTelemetry Java versions are pinned in tests/otel/pom.xml and resolved by Maven from
Maven Central like pyjms's providers (strict checksums), the jar list cached under the pyjms
cache by the pom's hash: resolved once, later runs start no Maven.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import pyjms.otel
from pyjms.bridge import maven
from pyjms.bridge.classpath import provider_jars
from tests.conftest import BrokerProcess
from tests.interop.conftest import loopback_url
from tests.interop.test_java_peer import LOG4J_CONFIG, _java_executable

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
PEER_SOURCE = HERE / "OtelPeer.java"
JAVA_TIMEOUT_S = 90  # compile + (agent start) + connect + receive; a hung peer must not hang the suite


class Spans:
    """The spans pyjms finished, from an in-memory exporter."""

    def __init__(self, exporter: InMemorySpanExporter, provider: TracerProvider) -> None:
        self.exporter = exporter
        self.provider = provider  # the test's own spans come from it too

    def all(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.all() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"spans named {name!r}: {[s.name for s in self.all()]}"
        return found[0]

    def clear(self) -> None:
        self.exporter.clear()


@pytest.fixture
def spans() -> Iterator[Spans]:
    """pyjms instrumented for one test, its spans kept in memory; uninstrumented after."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    pyjms.otel.instrument(tracer_provider=provider)
    try:
        yield Spans(exporter, provider)
    finally:
        pyjms.otel.uninstrument()
        provider.shutdown()


@pytest.fixture
def broker_url(tcp_broker: BrokerProcess) -> str:
    """The standalone broker's OpenWire URL: Python and Java meet there."""
    return loopback_url(tcp_broker)


def otel_jars(profile: str) -> list[str]:
    """The jars of a profile of tests/otel/pom.xml ("api": the SDK; "agent": the Java agent),
    resolved by Maven once and cached by the pom's hash."""
    cached = maven.default_cache_dir() / "classpath" / f"otel-tests-{profile}-{maven.pom_digest(POM)}.txt"
    if cached.exists():
        jars = [line for line in cached.read_text().splitlines() if line]
        if jars and all(os.path.exists(j) for j in jars):
            return jars
    cached.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pyjms-otel-mvn-") as tmp:
        out = Path(tmp) / "classpath.txt"
        cmd = [
            maven.mvn_executable(),
            "-B",
            "-C",
            "-q",
            "-f",
            str(POM),
            "-P",
            profile,
            "dependency:build-classpath",
            "-Dmdep.includeScope=runtime",
            f"-Dmdep.outputFile={out}",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=600)
        assert proc.returncode == 0 and out.exists(), (
            f"Maven could not resolve {POM} -P {profile}:\n{proc.stdout[-3000:]}"
        )
        jars = [j for j in out.read_text().strip().split(os.pathsep) if j]
    staged = cached.with_suffix(f".{os.getpid()}.tmp")
    staged.write_text("\n".join(jars) + "\n")
    os.replace(staged, cached)
    return jars


@dataclass(frozen=True)
class Java:
    """A Java launcher with ActiveMQ's client (and the OpenTelemetry SDK) on the classpath."""

    java: str
    classpath: str
    url: str

    def run(self, *args: str, jvm_options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        cmd = [
            self.java,
            f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",  # provider logging to stderr, WARN only
            *jvm_options,
            "-cp",
            self.classpath,
            *args,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", timeout=JAVA_TIMEOUT_S)
        assert proc.returncode == 0, (
            f"{' '.join(args[:2])} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-6000:]}"
        )
        return proc

    def otel_peer(self, mode: str, queue: str) -> dict[str, Any]:
        """OtelPeer.java's one JSON line for ``mode`` (receive, send) on ``queue``."""
        proc = self.run(str(PEER_SOURCE), mode, self.url, queue)
        (line,) = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        return json.loads(line)


@pytest.fixture(scope="module")
def java(tcp_broker: BrokerProcess) -> Java:
    classpath = os.pathsep.join(maven.merge(provider_jars("activemq"), otel_jars("api")))
    return Java(_java_executable(), classpath, loopback_url(tcp_broker))


@pytest.fixture(scope="module")
def java_agent() -> str:
    """The OpenTelemetry Java agent's jar."""
    (jar,) = otel_jars("agent")
    return jar
