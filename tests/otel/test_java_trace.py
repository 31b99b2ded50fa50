"""One trace across Python and Java, both ways, on the standalone broker over TCP.

The Java side is a plain Jakarta JMS program that knows nothing of pyjms: OtelPeer.java with
the OpenTelemetry Java API and SDK, propagating as the Java agent's JMS instrumentation does,
and tests/interop/JavaPeer.java run under the OpenTelemetry Java agent itself, which traces
ActiveMQ's client with no code at all and exports its spans as OTLP JSON on stderr.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

import pyjms
import pyjms.otel
from tests.interop.test_java_peer import PEER_SOURCE as JAVA_PEER_SOURCE
from tests.otel.conftest import Java, Spans

RECEIVE_MS = 10_000


def trace_id(span: ReadableSpan) -> str:
    return trace.format_trace_id(span.context.trace_id)


def span_id(span: ReadableSpan) -> str:
    return trace.format_span_id(span.context.span_id)


def parent_id(span: ReadableSpan) -> str | None:
    return None if span.parent is None else trace.format_span_id(span.parent.span_id)


def linked(span: ReadableSpan) -> set[tuple[str, str]]:
    return {
        (trace.format_trace_id(link.context.trace_id), trace.format_span_id(link.context.span_id))
        for link in span.links
    }


def send(url: str, queue: str, body: str) -> pyjms.Message:
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        message = ctx.create_text_message(body)
        ctx.create_producer().send(ctx.create_queue(queue), message)
        return message


# ---------------------------------------------------------------------------- OpenTelemetry API


def test_a_trace_begun_by_a_python_producer_continues_in_a_java_consumer(
    spans: Spans, broker_url: str, java: Java, qname: str
) -> None:
    message = send(broker_url, qname, "order 1")
    sent = spans.one(f"send {qname}")

    got = java.otel_peer("receive", qname)

    assert got["messageId"] == message.get_jms_message_id()
    assert got["traceId"] == trace_id(sent)  # one trace...
    assert got["parentSpanId"] == span_id(sent)  # ...and the Java span is the send span's child
    assert got["parentRemote"] is True
    assert (got["name"], got["kind"]) == (f"process {qname}", "CONSUMER")


def test_a_python_send_inside_an_application_span_takes_its_trace_to_java(
    spans: Spans, broker_url: str, java: Java, qname: str
) -> None:
    checkout_tracer = spans.provider.get_tracer("checkout")
    with checkout_tracer.start_as_current_span("checkout") as checkout:
        send(broker_url, qname, "order 2")
    sent = spans.one(f"send {qname}")
    assert parent_id(sent) == trace.format_span_id(checkout.get_span_context().span_id)

    got = java.otel_peer("receive", qname)

    assert got["traceId"] == trace.format_trace_id(checkout.get_span_context().trace_id) == trace_id(sent)
    assert got["parentSpanId"] == span_id(sent)


def test_a_trace_begun_by_a_java_producer_continues_in_a_python_receive(
    spans: Spans, broker_url: str, java: Java, qname: str
) -> None:
    sent = java.otel_peer("send", qname)

    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        message = ctx.create_consumer(ctx.create_queue(qname)).receive(RECEIVE_MS)
    assert message is not None and message.get_jms_message_id() == sent["messageId"]
    creation = trace.get_current_span(pyjms.otel.creation_context(message)).get_span_context()
    assert (trace.format_trace_id(creation.trace_id), trace.format_span_id(creation.span_id)) == (
        sent["traceId"],
        sent["spanId"],
    )

    received = spans.one(f"receive {qname}")
    assert received.kind is SpanKind.CLIENT
    assert trace_id(received) == sent["traceId"]
    assert parent_id(received) == sent["spanId"]
    assert received.parent is not None and received.parent.is_remote
    assert linked(received) == {(sent["traceId"], sent["spanId"])}
    assert received.attributes["messaging.message.id"] == sent["messageId"]


def test_a_trace_begun_by_a_java_producer_continues_in_a_python_listener(
    spans: Spans, broker_url: str, java: Java, qname: str
) -> None:
    seen: list[tuple[str, str]] = []

    def listener(message: pyjms.Message) -> None:
        current = trace.get_current_span().get_span_context()
        seen.append((trace.format_trace_id(current.trace_id), trace.format_span_id(current.span_id)))

    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        ctx.create_consumer(ctx.create_queue(qname)).set_message_listener(listener)
        sent = java.otel_peer("send", qname)
        wait_for(lambda: seen)

    processed = spans.one(f"process {qname}")
    assert processed.kind is SpanKind.CONSUMER
    assert trace_id(processed) == sent["traceId"]
    assert parent_id(processed) == sent["spanId"]
    assert linked(processed) == {(sent["traceId"], sent["spanId"])}
    assert seen == [(sent["traceId"], span_id(processed))]  # current while the listener ran


def wait_for(condition: Any, timeout_s: float = RECEIVE_MS / 1000) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# ---------------------------------------------------------------------------- the Java agent


def agent_spans(stderr: str) -> list[dict[str, Any]]:
    """The spans the Java agent exported as OTLP JSON lines (exporter logging-otlp)."""
    found = []
    for line in stderr.splitlines():
        start = line.find('{"resource')
        if start < 0:
            continue
        for resource in [json.loads(line[start:])]:
            for scope in resource.get("scopeSpans", []):
                found.extend(scope.get("spans", []))
    return found


def agent_options(agent: str) -> tuple[str, ...]:
    return (
        f"-javaagent:{agent}",
        # the single-file source launcher looks like a JDK tool, which the agent leaves alone
        "-Dotel.javaagent.enabled=true",
        "-Dotel.traces.exporter=logging-otlp",
        "-Dotel.metrics.exporter=none",
        "-Dotel.logs.exporter=none",
        "-Dotel.service.name=java-peer",
        # only the JMS instrumentation: a faster start, and no other spans
        "-Dotel.instrumentation.common.default-enabled=false",
        "-Dotel.instrumentation.jms.enabled=true",
    )


@pytest.mark.slow
def test_the_java_agent_continues_a_python_trace_in_an_uninstrumented_java_client(
    spans: Spans, broker_url: str, java: Java, java_agent: str, qname: str
) -> None:
    message = send(broker_url, qname, "order 3")
    sent = spans.one(f"send {qname}")

    proc = java.run(
        str(JAVA_PEER_SOURCE), "receive", broker_url, qname, "1", jvm_options=agent_options(java_agent)
    )

    (received,) = [s for s in agent_spans(proc.stderr) if "receive" in s["name"]]
    assert received["traceId"] == trace_id(sent)
    assert received["parentSpanId"] == span_id(sent)
    got = json.loads(proc.stdout.splitlines()[0])
    assert got["JMSMessageID"] == message.get_jms_message_id()


@pytest.mark.slow
def test_a_python_receive_continues_the_java_agents_trace(
    spans: Spans, broker_url: str, java: Java, java_agent: str, qname: str
) -> None:
    proc = java.run(
        str(JAVA_PEER_SOURCE),
        "send",
        broker_url,
        qname,
        f"{qname}.REPLY",
        jvm_options=agent_options(java_agent),
    )
    sends = [s for s in agent_spans(proc.stderr) if s["kind"] in ("SPAN_KIND_PRODUCER", 4)]
    assert len(sends) == 4, proc.stderr[-3000:]  # JavaPeer sends four messages

    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(qname))
        received = [consumer.receive(RECEIVE_MS) for _ in range(4)]
    assert None not in received

    # each Python receive span is the child of the agent's span for that message's send
    receives = spans.named(f"receive {qname}")
    assert {(trace_id(r), parent_id(r)) for r in receives} == {(s["traceId"], s["spanId"]) for s in sends}
