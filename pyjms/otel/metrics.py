"""Messaging metrics by the OpenTelemetry semantic conventions (messaging metrics, 1.27 on).

* ``messaging.client.sent.messages`` (counter, ``{message}``): messages each send attempted,
  a send_batch's all of them, with ``error.type`` when the send failed;
* ``messaging.client.consumed.messages`` (counter, ``{message}``): messages handed to the
  application, by receive calls (``messaging.operation.name`` "receive") and to listeners
  ("process");
* ``messaging.client.operation.duration`` (histogram, seconds): each send (to its return, an
  async send's to its completion) and each receive call that returned messages, from its
  start;
* ``messaging.process.duration`` (histogram, seconds): each listener delivery.

Attributes: ``messaging.system`` ("jms"), ``messaging.operation.name`` and ``.type``,
``messaging.destination.name`` (not for a temporary destination, whose names are many),
``server.address`` and ``server.port`` where the URL names one broker, ``error.type`` on
failure. The buckets are those the conventions advise.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import MeterProvider
from opentelemetry.semconv._incubating.attributes import messaging_attributes as M
from opentelemetry.semconv.attributes import error_attributes

SENT_MESSAGES = "messaging.client.sent.messages"
CONSUMED_MESSAGES = "messaging.client.consumed.messages"
OPERATION_DURATION = "messaging.client.operation.duration"
PROCESS_DURATION = "messaging.process.duration"
#: the bucket boundaries the conventions advise for messaging durations, in seconds
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)


class MessagingMetrics:
    """The instruments of one meter."""

    def __init__(
        self, scope: str, version: str, schema_url: str, meter_provider: MeterProvider | None
    ) -> None:
        meter = metrics.get_meter(scope, version, meter_provider, schema_url=schema_url)
        self.sent = meter.create_counter(
            SENT_MESSAGES,
            unit="{message}",
            description="Number of messages producer attempted to send to the broker.",
        )
        self.consumed = meter.create_counter(
            CONSUMED_MESSAGES,
            unit="{message}",
            description="Number of messages that were delivered to the application.",
        )
        self.duration = meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="Duration of messaging operation initiated by a producer or consumer client.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        self.process_duration = meter.create_histogram(
            PROCESS_DURATION,
            unit="s",
            description="Duration of processing operation.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )

    def sent_messages(
        self, attributes: dict[str, Any], count: int, seconds: float, error: BaseException | None
    ) -> None:
        attrs = _metric_attributes(attributes, error)
        self.sent.add(count, attrs)
        self.duration.record(seconds, attrs)

    def received(self, attributes: dict[str, Any], count: int, seconds: float) -> None:
        attrs = _metric_attributes(attributes, None)
        self.consumed.add(count, attrs)
        self.duration.record(seconds, attrs)

    def processed(self, attributes: dict[str, Any], seconds: float, error: BaseException | None) -> None:
        attrs = _metric_attributes(attributes, error)
        self.consumed.add(1, attrs)
        self.process_duration.record(seconds, attrs)


#: the span attributes a metric keeps (the others, such as message ids, have too many values)
_KEPT = (
    M.MESSAGING_SYSTEM,
    M.MESSAGING_OPERATION_NAME,
    M.MESSAGING_OPERATION_TYPE,
    M.MESSAGING_DESTINATION_NAME,
    "server.address",
    "server.port",
)


def _metric_attributes(attributes: dict[str, Any], error: BaseException | None) -> dict[str, Any]:
    kept = {k: attributes[k] for k in _KEPT if k in attributes}
    if attributes.get(M.MESSAGING_DESTINATION_TEMPORARY):
        kept.pop(M.MESSAGING_DESTINATION_NAME, None)
    if error is not None:
        kept[error_attributes.ERROR_TYPE] = type(error).__qualname__
    return kept
