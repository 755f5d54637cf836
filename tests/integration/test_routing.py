"""Routing (SPEC §4): a deterministic policy narrows a router's candidates (data-policy
tags, capabilities), a chooser picks among the rest (rules on the input, or a classifier
route), a pick outside the allowed set or a failing chooser falls back to the default, and
a route that runs out of attempts hands over to the fallback within the same budget. The
chosen route and the reason are on each turn's events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from tests.support.fake_openai import FakeOpenAI, failure, fake_openai, text
from tests.support.harness import DEFAULT_AGENT, Harness
from tests.support.statements import Statements, counting

KEY_ENV = "TG_TEST_ROUTER_KEY"


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenAI]:
    monkeypatch.setenv(KEY_ENV, "sk-router-test-key-0000000000")
    async with fake_openai() as fake:
        yield fake


def route(fake: FakeOpenAI, model: str, **fields: Any) -> dict[str, Any]:
    return {
        "provider": "openai",
        "model": model,
        "base_url": f"{fake.url}/v1",
        "api_key_env": KEY_ENV,
        "timeout_s": 5,
        "max_attempts": 2,
        **fields,
    }


async def router_harness(harness_factory, fake: FakeOpenAI, **options: Any) -> Harness:  # type: ignore[no-untyped-def]
    models = {
        "scripted": {"provider": "scripted"},
        "small": route(
            fake, "small-m", tags=["external", "eu"], capabilities=["tools"], max_attempts=1
        ),  # fmt: skip
        "big": route(
            fake, "big-m", tags=["external"], capabilities=["tools"], input_cost_per_mtok=1000
        ),
        "plain": route(fake, "plain-m", tags=["external", "eu"], capabilities=["text"]),
        "picker": route(
            fake, "picker-m", input_cost_per_mtok=100, output_cost_per_mtok=200
        ),  # fmt: skip
        "auto": {
            "provider": "router",
            "candidates": ["small", "big", "plain"],
            "default": "small",
            "fallback": "big",
            "chooser": {
                "kind": "rules",
                "rules": [
                    {"if_input_matches": "(?i)contract", "use": "big"},
                    {"if_input_matches": "(?i)poem", "use": "plain"},
                ],
            },
        },
        "smart": {
            "provider": "router",
            "candidates": ["small", "big"],
            "default": "small",
            "chooser": {"kind": "model", "route": "picker"},
        },
    }
    agent = {"instructions": "Help.", "tools": ["search_technologies"]}
    data = {
        "models": models,
        "agents": {
            "ruled": {**agent, "model": "auto"},
            "classified": {**agent, "model": "smart"},
            "tech-radar": DEFAULT_AGENT,
        },
    }
    return await harness_factory(config=parse_config(data, builtin_tools=SPECS), **options)


def writes(seen: Statements) -> list[str]:
    """The statements that write (a step's write is one `WITH … UPDATE run …`)."""
    return [s for s in seen.all if s.lstrip().startswith(("WITH", "INSERT", "UPDATE"))]


async def run_of(h: Harness, agent: str, text_in: str, **fields: Any) -> dict[str, Any]:
    headers = await h.key()
    body = {"agent": agent, "input": text_in, "wait_s": 10, **fields}
    response = await h.client.post("/v1/runs", headers=headers, json=body)
    assert response.status_code == 201, response.text
    return response.json()


async def turns_of(h: Harness, run_id: str) -> list[dict[str, Any]]:
    headers = await h.key()
    events = (await h.client.get(f"/v1/runs/{run_id}/events", headers=headers)).json()["items"]
    return [e["data"] for e in events if e["type"] in ("turn.completed", "turn.failed")]


async def test_rules_pick_a_route_and_anything_else_goes_to_the_default(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await router_harness(harness_factory, provider)
    provider.answer(text("reviewed"), text("hi"))
    contract = await run_of(h, "ruled", "Please review this contract")
    other = await run_of(h, "ruled", "hello")
    assert [r["model"] for r in provider.requests] == ["big-m", "small-m"]
    [first] = await turns_of(h, contract["id"])
    assert first["route"] == "big" and first["route_reason"] == "rules: big"
    [second] = await turns_of(h, other["id"])
    assert second["route"] == "small" and "default small" in second["route_reason"]


async def test_the_policy_narrows_the_candidates_before_any_choice(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await router_harness(harness_factory, provider)
    provider.answer(text("a"), text("b"))
    # `big` lacks the run's "eu" tag; `plain` lacks the tools this agent needs.
    eu = await run_of(h, "ruled", "review this contract", data_policy=["eu"])
    poem = await run_of(h, "ruled", "write a poem")
    assert [r["model"] for r in provider.requests] == ["small-m", "small-m"]
    for run in (eu, poem):
        [turn] = await turns_of(h, run["id"])
        assert turn["route"] == "small" and "outside the allowed set" in turn["route_reason"]
    headers = await h.key()
    nowhere = await h.client.post(
        "/v1/runs",
        headers=headers,
        json={"agent": "ruled", "input": "x", "data_policy": ["on-prem"]},
    )
    assert nowhere.status_code == 422 and nowhere.json()["errors"][0]["path"] == "data_policy"


@pytest.mark.parametrize(
    ("picked", "route", "reason"),
    [
        (text("big"), "big", "classifier: big"),
        (text("gpt-9-ultra"), "small", "gpt-9-ultra is outside the allowed set"),
        (failure(500, "server_error"), "small", "no pick"),
    ],
)
async def test_a_classifier_chooses_within_the_policy_or_the_default_is_used(
    harness_factory, provider: FakeOpenAI, picked: Any, route: str, reason: str
) -> None:  # type: ignore[no-untyped-def]
    h = await router_harness(harness_factory, provider)
    provider.answer(picked, text("answered"))
    run = await run_of(h, "classified", "Which databases are in adopt?")
    assert run["termination_reason"] == "final"
    assert [r["model"] for r in provider.requests] == ["picker-m", f"{route}-m"]
    assert "small, big" in provider.requests[0]["messages"][0]["content"]
    [turn] = await turns_of(h, run["id"])
    assert turn["route"] == route and reason in turn["route_reason"]


async def test_a_route_out_of_attempts_hands_over_to_the_fallback_within_the_budget(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await router_harness(harness_factory, provider)
    provider.answer(failure(503, "overloaded"), text("from the fallback"))
    run = await run_of(h, "ruled", "hello")
    assert run["termination_reason"] == "final" and run["output"]["text"] == "from the fallback"
    assert [r["model"] for r in provider.requests] == ["small-m", "big-m"]
    failed, completed = await turns_of(h, run["id"])
    assert failed["route"] == "small" and failed["code"] == "unavailable"
    assert completed["route"] == "big" and completed["route_reason"].startswith("fallback")

    # `big` costs 1,000 USD per million input tokens: the fallback would break this budget.
    provider.answer(failure(503, "overloaded"), text("too dear"))
    tight = await run_of(h, "ruled", "hello", limits={"max_cost_usd": 0.01})
    assert tight["termination_reason"] == "budget" and "cost" in tight["error"]["message"]
    assert [r["model"] for r in provider.requests][2:] == ["small-m"]


async def test_a_classifier_route_without_the_runs_tags_is_never_asked(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await router_harness(harness_factory, provider)
    provider.answer(text("answered"))
    # `picker` carries no tags: the run's input may not go to it, not even to be routed.
    run = await run_of(h, "classified", "Which databases are in adopt?", data_policy=["eu"])
    assert run["termination_reason"] == "final"
    assert [r["model"] for r in provider.requests] == ["small-m"]
    [turn] = await turns_of(h, run["id"])
    assert turn["route"] == "small"
    assert "picker" in turn["route_reason"] and "data-policy" in turn["route_reason"]
    assert turn["route_reason"].endswith("the default small")


async def test_the_classifier_call_counts_against_the_runs_budgets(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await router_harness(harness_factory, provider, run_driver=False)
    provider.answer(text("hi"), text("small", usage=(300, 2)), text("answered", usage=(20, 8)))
    # The process's config versions are kept before its first creation, once: not counted.
    await h.runtime.versions.ensure_kept(h.runtime.reads)
    with counting(h.app.state.engine) as ruled:
        await run_of(h, "ruled", "hello")
    with counting(h.app.state.engine) as classified:
        run = await run_of(h, "classified", "Which databases are in adopt?")
    assert run["termination_reason"] == "final"
    # Charged with the turn it routed: not one statement more than a run routed by rules.
    assert len(writes(classified)) == len(writes(ruled)), writes(classified)
    assert [r["model"] for r in provider.requests][1:] == ["picker-m", "small-m"]
    assert run["usage"]["input_tokens"] == 320 and run["usage"]["output_tokens"] == 10
    # `picker` is priced: its call is charged like a turn (300 + 2 tokens at 100 / 200 per M).
    assert run["usage"]["cost_usd"] == pytest.approx((300 * 100 + 2 * 200) / 1e6)
    [turn] = await turns_of(h, run["id"])
    assert turn["input_tokens"] == 20  # the turn's own call; the classifier's is apart
    assert turn["classifier"] == {
        "route": "picker",
        "input_tokens": 300,
        "output_tokens": 2,
        "cost_usd": pytest.approx(0.0304),
    }


async def test_a_classifier_call_that_would_certainly_exceed_the_budget_is_not_made(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await router_harness(harness_factory, provider)
    provider.answer(text("answered", usage=(20, 8)))
    # The classifier's request alone, at picker's price, is above this cost budget; the
    # turn's own route (unpriced) fits.
    run = await run_of(h, "classified", "Which databases?", limits={"max_cost_usd": 0.0001})
    assert run["termination_reason"] == "final"
    assert [r["model"] for r in provider.requests] == ["small-m"]
    [turn] = await turns_of(h, run["id"])
    assert turn["route"] == "small" and "cost budget" in turn["route_reason"]
