"""pyjms's spans and their context in the messages, against the standalone broker over TCP.

Names, kinds and attributes follow the OpenTelemetry messaging semantic conventions of the
installed opentelemetry-semantic-conventions package; the trace context travels in the
``traceparent`` property (tests/otel/test_java_trace.py shows Java reads and writes the same).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from opentelemetry import propagate, trace
from opentelemetry.context import Context, attach, create_key, detach, get_value, set_value
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.propagators.textmap import (
    Getter,
    Setter,
    TextMapPropagator,
    default_getter,
    default_setter,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.semconv._incubating.attributes import messaging_attributes as M
from opentelemetry.semconv.attributes import error_attributes, server_attributes
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

import pyjms
import pyjms.aio as aio
import pyjms.otel
from pyjms.delay.processor import DelayProcessor
from tests.conftest import ROOT
from tests.otel.conftest import Spans

RECEIVE_MS = 10_000


def traceparent(span: ReadableSpan) -> str:
    """The W3C traceparent of a span, as the message that carries its context has it."""
    c = span.context
    return (
        f"00-{trace.format_trace_id(c.trace_id)}-{trace.format_span_id(c.span_id)}-{int(c.trace_flags):02x}"
    )


def parent_of(span: ReadableSpan) -> int | None:
    return None if span.parent is None else span.parent.span_id


def links_of(span: ReadableSpan) -> set[int]:
    return {link.context.span_id for link in span.links}


def wait_for(condition: Callable[[], object], timeout_s: float = RECEIVE_MS / 1000) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# ---------------------------------------------------------------------------- nothing without it


def test_pyjms_imports_no_opentelemetry_unless_instrumented(broker_url: str) -> None:
    """A program that sends, receives and listens, without instrument(), never imports
    opentelemetry (a fresh interpreter: this test process has imported it)."""
    program = textwrap.dedent(
        f"""
        import sys, threading
        import pyjms
        with pyjms.ConnectionFactory({broker_url!r}).create_context() as ctx:
            q = ctx.create_queue("T.otel.absent.{uuid.uuid4().hex[:8]}")
            ctx.create_producer().send(q, "one")
            ctx.create_producer().send_batch(q, ["two", "three"])
            consumer = ctx.create_consumer(q)
            got = []  # receive_batch takes what has arrived once the first is there
            while len(got) < 3:
                more = consumer.receive_batch(3 - len(got), 5000)
                assert more, got
                got += more
            assert "traceparent" not in got[0].get_property_names()
        with pyjms.ConnectionFactory({broker_url!r}).create_context() as ctx:
            q = ctx.create_queue("T.otel.absent.{uuid.uuid4().hex[:8]}")
            heard = threading.Event()
            ctx.create_consumer(q).set_message_listener(lambda m: heard.set())
            ctx.create_producer().send(q, "four")
            assert heard.wait(10)
        print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_uninstrument_stops_spans_and_propagation_at_once(spans: Spans, broker_url: str, qname: str) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        producer = ctx.create_producer()
        consumer = ctx.create_consumer(q)
        producer.send(q, "traced")
        assert "traceparent" in consumer.receive(RECEIVE_MS).get_property_names()
        assert pyjms.otel.is_instrumented()

        pyjms.otel.uninstrument()
        spans.clear()
        producer.send(q, "not traced")  # the same producer, made while instrumented
        m = consumer.receive(RECEIVE_MS)

    assert not pyjms.otel.is_instrumented()
    assert m.get_text() == "not traced" and "traceparent" not in m.get_property_names()
    assert spans.all() == []


# ---------------------------------------------------------------------------- send


