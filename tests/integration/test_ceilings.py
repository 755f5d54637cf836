"""Budgets are ceilings (SPEC §3.4): every model call is sent capped by what the run's
token and cost budgets leave after the most its input can be billed, so over randomized
runs — scripted, on a fake OpenAI-compatible provider that bills as providers do, and a
parent with children running beside it — `usage` never exceeds `limits`; a provider that
ignores the cap has its overshoot recorded and the run ends `budget`."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from tests.support.approvals import approvals_harness, keys, move, row
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fake_openai import FakeOpenAI, calls
from tests.support.fake_openai import text as says
from tests.support.harness import DEFAULT_AGENT, Harness
from tests.support.live_model import events_of, live_harness, provider, start

__all__ = ["provider"]  # a fixture: used by name

SEARCH = ("c1", "search_technologies", {"query": "db"})


def within(run: dict[str, Any]) -> bool:
    usage, limits = run["usage"], run["limits"]
    tokens = usage["input_tokens"] + usage["output_tokens"]
    return tokens <= limits["max_tokens"] and usage["cost_usd"] <= limits["max_cost_usd"]


def random_script(rng: random.Random) -> list[dict[str, Any]]:
    items = [
        tool_calls(SEARCH, usage=(rng.randint(0, 900), rng.randint(0, 400)))
        for _ in range(rng.randint(0, 5))
    ]
    return [*items, final("done", usage=(rng.randint(0, 900), rng.randint(0, 400)))]


async def priced_harness(harness_factory) -> Harness:  # type: ignore[no-untyped-def]
    route = {"provider": "scripted", "input_cost_per_mtok": 300, "output_cost_per_mtok": 1500}
    config = parse_config(
        {
            "models": {"priced": route},
            "agents": {"tech-radar": {**DEFAULT_AGENT, "model": "priced"}},
        },
        builtin_tools=SPECS,
    )
    h = await harness_factory(config=config)
    await seed_radar(h)
    return h


@pytest.mark.parametrize("seed", range(3))
async def test_scripted_runs_never_spend_past_their_limits(harness_factory, seed: int) -> None:  # type: ignore[no-untyped-def]
    h = await priced_harness(harness_factory)
    headers = await h.key()
    rng = random.Random(seed)
    endings = []
    for _ in range(12):
        limits = {"max_tokens": rng.randint(300, 4000), "max_cost_usd": rng.choice([0.3, 1, 5])}
        body = run_body(*random_script(rng), limits=limits)
        run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
        assert run["status"] == "finished", run
        assert within(run), run
        endings.append(run["termination_reason"])
    # The scripts were long enough to meet the ceilings, and short enough to end well.
    assert "budget" in endings and "final" in endings, endings


def random_reply(rng: random.Random, step: int) -> Any:
    if rng.random() < 0.7:
        query = json.dumps({"query": "x" * rng.randint(1, 300)})
        return calls((f"c{step}", "search_technologies", query))
    return says("y" * rng.randint(2000, 12_000))


@pytest.mark.parametrize("seed", range(2))
async def test_runs_on_a_provider_billing_as_providers_do_never_pass_their_limits(
    harness_factory, provider: FakeOpenAI, seed: int
) -> None:  # type: ignore[no-untyped-def]
    provider.realistic = True
    h = await live_harness(harness_factory, provider)
    rng = random.Random(seed)
    endings = []
    for _ in range(6):
        provider.script.clear()
        provider.answer(*(random_reply(rng, step) for step in range(8)))
        asked = len(provider.requests)
        limits = {
            "max_tokens": rng.randint(2500, 6000),
            "max_cost_usd": rng.choice([0.004, 0.01, 1]),
            "max_steps": 8,
        }
        run = await start(h, limits=limits)
        assert run["status"] == "finished", run
        assert within(run), run
        endings.append(run["termination_reason"])
        # Every call carried its cap, which never let it past what was left: the tokens
        # billed before it, its own input, and its cap are within the limit.
        sent, bills = provider.requests[asked:], provider.bills[asked:]
        assert sent and all(16 <= r["max_completion_tokens"] <= 4096 for r in sent)
        spent = 0
        for request, (billed_input, billed_output) in zip(sent, bills, strict=True):
            assert spent + billed_input + request["max_completion_tokens"] <= limits["max_tokens"]
            spent += billed_input + billed_output
    assert "budget" in endings, endings


async def test_a_provider_that_ignores_the_cap_has_its_overshoot_recorded(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    provider.realistic = provider.ignores_caps = True
    h = await live_harness(harness_factory, provider)
    provider.answer(says("z" * 8000))  # 2,000 tokens of output
    run = await start(h, limits={"max_tokens": 1500})
    [sent] = provider.requests
    assert run["termination_reason"] == "budget" and run["output"] is None
    assert "ignoring its output cap" in run["error"]["message"]
    usage = run["usage"]
    over = usage["input_tokens"] + usage["output_tokens"] - 1500
    assert usage["output_tokens"] == 2000 > sent["max_completion_tokens"] and over > 0
    [failed] = [e for e in await events_of(h, run["id"]) if e["type"] == "turn.failed"]
    assert failed["data"]["code"] == "budget_overshoot"
    assert failed["data"]["overshoot"] == {"tokens": over}
    assert failed["data"]["output_cap"] == sent["max_completion_tokens"]


async def test_a_parent_and_its_children_running_beside_it_share_one_ceiling(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """Children created at once while the parent waits for an approval, then the parent
    going on beside them: every child stays within its grant, and the whole tree within
    the parent's limits."""
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = (await row(h, "Kafka"))["id"]
    rng = random.Random(7)
    parent_script = [tool_calls(move(kafka), usage=(200, 50)), *random_script(rng)]
    body = run_body(*parent_script, limits={"max_tokens": 6000, "max_tool_calls": 30})
    parent = (await h.client.post("/v1/runs", headers=caller, json=body)).json()
    assert parent["status"] == "awaiting_approval", parent

    async def child() -> dict[str, Any]:
        asked = {"max_tokens": rng.randint(500, 3000), "max_tool_calls": 6}
        fields = {"parent_run_id": parent["id"], "limits": asked, "wait_s": 0}
        answer = await h.client.post(
            "/v1/runs", headers=caller, json=run_body(*random_script(rng), **fields)
        )
        return answer.json()

    made = await asyncio.gather(*(child() for _ in range(5)))
    children = [c for c in made if "id" in c]
    assert children, made
    preview_id = parent["pending_approvals"][0]["preview_id"]
    rejected = await h.client.post(
        f"/v1/previews/{preview_id}/reject", headers=approver, json={"reason": "not now"}
    )
    assert rejected.status_code == 200, rejected.text
    for run in [*children, parent]:
        done = await h.driver.wait("acme", run["id"], 20)
        view = (await h.client.get(f"/v1/runs/{done.id}", headers=caller)).json()
        assert view["status"] == "finished" and within(view), view
    root = (await h.client.get(f"/v1/runs/{parent['id']}", headers=caller)).json()
    assert root["reserved"]["tokens"] == 0 and within(root), root


async def test_a_call_asks_for_no_more_than_its_routes_own_limit(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    """The budgets leave far more than the route's model can write: the call asks for the
    route's `max_output_tokens`, and an answer cut there is the model's `truncated`, billed,
    not the run's budget."""
    provider.realistic = True
    h = await live_harness(harness_factory, provider, max_output_tokens=300)
    provider.answer(says("q" * 4000))  # 1,000 tokens: cut at 300
    run = await start(h, limits={"max_tokens": 100_000})
    [sent] = provider.requests
    assert sent["max_completion_tokens"] == 300
    assert run["termination_reason"] == "model_failed" and run["error"]["code"] == "truncated"
    assert run["usage"]["output_tokens"] == 300 and run["usage"]["input_tokens"] > 0
