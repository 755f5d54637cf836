"""The app under test: a running app (lifespan included) and a client for it, and the
config the tests start from (the demo's tech-radar agent on the scripted model)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

from app.adapters.tools.builtin.tech_radar import SPECS, radar_tools
from app.config.files import parse_config
from app.engine.access.keys import create_key
from app.main import create_app
from app.observability.otel_setup import Telemetry
from tests.support.backend import serving_app

DEFAULT_AGENT = {
    "model": "scripted",
    "instructions": "Answer questions about the radar. Cite sources.",
    "tools": ["search_technologies", "get_technology"],
    "limits": {
        "max_steps": 8,
        "deadline_s": 120,
        "max_tokens": 50000,
        "max_cost_usd": 1,
        "max_tool_calls": 20,
    },
}


def make_config(
    agents: dict[str, Any] | None = None,
    extra_specs: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    tools: dict[str, Any] | None = None,
    approvals: dict[str, Any] | None = None,
    quotas: dict[str, Any] | None = None,
    scripted: dict[str, Any] | None = None,
    webhooks: dict[str, Any] | None = None,
    mcp_servers: dict[str, Any] | None = None,
):  # type: ignore[no-untyped-def]
    """`tools`: the config's HTTP tools section; `scripted`: more of the scripted route
    (its prices)."""
    data: dict[str, Any] = {
        "models": {"scripted": {"provider": "scripted", **(scripted or {})}},
        "agents": agents or {"tech-radar": DEFAULT_AGENT},
    }
    if limits:
        data["limits"] = limits
    if tools:
        data["tools"] = tools
    if approvals:
        data["approvals"] = approvals
    if quotas:
        data["quotas"] = quotas
    if webhooks:
        data["webhooks"] = webhooks
    if mcp_servers:
        data["mcp_servers"] = mcp_servers
    return parse_config(data, builtin_tools={**SPECS, **(extra_specs or {})})


def with_probe(probe: Any) -> tuple[Any, Callable[..., Any]]:
    """A config whose tech-radar agent also has the fake tool, and a registry holding it."""
    name = probe.spec.name
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], name]}
    config = make_config({"tech-radar": agent}, extra_specs={name: probe.spec})

    def tools(sessions, clock):  # type: ignore[no-untyped-def]
        return {**radar_tools(sessions, clock), name: probe}

    return config, tools


class Harness:
    """A running app (lifespan included) and a client for it."""

    def __init__(self, app: Any, client: httpx.AsyncClient) -> None:
        self.app = app
        self.client = client

    @property
    def runtime(self):  # type: ignore[no-untyped-def]
        return self.app.state.runtime

    @property
    def driver(self):  # type: ignore[no-untyped-def]
        return self.app.state.driver

    def travel(self, seconds: float) -> None:
        """Moves this app's time: its own clock, and the database's as its queries see it
        (lease and lock expiry are compared there)."""
        self.runtime.clock.advance(seconds)
        self.runtime.db_time.advance(seconds)

    async def key(
        self,
        tenant: str = "acme",
        subject: str = "svc",
        roles: str = "caller,approver",
        scopes: list[str] | None = None,
    ) -> dict[str, str]:
        _, key = await create_key(
            self.runtime.sessions,
            self.runtime.clock,
            tenant_id=tenant,
            subject=subject,
            roles=roles.split(","),
            scopes=scopes,
        )
        return {"Authorization": f"Bearer {key}"}


@asynccontextmanager
async def serving(settings: Any, config: Any) -> AsyncIterator[tuple[str, Harness]]:
    """The app with `config` served on loopback, for a browser, and a client for it."""
    app = create_app(
        settings, config=config, tools=radar_tools, telemetry=Telemetry(instrument=False)
    )
    async with (
        serving_app(app, lifespan="on") as url,
        httpx.AsyncClient(base_url=url, timeout=60) as client,
    ):
        yield url, Harness(app, client)
