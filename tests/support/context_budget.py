"""Configs and helpers for the context-budget tests: agents on the fake OpenAI provider
with an HTTP tool `lookup` on the fake backend and a `limits.context_tokens` budget, and
the estimate a request is held to, computed from what the provider received."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from app.domain.model.digest import decode
from tests.support.backend import FakeBackend
from tests.support.fake_openai import FakeOpenAI
from tests.support.guarded import LOOKUP_SCHEMA
from tests.support.harness import Harness
from tests.support.live_model import INSTRUCTIONS, KEY_ENV


def budget_config(
    backend: FakeBackend, provider: FakeOpenAI, *, steps: int = 80, **budgets: int | None
) -> Any:
    """One agent per entry of `budgets` (its name: its `context_tokens`, None for none),
    each with `lookup` and room for runs of `steps` steps; and the scripted `tech-radar`."""
    lookup = {
        "kind": "http",
        "description": "Look a thing up.",
        "input_schema": LOOKUP_SCHEMA,
        "url": backend.tool_url("lookup"),
        "timeout_s": 5,
    }
    route = {
        "provider": "openai",
        "model": "gpt-test",
        "base_url": f"{provider.url}/v1",
        "api_key_env": KEY_ENV,
        "timeout_s": 10,
    }
    agents: dict[str, Any] = {}
    for name, tokens in budgets.items():
        limits: dict[str, Any] = {"max_steps": steps, "deadline_s": 600, "max_tool_calls": 300}
        if tokens is not None:
            limits["context_tokens"] = tokens
        agents[name] = {
            "model": "live",
            "instructions": INSTRUCTIONS,
            "tools": ["lookup"],
            "limits": limits,
        }
    data = {
        "limits": {"max_steps": max(100, steps), "max_tool_calls": 500, "max_tokens": 10_000_000},
        "models": {"live": route},
        "tools": {"lookup": lookup},
        "agents": agents,
    }
    return parse_config(data, builtin_tools=SPECS)


def wire_tokens(request: dict[str, Any]) -> int:
    """ceil(len(JSON of the messages and tool schemas) / 4), of the request as sent."""
    return math.ceil(len(json.dumps(request["messages"] + request.get("tools", []))) / 4)


def observations(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each tool message's content, by its call id (a later id of the same name wins)."""
    return {
        m["tool_call_id"]: json.loads(m["content"])
        for m in request["messages"]
        if m["role"] == "tool"
    }


def named(request: dict[str, Any]) -> dict[str, tuple[int | None, str | None]]:
    """Every call the request names, by its id: its step and error code — from the digest's
    rows, and from each observation (the latest, whole, says no step)."""
    found: dict[str, tuple[int | None, str | None]] = {}
    for message in request["messages"][2:]:
        if message["role"] == "user" and '"history_digest"' in message["content"]:
            for step, call_id, *_, code, _, _ in decode(json.loads(message["content"])):
                found[str(call_id)] = (step, code)
    for call_id, seen in observations(request).items():
        found[call_id] = (seen.get("step"), (seen.get("error") or {}).get("code"))
    return found


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


async def finished(h: Harness, run: dict[str, Any], timeout_s: float = 120) -> dict[str, Any]:
    """The run once it has finished (advanced by the driver meanwhile)."""
    headers = await h.key()
    for _ in range(int(timeout_s / 0.2)):
        if run["status"] == "finished":
            return run
        await asyncio.sleep(0.2)
        answer = await h.client.get(f"/v1/runs/{run['id']}", headers=headers)
        run = answer.json()
    raise AssertionError(f"the run did not finish: {run}")
