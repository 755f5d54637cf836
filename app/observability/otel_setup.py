"""Where telemetry goes: OpenTelemetry set up from the standard `OTEL_*` variables, off by
default, and the FastAPI, httpx and SQLAlchemy instrumentation.

Off unless asked for: `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` = `otlp` or
`console`, or for metrics also `prometheus` (a comma-separated list names several; an
`OTEL_EXPORTER_OTLP_*ENDPOINT` without one means `otlp`), and never when
`OTEL_SDK_DISABLED=true`. `prometheus` is served by the app itself at `/metrics`
(`Telemetry.scrape`), not on a port of its own: one process, one scrape target. The OTLP
exporter speaks http/protobuf and reads its endpoint, headers and timeouts from the
standard variables itself; the SDK reads the sampler, batch and attribute limits
(`OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, `OTEL_ATTRIBUTE_*`) and the resource
(`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`). The exporter packages are imported
only when telemetry is on.

Whatever the instrumentation records passes through `SafeSpanExporter` on its way out:
SQL text, exception messages and stack traces, and URL query strings are dropped there,
so no library can put them into an operator's trace backend by accident.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.trace import Status

from app.domain.errors import ToolgateError
from app.observability.captured_content import Capture

log = logging.getLogger(__name__)

#: Attributes dropped from every exported span: SQL text (the SQLAlchemy instrumentation
#: records it) and what an exception carries besides its type.
_DROPPED = frozenset({"db.statement", "db.query.text", "exception.message", "exception.stacktrace"})
_URLS = frozenset({"url.full", "http.url"})


class TelemetryConfigError(ToolgateError, ValueError):
    """An `OTEL_*` setting this build cannot honour (said at start-up, not later)."""


@dataclass
class Telemetry:
    """What `create_app` records with. Empty (the default) records nothing."""

    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    capture: Capture = field(default_factory=Capture)
    #: Also instrument FastAPI, httpx and SQLAlchemy (off in tests that count spans).
    instrument: bool = True
    #: What `/metrics` serves (a prometheus_client registry) when the metrics exporters
    #: include `prometheus`; None: no `/metrics`.
    scrape: Any = None

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, secret_envs: Sequence[str] = ()
    ) -> Telemetry:
        environ = os.environ if environ is None else environ
        capture = Capture.from_env(environ, secret_envs)
        if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return cls(capture=capture)
        traces = _exporter_names(environ, "TRACES")
        metrics = _exporter_names(environ, "METRICS")
        resource = _resource(environ)
        tracer_provider = meter_provider = scrape = None
        if traces:
            tracer_provider = TracerProvider(resource=resource)
            for name in traces:
                exporter = SafeSpanExporter(_span_exporter(name))
                tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        if metrics:
            readers: list[MetricReader] = []
            for name in metrics:
                if name == "prometheus":
                    scrape, reader = _prometheus_reader()
                    readers.append(reader)
                else:
                    readers.append(PeriodicExportingMetricReader(_metric_exporter(name)))
            meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        if tracer_provider or meter_provider:
            log.info(
                "telemetry on: traces to %s, metrics to %s",
                ", ".join(traces) or "none",
                ", ".join(metrics) or "none",
            )
        return cls(tracer_provider, meter_provider, capture, scrape=scrape)

    @classmethod
    def recording(
        cls,
        *,
        spans: SpanExporter | None = None,
        metrics: MetricReader | None = None,
        capture: Capture | None = None,
        instrument: bool = True,
    ) -> Telemetry:
        """Telemetry into the given exporter and reader (tests, or an embedding program),
        through the same `SafeSpanExporter` as in production. Spans are exported as each
        ends."""
        tracer_provider = None
        if spans is not None:
            tracer_provider = TracerProvider()
            tracer_provider.add_span_processor(SimpleSpanProcessor(SafeSpanExporter(spans)))
        meter_provider = MeterProvider(metric_readers=[metrics]) if metrics else None
        return cls(tracer_provider, meter_provider, capture or Capture(), instrument)

    def instrument_app(self, app: Any) -> None:
        if self.tracer_provider is None or not self.instrument:
            return
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        FastAPIInstrumentor.instrument_app(
            app,
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            excluded_urls="health,ready,metrics",  # probes and scrapes: no spans
            exclude_spans=["receive", "send"],
        )

    def instrument_client(self, client: Any) -> None:
        if self.tracer_provider is None or not self.instrument:
            return
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

        HTTPXClientInstrumentor.instrument_client(
            client, tracer_provider=self.tracer_provider, meter_provider=self.meter_provider
        )

    @property
    def traces_statements(self) -> bool:
        """Whether the engine's statements are traced (`instrument_engine`)."""
        return self.tracer_provider is not None and self.instrument

    def instrument_engine(self, engine: Any) -> None:
        """Per engine, not the library-wide instrumentor: two apps in one process (tests)
        each trace their own engine into their own provider."""
        if not self.traces_statements:
            return
        from opentelemetry import metrics
        from opentelemetry.instrumentation.sqlalchemy import EngineTracer
        from opentelemetry.instrumentation.sqlalchemy.version import __version__

        scope = "opentelemetry.instrumentation.sqlalchemy"
        tracer = self.tracer_provider.get_tracer(scope, __version__)
        meter = (self.meter_provider or metrics.get_meter_provider()).get_meter(scope)
        usage = meter.create_up_down_counter(
            "db.client.connections.usage", unit="connections", description="Pool connections"
        )
        EngineTracer(tracer, engine.sync_engine, usage, enable_commenter=False)

    def shutdown(self) -> None:
        """Flushes what is buffered; called when the app stops."""
        for provider in (self.tracer_provider, self.meter_provider):
            if provider is not None:
                try:
                    provider.shutdown()
                except Exception:  # telemetry never fails a shutdown
                    log.warning("telemetry did not flush on shutdown")


