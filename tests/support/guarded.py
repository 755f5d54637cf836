"""Configs for the trust tests: the scripted tech-radar agent (and, with a fake provider,
the `live` agent) with an HTTP tool `lookup` on the fake backend, and the guardrails and
tool attributes a test asks for."""

from __future__ import annotations

from typing import Any

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from tests.support.backend import FakeBackend
from tests.support.harness import DEFAULT_AGENT, Harness
from tests.support.live_model import INSTRUCTIONS, KEY_ENV

LOOKUP_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["q"],
    "properties": {"q": {"type": "string"}},
}


def guarded_config(
    backend: FakeBackend,
    *,
    guardrails: dict[str, Any] | None = None,
    provider_url: str | None = None,
    **lookup: Any,
) -> Any:
    """`lookup`: more attributes of the HTTP tool (e.g. `external=True`)."""
    tool = {
        "kind": "http",
        "description": "Look a thing up.",
        "input_schema": LOOKUP_SCHEMA,
        "url": backend.tool_url("lookup"),
        "timeout_s": 2,
        **lookup,
    }
    extra = {"guardrails": guardrails} if guardrails is not None else {}
    agents: dict[str, Any] = {
        "tech-radar": {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "lookup"], **extra}
    }
    models: dict[str, Any] = {"scripted": {"provider": "scripted"}}
    if provider_url is not None:
        models["live"] = {
            "provider": "openai",
            "model": "gpt-test",
            "base_url": f"{provider_url}/v1",
            "api_key_env": KEY_ENV,
            "timeout_s": 5,
        }
        agents["live"] = {
            "model": "live",
            "instructions": INSTRUCTIONS,
            "tools": ["search_technologies", "lookup"],
            "limits": {"max_steps": 6, "deadline_s": 60},
            **extra,
        }
    data = {"models": models, "tools": {"lookup": tool}, "agents": agents}
    return parse_config(data, builtin_tools=SPECS)


async def run_items(h: Harness, run_id: str, what: str) -> list[dict[str, Any]]:
    """The run's `calls` or `events` (all of them), as the API shows them."""
    headers = await h.key()
    answer = await h.client.get(f"/v1/runs/{run_id}/{what}?limit=200", headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()["items"]
