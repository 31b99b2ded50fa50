"""`opentelemetry-instrument python app.py` traces and measures pyjms (issue 35): pyjms's
instrumentor is registered under the ``opentelemetry_instrumentor`` entry point, and a program
with no OpenTelemetry code of its own, run under opentelemetry-instrument (the SDK configured by
opentelemetry-distro from OTEL_* variables, console exporters), prints pyjms's spans and
metrics. A new process, with an embedded broker: about 10 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

from tests.conftest import ROOT

PROGRAM = textwrap.dedent("""
    import pyjms

    with pyjms.ConnectionFactory.embedded().create_context() as ctx:
        q = ctx.create_queue("AUTO.INSTRUMENTED")
        ctx.create_producer().send(q, "hello")
        with ctx.create_consumer(q) as consumer:
            print("received", consumer.receive(10_000).get_text(), flush=True)
""")


def _json_objects(text: str) -> list[dict[str, object]]:
    """The JSON objects the console exporters print, one after another."""
    decoder, found, i = json.JSONDecoder(), [], 0
    while (start := text.find("{", i)) >= 0:
        try:
            obj, i = decoder.raw_decode(text, start)
            found.append(obj)
        except json.JSONDecodeError:
            i = start + 1
    return found


def test_the_instrumentor_is_registered_for_opentelemetry_instrument() -> None:
    registered = {e.name: e.value for e in entry_points(group="opentelemetry_instrumentor")}
    assert registered.get("pyjms") == "pyjms.otel.instrumentor:PyjmsInstrumentor", registered


def test_opentelemetry_instrument_traces_and_measures_a_program_without_otel_code() -> None:
    tool = Path(sys.executable).parent / "opentelemetry-instrument"
    assert tool.is_file(), f"{tool} is missing: pip install -e '.[test,otel]' (opentelemetry-distro)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "PYJMS_URL"}
    env.update(
        OTEL_TRACES_EXPORTER="console",
        OTEL_METRICS_EXPORTER="console",
        OTEL_LOGS_EXPORTER="none",
        OTEL_SERVICE_NAME="pyjms-auto-instrumented",
        PYTHONPATH=str(ROOT),
    )
    out = subprocess.run(
        [str(tool), sys.executable, "-c", PROGRAM],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "received hello" in out.stdout, out.stdout[-3000:]
    objects = _json_objects(out.stdout)
    spans = {str(o["name"]): o for o in objects if "context" in o and "kind" in o}
    assert {"send AUTO.INSTRUMENTED", "receive AUTO.INSTRUMENTED"} <= set(spans), sorted(spans)
    send, receive = spans["send AUTO.INSTRUMENTED"], spans["receive AUTO.INSTRUMENTED"]
    assert send["kind"] == "SpanKind.PRODUCER" and receive["kind"] == "SpanKind.CLIENT"
    assert send["context"]["trace_id"] == receive["context"]["trace_id"]  # type: ignore[index]
    metric_names = {
        m["name"]
        for o in objects
        for r in o.get("resource_metrics", [])  # type: ignore[attr-defined]
        for s in r["scope_metrics"]
        for m in s["metrics"]
    }
    assert {
        "messaging.client.sent.messages",
        "messaging.client.consumed.messages",
        "messaging.client.operation.duration",
    } <= metric_names, metric_names
