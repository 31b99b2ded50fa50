"""The spans: "send" from a send policy, "receive" and "process" from a consumer observer.

Named and attributed by the OpenTelemetry semantic conventions for messaging spans, the
version the installed opentelemetry-semantic-conventions package describes (1.44 here):

* ``send ORDERS``, kind PRODUCER: one per producer send (one for a send_batch, with
  ``messaging.batch.message_count``); its context is the messages' creation context and is
  written into their properties (pyjms.otel.carrier). A message that carries a creation
  context of its own keeps it, and the send span links to it.
* ``receive ORDERS``, kind CLIENT: one per receive call that returned messages, from the
  call's start to its return, linked to each message's creation context. A receive of one
  message outside any span of the caller continues the producer's trace (its parent is the
  creation context, as the Java agent's receive spans have by default); inside a span of the
  caller it is that span's child, as the conventions recommend.
* ``process ORDERS``, kind CONSUMER: one per delivery to a message listener, around the
  listener and current while it runs, a child of the creation context (listeners run on
  pyjms's dispatch thread, where no span of the caller is current) and linked to it.

Every span has ``messaging.system`` "jms" (as the Java agent's), ``messaging.destination.name``
(a temporary destination's span name leaves it out), ``messaging.operation.type`` and
``.name``, ``messaging.message.id`` and ``messaging.message.conversation_id`` (the correlation
id) for one message, ``messaging.client.id`` when the factory names one, ``server.address``
and ``server.port`` when the URL names one broker, and ``error.type`` when the operation failed.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.semconv._incubating.attributes import messaging_attributes as M
from opentelemetry.semconv.attributes import error_attributes, server_attributes
from opentelemetry.trace import Link, SpanKind, Status, StatusCode, Tracer

from pyjms.api.consumer import JMSConsumer
from pyjms.api.destination import Destination, TemporaryQueue, TemporaryTopic
from pyjms.api.factory import ConnectionFactory
from pyjms.api.message import Message
from pyjms.api.observers import ConsumerObserver, Listener
from pyjms.api.policy import Completion, OutgoingSend, Proceed, ProducerOptions, SendPolicy, SendResult
from pyjms.errors import JMSRuntimeException
from pyjms.otel import carrier
from pyjms.otel.metrics import MessagingMetrics

#: the messaging.system of every span: pyjms is a JMS client whatever the provider, and the
#: Java agent's JMS instrumentation says "jms" too
SYSTEM = M.MessagingSystemValues.JMS.value
#: outermost in a factory's send chain (pyjms.delay's policy is 100, pyjms.rules' 200), so the
#: context is in the properties before a delay mechanism stages or schedules the message
ORDER = 0


class Tracing:
    """Whether pyjms makes spans now, and with which tracer (set by pyjms.otel.instrument)."""

    def __init__(self) -> None:
        self.tracer: Tracer | None = None
        #: the messaging metrics' instruments (set with the tracer, by instrument())
        self.metrics: MessagingMetrics | None = None
        self.lock = threading.Lock()


TRACING = Tracing()


# ---------------------------------------------------------------------------- attributes


_SINGLE_BROKER = re.compile(r"^[a-z][a-z0-9+.-]*://([^/?,()]+)", re.IGNORECASE)


@lru_cache(maxsize=64)
def server_of(url: str) -> tuple[str, int | None] | None:
    """(host, port) of a URL naming one broker (tcp://127.0.0.1:61616, amqp://h:5672), else
    None: an in-process vm:// broker, or a failover list whose member in use is not known."""
    match = _SINGLE_BROKER.match(url)
    if match is None or url.lower().startswith("vm:"):
        return None
    host, _, port = match.group(1).rpartition("@")[2].rpartition(":")
    if not host:
        return (port, None) if port else None
    return (host.strip("[]"), int(port)) if port.isdigit() else (f"{host}:{port}", None)


def _is_temporary(destination: Destination) -> bool:
    return isinstance(destination, (TemporaryQueue, TemporaryTopic))


def span_name(operation: str, destination: Destination) -> str:
    """``send ORDERS``; a temporary destination's name is left out (it is high-cardinality)."""
    return operation if _is_temporary(destination) else f"{operation} {destination.name}"


def common_attributes(operation: str, destination: Destination, factory: ConnectionFactory) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        M.MESSAGING_SYSTEM: SYSTEM,
        M.MESSAGING_OPERATION_TYPE: operation,
        M.MESSAGING_OPERATION_NAME: operation,
        M.MESSAGING_DESTINATION_NAME: destination.name,
    }
    if _is_temporary(destination):
        attributes[M.MESSAGING_DESTINATION_TEMPORARY] = True
    if factory.client_id:
        attributes[M.MESSAGING_CLIENT_ID] = factory.client_id
    server = server_of(factory.url)
    if server is not None:
        attributes[server_attributes.SERVER_ADDRESS] = server[0]
        if server[1] is not None:
            attributes[server_attributes.SERVER_PORT] = server[1]
    return attributes


def message_attributes(attributes: dict[str, Any], messages: Sequence[Message]) -> None:
    """The id and correlation id of one message, or the count of a batch."""
    if len(messages) == 1:
        message_id = messages[0].get_jms_message_id()
        if message_id:
            attributes[M.MESSAGING_MESSAGE_ID] = message_id
        correlation_id = messages[0].get_jms_correlation_id()
        if correlation_id:
            attributes[M.MESSAGING_MESSAGE_CONVERSATION_ID] = correlation_id
    else:
        attributes[M.MESSAGING_BATCH_MESSAGE_COUNT] = len(messages)


def failed(span: trace.Span, error: BaseException) -> None:
    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, str(error)))
    span.set_attribute(error_attributes.ERROR_TYPE, type(error).__qualname__)


