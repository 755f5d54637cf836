"""Telemetry from the standard OTEL_* variables: off by default, exporters named or implied
by an endpoint, settings this build cannot honour refused at start-up; content capture
asked for by its own variable, redacting secrets."""

from __future__ import annotations

import json

import pytest

from app.adapters.model.sdk import key_env_of
from app.config.models import ModelRouteConfig
from app.observability.captured_content import REDACTED, Capture
from app.observability.otel_setup import Telemetry, TelemetryConfigError, check_env


def test_telemetry_is_off_by_default() -> None:
    telemetry = Telemetry.from_env({})
    assert telemetry.tracer_provider is None and telemetry.meter_provider is None
    assert telemetry.capture.enabled is False


@pytest.mark.parametrize(
    ("environ", "traces", "metrics"),
    [
        ({"OTEL_TRACES_EXPORTER": "console"}, True, False),
        ({"OTEL_METRICS_EXPORTER": "console"}, False, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True, False),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "none"}, True, False),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, False, False),
        ({"OTEL_METRICS_EXPORTER": "prometheus"}, False, True),
        (
            {"OTEL_METRICS_EXPORTER": "console, prometheus", "OTEL_TRACES_EXPORTER": "none"},
            False,
            True,
        ),
    ],
)
def test_exporters_follow_the_standard_variables(
    environ: dict[str, str], traces: bool, metrics: bool
) -> None:
    telemetry = Telemetry.from_env(environ)
    try:
        assert (telemetry.tracer_provider is not None) is traces
        assert (telemetry.meter_provider is not None) is metrics
    finally:
        telemetry.shutdown()


@pytest.mark.parametrize(
    ("value", "scraped"), [("prometheus", True), ("console,prometheus", True), ("console", False)]
)
def test_metrics_are_scraped_only_when_prometheus_is_among_the_exporters(
    value: str, scraped: bool
) -> None:
    telemetry = Telemetry.from_env({"OTEL_METRICS_EXPORTER": value})
    try:
        assert (telemetry.scrape is not None) is scraped
    finally:
        telemetry.shutdown()


def test_the_service_name_defaults_to_toolgate_and_follows_otel_service_name() -> None:
    default = Telemetry.from_env({"OTEL_TRACES_EXPORTER": "console"})
    named = Telemetry.from_env({"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "tg-eu"})
    assert default.tracer_provider.resource.attributes["service.name"] == "toolgate"
    assert named.tracer_provider.resource.attributes["service.name"] == "tg-eu"


@pytest.mark.parametrize(
    ("environ", "names"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER"),
        ({"OTEL_METRICS_EXPORTER": "otlp,statsd"}, "OTEL_METRICS_EXPORTER"),
        ({"OTEL_TRACES_EXPORTER": "prometheus"}, "OTEL_TRACES_EXPORTER"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "http/protobuf"),
    ],
)
def test_settings_this_build_cannot_honour_are_refused_by_name(
    environ: dict[str, str], names: str
) -> None:
    with pytest.raises(TelemetryConfigError, match=names):
        check_env(environ)


@pytest.mark.parametrize(
    ("value", "enabled"),
    [("true", True), ("SPAN_ONLY", True), ("span_and_event", True), ("false", False), ("", False)],
)
def test_content_capture_is_asked_for_by_its_own_variable(value: str, enabled: bool) -> None:
    environ = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": value}
    assert Telemetry.from_env(environ).capture.enabled is enabled


def test_captured_content_redacts_secret_keys_secret_looking_text_and_configured_keys() -> None:
    capture = Capture.from_env(
        {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true", "ROUTE_KEY": "rk-12345678"},
        secret_envs=["ROUTE_KEY", "UNSET_KEY"],
    )
    value = {
        "query": "kafka",
        "api_key": "anything",
        "Authorization": "x",
        "nested": [{"password": "p"}, "call with Bearer abc.def.ghi-123 please"],
        "text": "key rk-12345678 and tg_" + "a" * 40 + " and sk-" + "b" * 24,
        "url": "https://user:pw@example.org/path",
        "count": 3,
    }
    assert json.loads(capture.text(value)) == {
        "query": "kafka",
        "api_key": REDACTED,
        "Authorization": REDACTED,
        "nested": [{"password": REDACTED}, f"call with {REDACTED} please"],
        "text": f"key {REDACTED} and {REDACTED} and {REDACTED}",
        "url": f"https://{REDACTED}@example.org/path",
        "count": 3,
    }


def test_a_routes_default_key_variable_is_redacted_too() -> None:
    """A route that names no `api_key_env` reads its provider's conventional variable: that
    key is redacted like a named one."""
    default = ModelRouteConfig.model_validate({"provider": "openai", "model": "m"})
    named = ModelRouteConfig.model_validate(
        {"provider": "anthropic", "model": "m", "api_key_env": "MY_KEY"}
    )
    scripted = ModelRouteConfig.model_validate({"provider": "scripted"})
    assert [key_env_of(r) for r in (default, named, scripted)] == [
        "OPENAI_API_KEY",
        "MY_KEY",
        None,
    ]


def test_captured_content_redacts_what_the_guardrails_redact() -> None:
    stripe = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    github_pat = "github_pat_" + "11ABCDEFG0" + "x" * 40
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\nabc==\n-----END RSA PRIVATE KEY-----"
    )
    text = Capture(enabled=True).text({"output": f"{stripe} {github_pat} {pem}"})
    assert stripe not in text and github_pat not in text and "MIIEowIBAAKCAQEA7x" not in text
    assert REDACTED in text


def test_without_a_provider_spans_cost_nothing_and_with_one_they_are_recorded() -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from app.observability import telemetry as spans

    off = spans.tracer()
    with off.start_as_current_span("chat m", attributes={"a": 1}) as span:
        assert not span.is_recording() and trace.get_current_span() is trace.INVALID_SPAN
        span.set_attributes({"b": 2})
    assert spans.context_of(span) is None
    # A caller's context (a traceparent taken in) still carries over, as with the API's
    # own no-op tracer.
    parent = trace.SpanContext(0x1234, 0x5678, is_remote=True, trace_flags=trace.TraceFlags(1))
    with (
        trace.use_span(trace.NonRecordingSpan(parent)),
        off.start_as_current_span("invoke_agent a", kind=trace.SpanKind.INTERNAL) as span,
    ):
        assert not span.is_recording()
    assert spans.context_of(span) == f"00-{0x1234:032x}-{0x5678:016x}-01"

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with spans.tracer(provider).start_as_current_span("chat m") as span:
        assert span.is_recording() and trace.get_current_span() is span
    assert [s.name for s in exporter.get_finished_spans()] == ["chat m"]
