"""The agent `live` on an OpenAI-compatible route to the fake provider on loopback (its
API key in the environment), and starting runs of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from tests.support.factories import seed_radar
from tests.support.fake_openai import FakeOpenAI, fake_openai
from tests.support.harness import DEFAULT_AGENT, Harness

KEY_ENV = "TG_TEST_OPENAI_KEY"
INSTRUCTIONS = "Answer about the radar. Cite sources."
SECRET = "sk-test-0123456789abcdefSECRET"


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenAI]:
    monkeypatch.setenv(KEY_ENV, SECRET)
    async with fake_openai() as fake:
        yield fake


def live_config(fake: FakeOpenAI, agent_fields: dict[str, Any] | None = None, **route: Any) -> Any:
    """`agent_fields`: more of the agent `live` (e.g. its `output_schema`)."""
    live = {
        "provider": "openai",
        "model": "gpt-test",
        "base_url": f"{fake.url}/v1",
        "api_key_env": KEY_ENV,
        "input_cost_per_mtok": 1.0,
        "output_cost_per_mtok": 2.0,
        "timeout_s": 5,
        **route,
    }
    agent = {
        "model": "live",
        "instructions": INSTRUCTIONS,
        "tools": ["search_technologies", "get_technology"],
        "limits": {"max_steps": 6, "deadline_s": 60},
        **(agent_fields or {}),
    }
    data = {
        "models": {"scripted": {"provider": "scripted"}, "live": live},
        "agents": {"live": agent, "tech-radar": DEFAULT_AGENT},
    }
    return parse_config(data, builtin_tools=SPECS)


async def live_harness(  # type: ignore[no-untyped-def]
    harness_factory, fake: FakeOpenAI, agent_fields: dict[str, Any] | None = None, **route: Any
) -> Harness:
    h = await harness_factory(config=live_config(fake, agent_fields, **route))
    await seed_radar(h)
    return h


async def start(h: Harness, **fields: Any) -> dict[str, Any]:
    headers = await h.key()
    body = {"agent": "live", "input": "Which databases are in adopt?", "wait_s": 10, **fields}
    response = await h.client.post("/v1/runs", headers=headers, json=body)
    assert response.status_code == 201, response.text
    return response.json()


async def events_of(h: Harness, run_id: str) -> list[dict[str, Any]]:
    headers = await h.key()
    answer = await h.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)
    return answer.json()["items"]