def test_send_span_is_named_and_attributed_by_the_conventions(
    spans: Spans, broker_url: str, qname: str
) -> None:
    with pyjms.ConnectionFactory(
        broker_url, client_id=f"otel-{uuid.uuid4().hex[:6]}"
    ).create_context() as ctx:
        q = ctx.create_queue(qname)
        message = ctx.create_text_message("order 1")
        ctx.create_producer().set_jms_correlation_id("order-1").send(q, message)
        received = ctx.create_consumer(q).receive(RECEIVE_MS)

    sent = spans.one(f"send {qname}")
    assert sent.kind is SpanKind.PRODUCER
    assert sent.parent is None  # no span was current: a new trace
    assert sent.status.status_code is StatusCode.UNSET
    assert dict(sent.attributes) == {
        M.MESSAGING_SYSTEM: "jms",
        M.MESSAGING_OPERATION_TYPE: "send",
        M.MESSAGING_OPERATION_NAME: "send",
        M.MESSAGING_DESTINATION_NAME: qname,
        M.MESSAGING_MESSAGE_ID: message.get_jms_message_id(),
        M.MESSAGING_MESSAGE_CONVERSATION_ID: "order-1",
        M.MESSAGING_CLIENT_ID: ctx.factory.client_id,
        server_attributes.SERVER_ADDRESS: "127.0.0.1",
        server_attributes.SERVER_PORT: urlsplit(broker_url).port,
    }
    # the message carries the send span's context, as a plain String property
    assert received.get_string_property("traceparent") == traceparent(sent)
    assert received.get_jms_message_id() == message.get_jms_message_id()


def test_send_inside_a_span_is_its_child(spans: Spans, broker_url: str, qname: str) -> None:
    tracer = spans.provider.get_tracer("test")
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        with tracer.start_as_current_span("checkout") as checkout:
            ctx.create_producer().send(ctx.create_queue(qname), "order 2")

    sent = spans.one(f"send {qname}")
    assert parent_of(sent) == checkout.get_span_context().span_id
    assert sent.context.trace_id == checkout.get_span_context().trace_id


def test_send_batch_is_one_span_whose_context_every_message_carries(
    spans: Spans, broker_url: str, qname: str
) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        assert ctx.create_producer().send_batch(q, ["a", "b", b"c"]) == 3
        consumer = ctx.create_consumer(q)
        got = [consumer.receive(RECEIVE_MS) for _ in range(3)]

    sent = spans.one(f"send {qname}")
    assert sent.attributes[M.MESSAGING_BATCH_MESSAGE_COUNT] == 3
    assert M.MESSAGING_MESSAGE_ID not in sent.attributes
    assert [m.get_string_property("traceparent") for m in got] == [traceparent(sent)] * 3


def test_a_message_with_its_own_creation_context_keeps_it_and_the_send_links_to_it(
    spans: Spans, broker_url: str, qname: str
) -> None:
    """The conventions: a creation context the user put in the message is not changed, and
    the send span links to it. The property is an ordinary one: the public setter takes it."""
    own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        message = ctx.create_text_message("with its own context")
        message.set_string_property("traceparent", own)
        ctx.create_producer().send(q, message)
        with_own = ctx.create_producer().set_property("traceparent", own)
        with_own.send(q, "from the producer's property")
        with_own.send_batch(q, ["batch 1", "batch 2"])
        consumer = ctx.create_consumer(q)
        got = [consumer.receive(RECEIVE_MS) for _ in range(4)]

    assert [m.get_string_property("traceparent") for m in got] == [own] * 4
    assert len(spans.named(f"send {qname}")) == 3
    for sent in spans.named(f"send {qname}"):
        assert links_of(sent) == {0xB7AD6B7169203331}
        assert sent.context.trace_id != 0x0AF7651916CD43DD8448EB211C80319C  # the send's own trace


def test_reserved_jms_pyjms_names_stay_refused_while_tracing(spans: Spans, broker_url: str) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="JMS_PYJMS_"):
            ctx.create_producer().set_property("JMS_PYJMS_traceparent", "x")


