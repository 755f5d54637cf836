"""The Anthropic provider against a fake provider on loopback that speaks the Messages wire
format: tool_use and tool_result blocks, parallel calls, final answers, usage and cost,
errors the executor retries or not, the deadline and a cancel cutting a call, and the API
key kept out of everything but the request's header."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from tests.support.factories import seed_radar
from tests.support.fake_openai import FakeOpenAI, fake_openai, refusal, says, uses
from tests.support.harness import DEFAULT_AGENT, Harness

KEY_ENV = "TG_TEST_ANTHROPIC_KEY"
SECRET = "sk-ant-test-0123456789SECRET"
INSTRUCTIONS = "Answer about the radar. Cite sources."


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenAI]:
    monkeypatch.setenv(KEY_ENV, SECRET)
    async with fake_openai() as fake:
        yield fake


async def claude_harness(harness_factory, fake: FakeOpenAI, **route: Any) -> Harness:  # type: ignore[no-untyped-def]
    claude = {
        "provider": "anthropic",
        "model": "claude-test",
        "base_url": fake.url,
        "api_key_env": KEY_ENV,
        "input_cost_per_mtok": 3.0,
        "output_cost_per_mtok": 15.0,
        "timeout_s": 5,
        **route,
    }
    agent = {
        "model": "claude",
        "instructions": INSTRUCTIONS,
        "tools": ["search_technologies", "get_technology"],
        "limits": {"max_steps": 6, "deadline_s": 60},
    }
    data = {
        "models": {"scripted": {"provider": "scripted"}, "claude": claude},
        "agents": {"claude": agent, "tech-radar": DEFAULT_AGENT},
    }
    h = await harness_factory(config=parse_config(data, builtin_tools=SPECS))
    await seed_radar(h)
    return h


async def start(h: Harness, **fields: Any) -> dict[str, Any]:
    headers = await h.key()
    body = {"agent": "claude", "input": "Which databases are in adopt?", "wait_s": 10, **fields}
    response = await h.client.post("/v1/runs", headers=headers, json=body)
    assert response.status_code == 201, response.text
    return response.json()


async def test_tool_use_blocks_then_a_final_answer_with_usage_and_cost(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await claude_harness(harness_factory, provider)
    provider.answer(
        uses(
            ("toolu_1", "search_technologies", {"query": "database"}),
            ("toolu_2", "search_technologies", {"query": "kafka"}),
        ),
        says("PostgreSQL [source:s1]"),
    )
    run = await start(h)
    assert run["termination_reason"] == "final", run
    assert run["usage"]["input_tokens"] == 30 and run["usage"]["output_tokens"] == 13
    assert run["usage"]["cost_usd"] == pytest.approx((30 * 3.0 + 13 * 15.0) / 1_000_000)
    first, second = provider.requests
    assert (
        first["system"] == INSTRUCTIONS and first["max_tokens"] == 4096
    )  # the route's own limit: the budgets leave more
    assert [t["name"] for t in first["tools"]] == ["search_technologies", "get_technology"]
    assert provider.headers[0]["x-api-key"] == SECRET
    assistant, results = second["messages"][-2:]
    assert [b["id"] for b in assistant["content"]] == ["toolu_1", "toolu_2"]
    assert results["role"] == "user"
    assert [b["tool_use_id"] for b in results["content"]] == ["toolu_1", "toolu_2"]
    assert json.loads(results["content"][0]["content"])["source_id"] == "s1"


@pytest.mark.parametrize(
    ("replies", "reason", "code", "asked"),
    [
        ([refusal(529, "overloaded_error"), says("fine")], "final", None, 2),
        ([refusal(500, "api_error")] * 3, "model_failed", "unavailable", 3),
        (
            [refusal(400, "invalid_request_error", "prompt is too long: 9 tokens")],
            *["context_exhausted"] * 2,
            1,
        ),
        ([refusal(401, "authentication_error")], "model_failed", "auth", 1),
        ([says("cut", stop="max_tokens")], "model_failed", "truncated", 1),
    ],
)
async def test_errors_are_retried_or_end_the_run_with_a_safe_code(
    harness_factory, provider: FakeOpenAI, replies: list[Any], reason: str, code: Any, asked: int
) -> None:  # type: ignore[no-untyped-def]
    h = await claude_harness(harness_factory, provider)
    provider.answer(*replies)
    run = await start(h)
    assert run["termination_reason"] == reason
    assert (run["error"] or {}).get("code") == code
    assert len(provider.requests) == asked


async def test_a_rate_limit_waits_for_retry_after_and_a_cancel_cuts_a_call(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await claude_harness(harness_factory, provider)
    provider.answer(refusal(429, "rate_limit_error", retry_after="1"), says("ok"))
    started = time.monotonic()
    run = await start(h)
    assert run["termination_reason"] == "final" and time.monotonic() - started >= 1.0

    slow = says("late")
    slow.delay_s = 20
    provider.answer(slow)
    run = await start(h, wait_s=0.3)
    headers = await h.key()
    started = time.monotonic()
    cancelled = await h.client.post(f"/v1/runs/{run['id']}/cancel", headers=headers)
    assert cancelled.json()["termination_reason"] == "cancelled"
    assert time.monotonic() - started < 5


async def test_the_api_key_stays_out_of_logs_and_events(
    harness_factory, provider: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    h = await claude_harness(harness_factory, provider)
    provider.answer(refusal(401, "authentication_error", f"invalid x-api-key {SECRET}"))
    run = await start(h)
    headers = await h.key()
    events = (await h.client.get(f"/v1/runs/{run['id']}/events", headers=headers)).json()
    assert SECRET not in json.dumps([run, events]) + caplog.text


async def test_the_deadline_cuts_a_slow_call_and_bad_input_is_fed_back(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await claude_harness(harness_factory, provider)
    slow = says("late")
    slow.delay_s = 10
    provider.answer(slow)
    started = time.monotonic()
    run = await start(h, limits={"deadline_s": 1})
    assert run["termination_reason"] == "deadline" and time.monotonic() - started < 5

    provider.answer(uses(("toolu_9", "search_technologies", {"query": 5})), says("sorry"))
    run = await start(h)
    assert run["termination_reason"] == "final"
    headers = await h.key()
    [call] = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=headers)).json()["items"]
    assert call["status"] == "rejected" and call["error"]["code"] == "invalid_arguments"
    results = provider.requests[-1]["messages"][-1]["content"]
    assert results[0]["tool_use_id"] == "toolu_9" and "invalid_arguments" in results[0]["content"]
