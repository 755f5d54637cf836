"""The OpenAI-compatible provider against a fake provider on loopback that speaks the real
wire format: tool calls (also parallel and malformed), final answers, usage and cost,
errors the executor retries or not, the run's deadline and a cancel cutting a call, and
the API key kept out of everything but the request's header."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAI, calls, failure, text
from tests.support.live_model import KEY_ENV, SECRET, events_of, live_harness, provider, start

__all__ = ["provider"]  # a fixture: used by name


async def test_a_tool_call_then_a_final_answer_with_usage_and_cost(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    provider.answer(
        calls(("call_1", "search_technologies", '{"query": "database", "ring": "adopt"}')),
        text("PostgreSQL is in adopt [source:s1]"),
    )
    run = await start(h)
    assert run["termination_reason"] == "final", run
    assert run["output"]["text"] == "PostgreSQL is in adopt [source:s1]"
    assert run["usage"]["input_tokens"] == 30 and run["usage"]["output_tokens"] == 13
    assert run["usage"]["cost_usd"] == pytest.approx((30 * 1.0 + 13 * 2.0) / 1_000_000)

    first, second = provider.requests
    assert first["model"] == "gpt-test" and first["parallel_tool_calls"] is True
    names = [t["function"]["name"] for t in first["tools"]]
    assert names == ["search_technologies", "get_technology"]
    assert first["messages"][0] == {
        "role": "system",
        "content": "Answer about the radar. Cite sources.",
    }
    assert provider.headers[0]["authorization"] == f"Bearer {SECRET}"
    assistant, observation = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_1"
    assert observation["role"] == "tool" and observation["tool_call_id"] == "call_1"
    assert json.loads(observation["content"])["source_id"] == "s1"
    turns = [e for e in await events_of(h, run["id"]) if e["type"] == "turn.completed"]
    assert turns[0]["data"]["input_tokens"] == 10


async def test_parallel_calls_run_and_malformed_arguments_are_fed_back(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    provider.answer(
        calls(
            ("a", "search_technologies", '{"query": "kafka"}'),
            ("b", "search_technologies", '{"query": "postgres"}'),
            ("c", "search_technologies", '{"query": '),  # cut-off JSON
        ),
        text("done [source:s1] [source:s2]"),
    )
    run = await start(h)
    assert run["termination_reason"] == "final"
    headers = await h.key()
    items = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=headers)).json()["items"]
    assert [(c["call_id"], c["status"]) for c in items] == [
        ("a", "succeeded"),
        ("b", "succeeded"),
        ("c", "rejected"),
    ]
    assert items[2]["error"]["code"] == "invalid_arguments"


async def test_a_rate_limit_is_waited_out_as_the_provider_says_then_retried(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    provider.answer(failure(429, "rate_limit_exceeded", retry_after="1"), text("fine"))
    started = time.monotonic()
    run = await start(h)
    assert run["termination_reason"] == "final"
    assert time.monotonic() - started >= 1.0  # Retry-After honoured
    failed = [e["data"] for e in await events_of(h, run["id"]) if e["type"] == "turn.failed"]
    assert [(f["code"], f["retryable"]) for f in failed] == [("rate_limited", True)]


async def test_server_errors_exhaust_the_routes_attempts(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider, max_attempts=2)
    provider.answer(failure(500, "server_error"), failure(503, "overloaded"), text("never"))
    run = await start(h)
    assert run["termination_reason"] == "model_failed"
    assert run["error"]["code"] == "unavailable" and len(provider.requests) == 2


@pytest.mark.parametrize(
    ("reply", "reason", "code"),
    [
        (
            failure(400, "context_length_exceeded", "too long"),
            "context_exhausted",
            "context_exhausted",
        ),
        (failure(401, "invalid_api_key"), "model_failed", "auth"),
        (text("cut", finish="length"), "model_failed", "truncated"),
        (text("", finish="content_filter"), "model_failed", "content_filtered"),
    ],
)
async def test_errors_no_retry_can_fix_end_the_run_with_a_safe_code(
    harness_factory, provider: FakeOpenAI, reply: Any, reason: str, code: str
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    provider.answer(reply, text("never"))
    run = await start(h)
    assert (run["termination_reason"], run["error"]["code"]) == (reason, code)
    assert len(provider.requests) == 1
    assert "8192" not in json.dumps(run)  # the provider's text is not passed on


async def test_the_runs_deadline_cuts_a_slow_model_and_a_cancel_stops_one(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    slow = text("late")
    slow.delay_s = 10
    provider.answer(slow)
    started = time.monotonic()
    run = await start(h, limits={"deadline_s": 1})
    assert run["termination_reason"] == "deadline" and time.monotonic() - started < 5

    slower = text("late")
    slower.delay_s = 20
    provider.answer(slower)
    run = await start(h, wait_s=0.3)
    assert run["status"] == "running"
    headers = await h.key()
    started = time.monotonic()
    cancelled = await h.client.post(f"/v1/runs/{run['id']}/cancel", headers=headers)
    assert cancelled.json()["termination_reason"] == "cancelled"
    assert time.monotonic() - started < 5


async def test_the_api_key_appears_in_no_log_event_or_answer(
    harness_factory, provider: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    h = await live_harness(harness_factory, provider)
    provider.answer(failure(401, "invalid_api_key", f"Incorrect API key provided: {SECRET}"))
    run = await start(h)
    assert run["error"]["code"] == "auth"
    everything = json.dumps([run, await events_of(h, run["id"])]) + caplog.text
    assert SECRET not in everything and SECRET[:12] not in everything


async def test_a_route_whose_key_is_not_set_fails_clearly(
    harness_factory, provider: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(KEY_ENV)
    h = await live_harness(harness_factory, provider)
    run = await start(h)
    assert run["termination_reason"] == "model_failed" and run["error"]["code"] == "auth"
    assert KEY_ENV in run["error"]["message"] and provider.requests == []


async def test_scripts_go_only_to_scripted_routes_and_scripted_routes_need_one(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    headers = await h.key()
    body = {"agent": "live", "input": "q", "script": [{"type": "final", "text": "x"}]}
    refused = await h.client.post("/v1/runs", headers=headers, json=body)
    assert refused.status_code == 422 and refused.json()["errors"][0]["path"] == "script"
    scripted = await harness_factory()
    headers = await scripted.key()
    missing = await scripted.client.post(
        "/v1/runs", headers=headers, json={"agent": "tech-radar", "input": "q"}
    )
    assert missing.status_code == 422 and missing.json()["errors"][0]["path"] == "script"
    await asyncio.sleep(0)


@pytest.mark.parametrize(
    ("limits", "which"),
    [({"max_tokens": 50}, "token budget"), ({"max_cost_usd": 0.0000001}, "cost budget")],
)
async def test_a_call_that_would_certainly_exceed_a_budget_is_not_made(
    harness_factory, provider: FakeOpenAI, limits: dict[str, Any], which: str
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    provider.answer(text("never asked"))
    run = await start(h, limits=limits)
    assert run["termination_reason"] == "budget" and which in run["error"]["message"]
    assert provider.requests == [] and run["usage"]["input_tokens"] == 0