def check_env(environ: Mapping[str, str] | None = None) -> None:
    """Raises TelemetryConfigError for an `OTEL_*` exporter setting this build cannot use."""
    environ = os.environ if environ is None else environ
    for signal in _EXPORTERS:
        _exporter_names(environ, signal)


def check_workers(workers: int, environ: Mapping[str, str] | None = None) -> None:
    """Raises TelemetryConfigError when `prometheus` would be scraped from one of several
    worker processes behind one port: each keeps its own counts, and a scraper would see
    them jump from one worker's to another's."""
    environ = os.environ if environ is None else environ
    if workers > 1 and "prometheus" in _exporter_names(environ, "METRICS"):
        raise TelemetryConfigError(
            f"OTEL_METRICS_EXPORTER=prometheus with --workers {workers}: each worker counts "
            "on its own and a scrape reaches one of them; run one worker per process "
            "(more processes or replicas, each scraped), or export metrics with otlp"
        )


#: The exporters this build has, per signal.
_EXPORTERS = {"TRACES": ("otlp", "console"), "METRICS": ("otlp", "console", "prometheus")}


def _exporter_names(environ: Mapping[str, str], signal: str) -> list[str]:
    """The exporters asked for (none: an empty list)."""
    value = environ.get(f"OTEL_{signal}_EXPORTER", "").strip().lower()
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        endpoint = environ.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT") or environ.get(
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        names = ["otlp"] if endpoint else []
    known = _EXPORTERS[signal]
    for name in names:
        if name not in (*known, "none"):
            raise TelemetryConfigError(
                f"OTEL_{signal}_EXPORTER={name!r} is not supported: use {', '.join(known)} or none"
            )
    if "otlp" in names:
        protocol = environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or environ.get(
            "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
        )
        if protocol.strip().lower() != "http/protobuf":
            raise TelemetryConfigError(
                f"OTLP protocol {protocol!r} is not supported: use http/protobuf"
            )
    return [name for name in dict.fromkeys(names) if name != "none"]


def _resource(environ: Mapping[str, str]) -> Resource:
    # OTEL_RESOURCE_ATTRIBUTES is read by the SDK itself; a service.name there stands.
    named = "service.name=" in environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    name = environ.get("OTEL_SERVICE_NAME") or (None if named else "toolgate")
    return Resource.create({"service.name": name} if name else {})


def _span_exporter(name: str) -> SpanExporter:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _prometheus_reader() -> tuple[Any, MetricReader]:
    """A registry of this process's own (not prometheus_client's global one, which would
    mix the metrics of two apps in one process) and the reader that fills it per scrape."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    return registry, PrometheusMetricReader(registry=registry)


def _metric_exporter(name: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter()
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


class SafeSpanExporter(SpanExporter):
    """Passes spans on without SQL text, exception messages or stack traces, or URL query
    strings: instrumentation libraries record them, and they can hold data and secrets."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([_cleaned(s) for s in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def _clean(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    cleaned = {}
    for key, value in (attributes or {}).items():
        if key in _DROPPED:
            continue
        if key in _URLS and isinstance(value, str):
            value = urlunsplit(urlsplit(value)._replace(query="", fragment=""))
        cleaned[key] = value
    return cleaned


def _cleaned(span: ReadableSpan) -> ReadableSpan:
    status = span.status
    if status.description:  # set from an exception's text: keep the code only
        status = Status(status.status_code)
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=_clean(span.attributes),
        events=[Event(e.name, _clean(e.attributes), e.timestamp) for e in span.events],
        links=span.links,
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )
