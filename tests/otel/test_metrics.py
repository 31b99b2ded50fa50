"""Messaging metrics under the semantic conventions' names (issue 35), read from an
in-memory metric reader: sent and consumed messages, operation and process durations, with
the conventions' attributes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

import pyjms
import pyjms.otel

RECEIVE_MS = 10_000


@pytest.fixture
def reader() -> Iterator[InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    tracer_provider = TracerProvider()
    pyjms.otel.instrument(tracer_provider=tracer_provider, meter_provider=meters)
    try:
        yield reader
    finally:
        pyjms.otel.uninstrument()
        meters.shutdown()
        tracer_provider.shutdown()


def _points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    found: dict[str, list[Any]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "pyjms"
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def _by(points: list[Any], **attributes: Any) -> list[Any]:
    return [
        p for p in points if all(p.attributes.get(k.replace("_", ".")) == v for k, v in attributes.items())
    ]


def test_sends_receives_and_listeners_are_counted_and_timed(
    reader: InMemoryMetricReader, broker_url: str, qname: str
) -> None:
    listened = threading.Event()
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q, pushed = ctx.create_queue(qname), ctx.create_queue(f"{qname}.PUSHED")
        producer = ctx.create_producer()
        producer.send(q, "one")
        producer.send_batch(q, ["two", "three"])
        producer.send(pushed, "to the listener")
        with ctx.create_consumer(q) as consumer:
            assert consumer.receive(RECEIVE_MS) is not None
            got = 0
            while got < 2:
                got += len(consumer.receive_batch(2, RECEIVE_MS))
        with ctx.create_context() as other, other.create_consumer(pushed) as listening:
            listening.set_message_listener(lambda m: listened.set())
            assert listened.wait(RECEIVE_MS / 1000)
    points = _points(reader)

    sent = points["messaging.client.sent.messages"]
    assert sum(p.value for p in _by(sent, messaging_destination_name=qname)) == 3
    first = _by(sent, messaging_destination_name=qname)[0].attributes
    assert first["messaging.system"] == "jms" and first["messaging.operation.name"] == "send"
    assert first["server.address"] == "127.0.0.1" and isinstance(first["server.port"], int)
    assert "error.type" not in first

    consumed = points["messaging.client.consumed.messages"]
    received = _by(consumed, messaging_destination_name=qname, messaging_operation_name="receive")
    assert sum(p.value for p in received) == 3
    processed = _by(
        consumed, messaging_destination_name=f"{qname}.PUSHED", messaging_operation_name="process"
    )
    assert sum(p.value for p in processed) == 1

    durations = points["messaging.client.operation.duration"]
    sends = _by(durations, messaging_destination_name=qname, messaging_operation_name="send")
    assert sum(p.count for p in sends) == 2  # a send and a send_batch
    receives = _by(durations, messaging_destination_name=qname, messaging_operation_name="receive")
    assert sum(p.count for p in receives) >= 2 and all(p.min >= 0 for p in receives)
    assert list(sends[0].explicit_bounds)[:3] == [0.005, 0.01, 0.025]  # the conventions' buckets
    process = _by(points["messaging.process.duration"], messaging_destination_name=f"{qname}.PUSHED")
    assert sum(p.count for p in process) == 1


def test_a_temporary_destination_is_counted_without_its_name(
    reader: InMemoryMetricReader, broker_url: str
) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        temporary = ctx.create_temporary_queue()
        ctx.create_producer().send(temporary, "x")
    sent = _points(reader)["messaging.client.sent.messages"]
    assert [p.value for p in sent] == [1] and "messaging.destination.name" not in sent[0].attributes
