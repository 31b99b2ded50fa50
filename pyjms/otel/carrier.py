"""Trace context in JMS message properties, named as the OpenTelemetry Java agent names them.

The Java agent's JMS instrumentation writes each propagation field (W3C ``traceparent``,
``tracestate``, ``baggage``...) as a String property of the same name, with every ``-``
replaced by ``__dash__`` (a JMS property name is a Java identifier), and reads them back the
same way. pyjms does the same, so a trace crosses between Python and Java programs in either
direction. The names are ordinary application properties: the route is the producer's own
property override (pyjms.api.policy.OutgoingSend), with the name and value checked as a
user's would be.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import propagate
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import Getter

from pyjms.api.message import Message
from pyjms.api.message.properties import checked_property, tag_for

#: what the Java agent puts for each '-' of a propagation field's name
DASH = "__dash__"


def property_name(field: str) -> str:
    """The JMS property that carries a propagation field (``traceparent`` is ``traceparent``)."""
    return field.replace("-", DASH)


class _MessageGetter(Getter[Message]):
    """Reads propagation fields from a received message, as the Java agent's getter does:
    only String values count."""

    def get(self, carrier: Message, key: str) -> list[str] | None:
        value = carrier.get_object_property(property_name(key))
        return [value] if isinstance(value, str) else None

    def keys(self, carrier: Message) -> list[str]:
        return carrier.get_property_names()


_GETTER = _MessageGetter()


def extract(message: Message) -> Context:
    """The message's creation context (empty when it carries none), by the global propagator."""
    return propagate.extract(message, getter=_GETTER)


def injected_properties(context: Context) -> dict[str, tuple[int, Any]]:
    """The properties that carry ``context`` (by the global propagator), as producer
    properties: {name: (JMS type, value)}."""
    fields: dict[str, str] = {}
    propagate.inject(fields, context=context)
    return {property_name(k): checked_property(property_name(k), tag_for(v), v) for k, v in fields.items()}


class _PropertiesGetter(Getter[Mapping[str, Any]]):
    """Reads propagation fields from the property values a message goes out with."""

    def get(self, carrier: Mapping[str, Any], key: str) -> list[str] | None:
        value = carrier.get(property_name(key))
        return [value] if isinstance(value, str) else None

    def keys(self, carrier: Mapping[str, Any]) -> list[str]:
        return list(carrier)


_PROPERTIES_GETTER = _PropertiesGetter()


def extract_outgoing(properties: Mapping[str, Any]) -> Context:
    """The creation context a message to be sent carries already (a custom one), or empty."""
    return propagate.extract(properties, getter=_PROPERTIES_GETTER)
