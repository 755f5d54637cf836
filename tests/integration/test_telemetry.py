"""Spans of a run (SPEC §8): segments, model calls and tool calls under the GenAI names,
segments linked across processes, and no content — arguments and results as hashes."""

from __future__ import annotations

import asyncio
import json

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.db.clock import DbTime
from tests.factories import final, run_body, seed_radar, tool_calls
from tests.fakes import FakeClock, ProbeTool, probe_spec
from tests.integration.test_leases import LEASE_S, crash


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
    await crash(a, run_id)
    assert await b.driver.poll_once() == 1
    assert (await b.driver.wait("acme", run_id, 10)).termination_reason == "final"
    [first] = [s for s in spans_a.get_finished_spans() if s.name.startswith("invoke_agent")]
    [second] = [s for s in spans_b.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert second.attributes["gen_ai.conversation.id"] == run_id
    assert [link.context.span_id for link in second.links] == [first.context.span_id]
