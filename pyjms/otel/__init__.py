"""OpenTelemetry tracing and messaging metrics for pyjms (the ``pyjms-jakarta[otel]`` extra).

::

    import pyjms.otel
    pyjms.otel.instrument()            # the global tracer provider, or tracer_provider=...

From then on producer sends, consumer receives and message listeners make spans named and
attributed by the OpenTelemetry messaging semantic conventions (pyjms.otel.spans), and the
trace context travels in message properties as the OpenTelemetry Java agent's JMS
instrumentation writes and reads it (pyjms.otel.carrier), so a trace crosses between Python
and Java programs both ways.

Nothing of OpenTelemetry is imported until this package is: ``import pyjms`` never imports it,
and without instrument() the client makes no span and pays nothing. It plugs into the client's
public extension points only: a send policy (pyjms.api.policy) and a consumer observer
(pyjms.api.observers).

Sends are traced for factories whose send chain is made while instrumented (a factory makes it
with its first producer): instrument before making factories, as the Java agent is there from
the start. Receives and listeners are traced from the moment of the call. uninstrument() stops
every span and all propagation at once; factories made afterwards do not even pass their sends
through pyjms.otel's policy.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from pyjms.api.message import Message
from pyjms.api.observers import add_consumer_observer, remove_consumer_observer
from pyjms.api.policy import install_send_policy, uninstall_send_policy
from pyjms.otel.carrier import DASH, extract, property_name
from pyjms.otel.metrics import MessagingMetrics
from pyjms.otel.spans import ORDER, TRACING, TracingObserver, TracingSendPolicy
from pyjms.version import __version__

#: the instrumentation scope of pyjms's spans
SCOPE = "pyjms"
#: the version of the messaging semantic conventions the spans follow
SCHEMA_URL = "https://opentelemetry.io/schemas/1.44.0"

_OBSERVER = TracingObserver()

__all__ = [
    "DASH",
    "SCHEMA_URL",
    "SCOPE",
    "creation_context",
    "instrument",
    "is_instrumented",
    "property_name",
    "uninstrument",
]


def instrument(
    tracer_provider: TracerProvider | None = None, meter_provider: MeterProvider | None = None
) -> None:
    """Makes pyjms trace and measure: spans from ``tracer_provider`` (None: the global one, as
    set by ``opentelemetry.trace.set_tracer_provider`` or the SDK's auto-configuration),
    messaging metrics (pyjms.otel.metrics) from ``meter_provider`` (None: the global one),
    context through the global propagator (W3C trace context and baggage unless configured
    otherwise). Calling it again changes the providers. ``opentelemetry-instrument`` calls it
    through pyjms's instrumentor (pyjms.otel.instrumentor)."""
    with TRACING.lock:
        TRACING.tracer = trace.get_tracer(SCOPE, __version__, tracer_provider, schema_url=SCHEMA_URL)
        TRACING.metrics = MessagingMetrics(SCOPE, __version__, SCHEMA_URL, meter_provider)
        install_send_policy(TracingSendPolicy, order=ORDER)
        add_consumer_observer(_OBSERVER)


def uninstrument() -> None:
    """Stops making spans and propagating context, at once for every producer and consumer."""
    with TRACING.lock:
        TRACING.tracer = None
        TRACING.metrics = None
        remove_consumer_observer(_OBSERVER)
        uninstall_send_policy(TracingSendPolicy)


def is_instrumented() -> bool:
    return TRACING.tracer is not None


def creation_context(message: Message) -> Context:
    """The context a message's producer sent it in (its trace, baggage...), by the global
    propagator; empty if it carries none. For processing a received message in its
    producer's trace: ``with opentelemetry.context.attach(...)`` or as a span's parent."""
    return extract(message)
