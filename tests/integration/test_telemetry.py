"""Spans of a run (SPEC §8): segments, model calls and tool calls under the GenAI names,
segments linked across processes, and no content — arguments and results as hashes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.db.clock import DbTime
from app.observability.captured_content import Capture
from app.observability.otel_setup import SafeSpanExporter, Telemetry
from tests.support.backend import ok, serving
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fakes import FakeClock, ProbeTool, probe_spec
from tests.support.harness import DEFAULT_AGENT, make_config
from tests.support.leases import LEASE_S, crash, turns_written
from tests.support.waiting import until


def traced() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


async def test_a_run_is_one_agent_span_with_its_model_and_tool_calls(harness_factory) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = traced()
    h = await harness_factory(tracer_provider=provider)
    await seed_radar(h)
    headers = await h.key()
    secret = "a-very-private-query"
    body = run_body(
        tool_calls(("c1", "search_technologies", {"query": secret}), usage=(11, 3)),
        final("none [source:s1]", usage=(20, 5)),
    )
    run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    assert run["termination_reason"] == "final"
    spans = {s.name: s for s in exporter.get_finished_spans()}
    agent = spans["invoke_agent tech-radar"]
    assert agent.attributes["gen_ai.conversation.id"] == run["id"]
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["toolgate.termination_reason"] == "final"
    chats = [s for s in exporter.get_finished_spans() if s.name == "chat scripted"]
    assert [c.attributes["gen_ai.usage.input_tokens"] for c in chats] == [11, 20]
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats] == [
        ("tool_calls",),
        ("stop",),
    ]
    tool = spans["execute_tool search_technologies"]
    assert tool.attributes["gen_ai.tool.call.id"] == "c1"
    assert tool.attributes["toolgate.arguments.hash"].startswith("sha256:")
    assert tool.attributes["toolgate.result.size"] > 0
    for span in exporter.get_finished_spans():
        assert span.context.trace_id == agent.context.trace_id
        assert secret not in json.dumps(dict(span.attributes), default=str)


async def test_a_run_taken_over_by_another_process_links_its_new_segment_to_the_old(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    provider_a, spans_a = traced()
    provider_b, spans_b = traced()
    stuck = ProbeTool(probe_spec(), gate=asyncio.Event())
    a = await harness_factory(
        run_driver=False, clock_=FakeClock(), probe=stuck, tracer_provider=provider_a
    )
    b = await harness_factory(
        run_driver=False,
        probe=ProbeTool(probe_spec()),
        db_time=DbTime(LEASE_S + 1),
        tracer_provider=provider_b,
    )
    headers = await a.key()
    body = run_body(tool_calls(("c1", "probe", {"q": "x"})), final("done [source:s1]"), wait_s=0)
    run_id = (await a.client.post("/v1/runs", headers=headers, json=body)).json()["id"]
    await asyncio.wait_for(stuck.started.wait(), 10)
    # The link is written by the segment's first write: here its turn, held back for its
    # read until the hold is over (a segment that wrote nothing leaves nothing to link).
    await turns_written(a, run_id, 1)
    await crash(a, run_id)
    assert await b.driver.poll_once() == 1
    assert (await b.driver.wait("acme", run_id, 10)).termination_reason == "final"
    [first] = [s for s in spans_a.get_finished_spans() if s.name.startswith("invoke_agent")]
    [second] = [s for s in spans_b.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert second.attributes["gen_ai.conversation.id"] == run_id
    assert [link.context.span_id for link in second.links] == [first.context.span_id]
    # The first segment began as the run was created; the second after the lease lapsed.
    assert first.attributes["toolgate.queue_wait_s"] == 0.0
    assert second.attributes["toolgate.queue_wait_s"] >= 0.5


def metric_points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    """Data points by metric name, from everything the reader collected."""
    points: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points.setdefault(metric.name, []).extend(metric.data.data_points)
    return points


async def test_metrics_count_tokens_durations_runs_and_calls_with_low_cardinality_labels(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    reader = InMemoryMetricReader()
    h = await harness_factory(telemetry=Telemetry.recording(metrics=reader))
    await seed_radar(h)
    headers = await h.key()
    body = run_body(
        tool_calls(
            ("c1", "search_technologies", {"query": "kafka"}),
            ("c2", "no_such_tool", {}),
            usage=(11, 3),
        ),
        final("none [source:s1]", usage=(20, 5)),
    )
    run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    assert run["termination_reason"] == "final"

    points = metric_points(reader)
    [finished] = points["toolgate.runs.finished"]
    assert finished.value == 1
    assert dict(finished.attributes) == {
        "toolgate.termination_reason": "final",
        "gen_ai.agent.name": "tech-radar",
    }
    calls = {
        (p.attributes["gen_ai.tool.name"], p.attributes["toolgate.call.status"]): p
        for p in points["toolgate.tool.calls"]
    }
    assert calls[("search_technologies", "succeeded")].value == 1
    assert calls[("no_such_tool", "rejected")].value == 1
    assert calls[("no_such_tool", "rejected")].attributes["error.type"] == "unknown_tool"
    tokens = {p.attributes["gen_ai.token.type"]: p for p in points["gen_ai.client.token.usage"]}
    assert (tokens["input"].sum, tokens["input"].count) == (31, 2)
    assert (tokens["output"].sum, tokens["output"].count) == (8, 2)
    assert tokens["input"].explicit_bounds[:3] == (1, 4, 16)
    [duration] = points["gen_ai.client.operation.duration"]
    assert duration.count == 2 and duration.attributes["gen_ai.provider.name"] == "scripted"
    labels = json.dumps([dict(p.attributes) for ps in points.values() for p in ps])
    assert run["id"] not in labels and "acme" not in labels


async def test_content_is_recorded_only_when_asked_and_secrets_are_redacted_even_then(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    exporter = InMemorySpanExporter()
    capture = Capture(enabled=True, known_secrets=("route-key-123456",))
    h = await harness_factory(
        telemetry=Telemetry.recording(spans=exporter, capture=capture, instrument=False)
    )
    await seed_radar(h)
    headers = await h.key()
    body = run_body(
        tool_calls(("c1", "search_technologies", {"query": "kafka tg_" + "x" * 30})),
        final("done route-key-123456 Bearer abcdefghijkl [source:s1]"),
        input="what about kafka?",
    )
    run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    assert run["termination_reason"] == "final"
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name.startswith("chat")]
    assert "what about kafka?" in chats[0].attributes["gen_ai.input.messages"]
    said = chats[1].attributes["gen_ai.output.messages"]
    assert "done [REDACTED] [REDACTED]" in said and "route-key" not in said
    [tool] = [s for s in spans if s.name.startswith("execute_tool")]
    arguments = json.loads(tool.attributes["gen_ai.tool.call.arguments"])
    assert arguments == {"query": "kafka [REDACTED]"}
    assert json.loads(tool.attributes["gen_ai.tool.call.result"])  # the checked output
    for span in spans:
        assert "abcdefghijkl" not in json.dumps(dict(span.attributes), default=str)


async def test_instrumented_http_database_and_tool_spans_carry_no_sql_or_query_strings(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    exporter = InMemorySpanExporter()
    async with serving() as backend:
        backend.answer("lookup", ok({"found": "yes"}))
        tool = {
            "kind": "http",
            "description": "Looks things up.",
            "input_schema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"q": {"type": "string"}},
            },
            "url": backend.tool_url("lookup") + "?token=very-secret-token",
            "timeout_s": 2,
        }
        agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "lookup"]}
        h = await harness_factory(
            config=make_config({"tech-radar": agent}, tools={"lookup": tool}),
            telemetry=Telemetry.recording(spans=exporter),
        )
        headers = await h.key()
        body = run_body(tool_calls(("c1", "lookup", {"q": "x"})), final("done [source:s1]"))
        run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
        assert run["termination_reason"] == "final"
    spans = exporter.get_finished_spans()
    [server] = [s for s in spans if s.name == "POST /v1/runs"]
    [agent_span] = [s for s in spans if s.name.startswith("invoke_agent")]
    assert agent_span.context.trace_id == server.context.trace_id  # one request, one trace
    [tool_span] = [s for s in spans if s.name == "execute_tool lookup"]
    [client] = [s for s in spans if s.kind.name == "CLIENT" and s.name == "POST"]
    assert client.parent.span_id == tool_span.context.span_id  # the call's request, under it
    assert client.attributes["http.status_code"] == 200
    queries = [s for s in spans if s.attributes.get("db.system") == "postgresql"]
    assert queries, "the database calls are traced"
    everything = json.dumps([dict(s.attributes) for s in spans], default=str)
    assert "very-secret-token" not in everything
    assert not [s for s in spans if {"db.statement", "db.query.text"} & set(s.attributes)]
    assert " FROM " not in everything and "INSERT INTO" not in everything


def test_the_safe_exporter_drops_exception_text_sql_and_url_queries() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(SafeSpanExporter(exporter)))
    tracer = provider.get_tracer("test")
    with contextlib.suppress(RuntimeError), tracer.start_as_current_span("failing") as span:
        span.set_attributes(
            {"db.statement": "SELECT 1", "url.full": "http://h/p?key=s3cret", "kept": 1}
        )
        raise RuntimeError("password=s3cret in SELECT * FROM api_key")
    [span] = exporter.get_finished_spans()
    assert dict(span.attributes) == {"url.full": "http://h/p", "kept": 1}
    [event] = span.events
    assert dict(event.attributes) == {
        "exception.type": "RuntimeError",
        "exception.escaped": "False",
    }
    assert span.status.status_code.name == "ERROR" and not span.status.description


async def test_an_approved_calls_span_says_how_long_it_waited_for_its_approval(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = traced()
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "move_technology_ring"]}
    clock = FakeClock()
    h = await harness_factory(
        config=make_config({"tech-radar": agent}), tracer_provider=provider, clock_=clock
    )
    await seed_radar(h)
    caller = await h.key(subject="svc-shop", roles="caller")
    approver = await h.key(subject="alice", roles="approver")
    found = await h.client.post(
        "/v1/runs",
        headers=caller,
        json=run_body(tool_calls(("c1", "search_technologies", {"query": "kafka"})), final("x")),
    )
    calls = await h.client.get(f"/v1/runs/{found.json()['id']}/calls", headers=caller)
    kafka = calls.json()["items"][0]["output"]["items"][0]["id"]
    move = {"technology_id": kafka, "ring": "adopt", "rationale": "proven"}
    run = await h.client.post(
        "/v1/runs",
        headers=caller,
        json=run_body(tool_calls(("m1", "move_technology_ring", move)), final("done")),
    )
    preview_id = run.json()["pending_approvals"][0]["preview_id"]
    preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    body = {"content_hash": preview["content_hash"]}
    await h.client.post(f"/v1/previews/{preview_id}/approve", headers=approver, json=body)
    clock.advance(42)  # the approver took their time
    committed = await h.client.post(
        f"/v1/previews/{preview_id}/commit", headers={**approver, "Idempotency-Key": "c1"}
    )
    assert committed.status_code == 200, committed.text
    [span] = [
        s for s in exporter.get_finished_spans() if s.name == "execute_tool move_technology_ring"
    ]
    assert 42 <= span.attributes["toolgate.approval_wait_s"] < 60


async def test_an_idle_process_exports_no_database_spans_unless_asked_while_requests_do(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    def database_spans(exporter: InMemorySpanExporter) -> list[Any]:
        spans = exporter.get_finished_spans()
        return [s for s in spans if s.attributes.get("db.system") == "postgresql"]

    quiet, asked = InMemorySpanExporter(), InMemorySpanExporter()
    polling = {"driver_poll_s": 0.05}
    h = await harness_factory(telemetry=Telemetry.recording(spans=quiet), settings_override=polling)
    await harness_factory(
        telemetry=Telemetry.recording(spans=asked),
        settings_override={**polling, "trace_background": True},
    )
    # Polls of both drivers, traced when asked; the same polls of the other, not.
    await until(lambda: len(database_spans(asked)) >= 5, what="traced polls")
    assert database_spans(quiet) == []

    headers = await h.key()
    quiet.clear()  # the key was written by the test itself, outside any request
    listed = await h.client.get("/v1/runs", headers=headers)
    assert listed.status_code == 200
    [server] = [s for s in quiet.get_finished_spans() if s.name == "GET /v1/runs"]
    queries = database_spans(quiet)
    assert queries and all(q.context.trace_id == server.context.trace_id for q in queries)