def test_temporary_destination_is_left_out_of_the_span_name(spans: Spans, broker_url: str) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        temporary = ctx.create_temporary_queue()
        ctx.create_producer().send(temporary, "reply")
        assert ctx.create_consumer(temporary).receive(RECEIVE_MS) is not None

    # (pyjms's own requests and replies may make spans too: those on this queue are the test's)
    on_it = [s for s in spans.all() if s.attributes.get(M.MESSAGING_DESTINATION_NAME) == temporary.name]
    assert sorted(s.name for s in on_it) == ["receive", "send"]
    assert all(s.attributes[M.MESSAGING_DESTINATION_TEMPORARY] is True for s in on_it)


def test_an_async_send_span_ends_at_its_completion(spans: Spans, broker_url: str, qname: str) -> None:
    outcomes: list[tuple[pyjms.Message, object]] = []
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        message = ctx.create_text_message("async")
        ctx.create_producer().set_async(lambda m, e: outcomes.append((m, e))).send(q, message)
        wait_for(lambda: outcomes)
        received = ctx.create_consumer(q).receive(RECEIVE_MS)

    assert outcomes == [(message, None)]
    sent = spans.one(f"send {qname}")
    assert sent.attributes[M.MESSAGING_MESSAGE_ID] == message.get_jms_message_id()
    assert received.get_string_property("traceparent") == traceparent(sent)


def test_a_refused_send_records_its_error(spans: Spans, broker_url: str, qname: str) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        producer = ctx.create_producer()
        ctx.close()
        with pytest.raises(pyjms.IllegalStateRuntimeException):
            producer.send(q, ctx.create_text_message("after close"))
    # refused before the send chain (a closed context): no span at all, and none left open
    assert spans.named(f"send {qname}") == []


def test_the_context_survives_a_delivery_delay_through_the_staging_queue(
    spans: Spans, broker_url: str, qname: str
) -> None:
    staging = f"STAGE.{uuid.uuid4().hex[:8]}"
    processor = DelayProcessor(pyjms.ConnectionFactory(broker_url, staging_queue=staging)).start()
    try:
        # the receive's time counts from the broker's election of the processor on (a run with
        # four workers on two cores met 10 s with nothing when it counted from the start)
        assert processor.wait_until_active(30)
        factory = pyjms.ConnectionFactory(broker_url, delivery_delay="staging", staging_queue=staging)
        with factory.create_context() as ctx:
            q = ctx.create_queue(qname)
            message = ctx.create_text_message("later")
            ctx.create_producer().set_delivery_delay(300).send(q, message)
            received = ctx.create_consumer(q).receive(RECEIVE_MS)
    finally:
        processor.stop()

    assert received is not None and received.get_jms_message_id() == message.get_jms_message_id()
    sent = spans.one(f"send {qname}")
    assert received.get_string_property("traceparent") == traceparent(sent)
    assert parent_of(spans.one(f"receive {qname}")) == sent.context.span_id


# ---------------------------------------------------------------------------- receive


def test_receive_span_continues_the_producers_trace(spans: Spans, broker_url: str, qname: str) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().set_jms_correlation_id("c-9").send(q, "order 3")
        before = time.time_ns()
        message = ctx.create_consumer(q).receive(RECEIVE_MS)
        after = time.time_ns()

    sent, received = spans.one(f"send {qname}"), spans.one(f"receive {qname}")
    assert received.kind is SpanKind.CLIENT  # the conventions' kind for a receive
    assert received.context.trace_id == sent.context.trace_id
    assert parent_of(received) == sent.context.span_id and received.parent.is_remote
    assert links_of(received) == {sent.context.span_id}
    assert before <= received.start_time <= received.end_time <= after  # the receive call itself
    assert dict(received.attributes) == {
        M.MESSAGING_SYSTEM: "jms",
        M.MESSAGING_OPERATION_TYPE: "receive",
        M.MESSAGING_OPERATION_NAME: "receive",
        M.MESSAGING_DESTINATION_NAME: qname,
        M.MESSAGING_MESSAGE_ID: message.get_jms_message_id(),
        M.MESSAGING_MESSAGE_CONVERSATION_ID: "c-9",
        server_attributes.SERVER_ADDRESS: "127.0.0.1",
        server_attributes.SERVER_PORT: urlsplit(broker_url).port,
    }


