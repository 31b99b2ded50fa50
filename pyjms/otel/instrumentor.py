"""pyjms's OpenTelemetry instrumentor, for ``opentelemetry-instrument``.

Registered under the ``opentelemetry_instrumentor`` entry point (pyproject.toml), so that
``opentelemetry-instrument python app.py`` (from opentelemetry-instrumentation, with the SDK
configured by opentelemetry-distro or your own configurator) switches pyjms's spans and
metrics on, as :func:`pyjms.otel.instrument` does; ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=pyjms``
leaves them off. By hand: ``PyjmsInstrumentor().instrument(tracer_provider=...,
meter_provider=...)``. Needs opentelemetry-instrumentation (the ``otel`` extra has it).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined,unused-ignore]

from pyjms.otel import instrument, uninstrument


class PyjmsInstrumentor(BaseInstrumentor):  # type: ignore[misc,unused-ignore]  # Any where not installed
    """Instruments pyjms: producer sends, receives and listeners (pyjms.otel)."""

    def instrumentation_dependencies(self) -> Collection[str]:
        return ()  # pyjms instruments itself: nothing else must be installed

    def _instrument(self, **kwargs: Any) -> None:
        instrument(tracer_provider=kwargs.get("tracer_provider"), meter_provider=kwargs.get("meter_provider"))

    def _uninstrument(self, **kwargs: Any) -> None:
        uninstrument()