def _links(contexts: Sequence[trace.SpanContext]) -> list[Link]:
    """A link to each distinct valid context (a batch's messages share their send's)."""
    unique = {(c.trace_id, c.span_id): c for c in contexts if c.is_valid}
    return [Link(c) for c in unique.values()]


def creation_context(message: Message) -> tuple[otel_context.Context, trace.SpanContext]:
    ctx = carrier.extract(message)
    return ctx, trace.get_current_span(ctx).get_span_context()


def _caller_has_span() -> bool:
    return trace.get_current_span().get_span_context().is_valid


# ---------------------------------------------------------------------------- send


class TracingSendPolicy(SendPolicy):
    """Makes the send span and writes its context into the messages' properties."""

    def __init__(self, factory: ConnectionFactory) -> None:
        self.factory = factory

    def applies(self, options: ProducerOptions) -> bool:
        # every send, while instrumented or not: a producer asks once, not at each send, so
        # one made before instrument() is traced too; uninstrumented, send() only passes on
        return True

    def send(self, send: OutgoingSend, proceed: Proceed) -> SendResult:
        tracer, meters = TRACING.tracer, TRACING.metrics
        if tracer is None:
            return proceed(send)
        started = time.perf_counter()
        attributes = common_attributes("send", send.destination, send.context.factory)
        if len(send.messages) != 1:
            attributes[M.MESSAGING_BATCH_MESSAGE_COUNT] = len(send.messages)
        correlation_id = send.headers.get("correlation_id") or (
            send.messages[0].get_jms_correlation_id() if len(send.messages) == 1 else None
        )
        if correlation_id:
            attributes[M.MESSAGING_MESSAGE_CONVERSATION_ID] = correlation_id
        # a creation context the user put in the messages stays, and the send span links to it
        # (a send_batch's messages are bodies alone: only the producer's properties can carry one)
        outgoing = (
            [send.property_values(send.messages[0])]
            if len(send.messages) == 1
            else [{name: value for name, (_, value) in send.properties.items()}]
        )
        custom = [trace.get_current_span(carrier.extract_outgoing(p)).get_span_context() for p in outgoing]
        links = _links(custom)
        span = tracer.start_span(
            span_name("send", send.destination), kind=SpanKind.PRODUCER, attributes=attributes, links=links
        )
        if not links:
            properties = dict(send.properties)
            properties.update(carrier.injected_properties(trace.set_span_in_context(span)))
            send = send.replace(properties=properties)
        count = len(send.messages)

        def measured(error: BaseException | None) -> None:
            if meters is not None:
                meters.sent_messages(attributes, count, time.perf_counter() - started, error)

        if send.completion is not None:
            send = send.replace(completion=_ending(span, send.completion, measured))
        try:
            with trace.use_span(span, end_on_exit=False):
                result = proceed(send)
        except BaseException as e:
            failed(span, e)
            span.end()
            measured(e)
            raise
        if send.completion is None:
            _sent(span, result.headers)
            span.end()
            measured(None)
        return result


def _sent(span: trace.Span, headers: Mapping[str, Any] | None) -> None:
    message_id = headers.get("message_id") if headers else None
    if message_id:
        span.set_attribute(M.MESSAGING_MESSAGE_ID, message_id)


def _ending(
    span: trace.Span, completion: Completion, measured: Callable[[BaseException | None], None]
) -> Completion:
    """An async send's completion that ends its span (and measures the send) first."""

    def completed(headers: Mapping[str, Any] | None, error: JMSRuntimeException | None) -> None:
        if error is None:
            _sent(span, headers)
        else:
            failed(span, error)
        span.end()
        measured(error)
        completion(headers, error)

    return completed


# ---------------------------------------------------------------------------- receive, process


class TracingObserver(ConsumerObserver):
    """Makes the receive and process spans."""

    def received(self, consumer: JMSConsumer, messages: Sequence[Message], started_ns: int) -> None:
        tracer = TRACING.tracer
        if tracer is None:
            return
        creations = [creation_context(m) for m in messages]
        parent = None
        if len(messages) == 1 and not _caller_has_span():
            parent = creations[0][0]
        attributes = common_attributes("receive", consumer.destination, consumer.context.factory)
        message_attributes(attributes, messages)
        span = tracer.start_span(
            span_name("receive", consumer.destination),
            context=parent,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            links=_links([c[1] for c in creations]),
            start_time=started_ns,
        )
        span.end()
        meters = TRACING.metrics
        if meters is not None:
            meters.received(attributes, len(messages), max(0, time.time_ns() - started_ns) / 1e9)

    def deliver(self, consumer: JMSConsumer, message: Message, listener: Listener) -> None:
        tracer = TRACING.tracer
        if tracer is None:
            listener(message)
            return
        creation, creation_span = creation_context(message)
        # the listener runs in the creation context (its baggage too), unless a span of the
        # caller's is current: then in the caller's, linked to the creation context
        base = otel_context.get_current() if _caller_has_span() else creation
        attributes = common_attributes("process", consumer.destination, consumer.context.factory)
        message_attributes(attributes, [message])
        span = tracer.start_span(
            span_name("process", consumer.destination),
            context=base,
            kind=SpanKind.CONSUMER,
            attributes=attributes,
            links=_links([creation_span]),
        )
        token = otel_context.attach(trace.set_span_in_context(span, base))
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            listener(message)
        except BaseException as e:
            error = e
            failed(span, e)
            raise
        finally:
            otel_context.detach(token)
            span.end()
            meters = TRACING.metrics
            if meters is not None:
                meters.processed(attributes, time.perf_counter() - started, error)