def test_receive_inside_a_span_is_its_child_linked_to_the_producer(
    spans: Spans, broker_url: str, qname: str
) -> None:
    tracer = spans.provider.get_tracer("test")
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        ctx.create_producer().send(q, "order 4")
        with tracer.start_as_current_span("poll") as poll:
            assert ctx.create_consumer(q).receive(RECEIVE_MS) is not None

    sent, received = spans.one(f"send {qname}"), spans.one(f"receive {qname}")
    assert parent_of(received) == poll.get_span_context().span_id
    assert links_of(received) == {sent.context.span_id}


def test_an_empty_receive_makes_no_span(spans: Spans, broker_url: str, qname: str) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(qname))
        assert consumer.receive(100) is None
        assert consumer.receive_no_wait() is None
        assert consumer.receive_batch(5, 100) == []
    assert [s.name for s in spans.all() if s.attributes.get(M.MESSAGING_DESTINATION_NAME) == qname] == []


def test_receive_batch_is_one_span_linked_to_each_producer(spans: Spans, broker_url: str, qname: str) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context(pyjms.SESSION_TRANSACTED) as ctx:
        q = ctx.create_queue(qname)
        producer = ctx.create_producer()
        producer.send(q, "one")
        producer.send(q, "two")
        ctx.commit()
        consumer = ctx.create_consumer(q)
        for _ in range(100):  # a batch takes what the client has: until both came at once
            got = consumer.receive_batch(10, RECEIVE_MS)
            if len(got) == 2:
                ctx.commit()
                break
            ctx.rollback()
        assert len(got) == 2

    (received,) = [s for s in spans.named(f"receive {qname}") if len(s.links) == 2]
    assert received.attributes[M.MESSAGING_BATCH_MESSAGE_COUNT] == 2
    assert links_of(received) == {s.context.span_id for s in spans.named(f"send {qname}")}
    assert received.parent is None  # several producers: linked, none the parent


def test_receive_body_and_iteration_make_receive_spans(spans: Spans, broker_url: str, qname: str) -> None:
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        producer = ctx.create_producer()
        for body in ("body", "iterated"):
            producer.send(q, body)
        consumer = ctx.create_consumer(q)
        assert consumer.receive_body(str, RECEIVE_MS) == "body"
        assert [m.get_text() for m in consumer.messages(RECEIVE_MS)][:1] == ["iterated"]

    sends = spans.named(f"send {qname}")
    receives = spans.named(f"receive {qname}")
    assert [parent_of(r) for r in receives] == [s.context.span_id for s in sends]


# ---------------------------------------------------------------------------- listeners


def test_listener_runs_inside_a_process_span_that_continues_the_trace(
    spans: Spans, broker_url: str, qname: str
) -> None:
    current: list[trace.SpanContext] = []
    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        ctx.create_consumer(q).set_message_listener(
            lambda m: current.append(trace.get_current_span().get_span_context())
        )
        ctx.create_producer().send(q, "pushed")
        wait_for(lambda: current)

    sent, processed = spans.one(f"send {qname}"), spans.one(f"process {qname}")
    assert processed.kind is SpanKind.CONSUMER
    assert parent_of(processed) == sent.context.span_id
    assert links_of(processed) == {sent.context.span_id}
    assert processed.attributes[M.MESSAGING_OPERATION_TYPE] == "process"
    assert current == [processed.context]  # current while the listener ran
    assert spans.named(f"receive {qname}") == []


def test_a_failing_listener_marks_its_process_span_and_the_redelivery_gets_another(
    spans: Spans, broker_url: str, qname: str
) -> None:
    calls: list[bool] = []

    def listener(message: pyjms.Message) -> None:
        calls.append(message.get_jms_redelivered())
        if len(calls) == 1:
            raise ValueError("cannot process it yet")

    with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
        q = ctx.create_queue(qname)
        ctx.create_consumer(q).set_message_listener(listener)
        ctx.create_producer().send(q, "retry me")
        wait_for(lambda: len(calls) == 2)

    failed, retried = spans.named(f"process {qname}")
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes[error_attributes.ERROR_TYPE] == "ValueError"
    assert [e.name for e in failed.events] == ["exception"]
    assert retried.status.status_code is StatusCode.UNSET
    sent = spans.one(f"send {qname}")
    assert parent_of(failed) == parent_of(retried) == sent.context.span_id


# ---------------------------------------------------------------------------- asyncio


def test_asyncio_sends_and_listeners_see_the_callers_span(spans: Spans, broker_url: str, qname: str) -> None:
    tracer = spans.provider.get_tracer("test")

    async def main() -> trace.SpanContext:
        seen: asyncio.Queue[trace.SpanContext] = asyncio.Queue()

        async def listener(message: pyjms.Message) -> None:
            await seen.put(trace.get_current_span().get_span_context())

        async with aio.ConnectionFactory(broker_url).create_context() as ctx:
            q = ctx.create_queue(qname)
            await (await ctx.create_consumer(q)).set_message_listener(listener)
            with tracer.start_as_current_span("handle order"):
                await ctx.create_producer().send(q, "async order")
            return await asyncio.wait_for(seen.get(), RECEIVE_MS / 1000)

    in_listener = asyncio.run(main())

    handle = spans.one("handle order")
    sent, processed = spans.one(f"send {qname}"), spans.one(f"process {qname}")
    assert parent_of(sent) == handle.context.span_id
    assert parent_of(processed) == sent.context.span_id
    assert in_listener == processed.context


# ---------------------------------------------------------------------------- propagation fields


class RequestIdPropagator(TextMapPropagator):
    """A propagator whose field has dashes (``request-id``), carried beside W3C trace context."""

    KEY = create_key("request-id")

    def inject(
        self, carrier: Any, context: Context | None = None, setter: Setter[Any] = default_setter
    ) -> None:
        value = get_value(self.KEY, context)
        if value is not None:
            setter.set(carrier, "request-id", str(value))

    def extract(
        self, carrier: Any, context: Context | None = None, getter: Getter[Any] = default_getter
    ) -> Context:
        values = getter.get(carrier, "request-id")
        return set_value(self.KEY, values[0], context) if values else (context or Context())

    @property
    def fields(self) -> set[str]:
        return {"request-id"}


def test_a_field_with_dashes_travels_as_the_java_agent_names_it(
    spans: Spans, broker_url: str, qname: str
) -> None:
    previous = propagate.get_global_textmap()
    propagate.set_global_textmap(
        CompositePropagator([TraceContextTextMapPropagator(), RequestIdPropagator()])
    )
    try:
        heard: list[object] = []
        with pyjms.ConnectionFactory(broker_url).create_context() as ctx:
            q = ctx.create_queue(qname)
            token = attach(set_value(RequestIdPropagator.KEY, "r-42"))
            try:
                ctx.create_producer().send(q, "with a request id")
            finally:
                detach(token)
            ctx.create_consumer(q).set_message_listener(
                lambda m: heard.append(
                    (m.get_object_property("request__dash__id"), get_value(RequestIdPropagator.KEY))
                )
            )
            wait_for(lambda: heard)
    finally:
        propagate.set_global_textmap(previous)

    # a String property named with __dash__, and the listener's context has the value back
    assert heard == [("r-42", "r-42")]


def test_property_names_replace_each_dash_as_the_java_agent_does() -> None:
    assert pyjms.otel.property_name("traceparent") == "traceparent"
    assert pyjms.otel.property_name("X-B3-TraceId") == "X__dash__B3__dash__TraceId"
