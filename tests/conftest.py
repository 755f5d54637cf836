"""Test fixtures: one fresh Postgres database per session, migrated once; tables truncated
before each test that touches it (the use cases commit, so nothing rolls back)."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from app.adapters.builtin_tools.tech_radar import SPECS, radar_tools
from app.config import parse_config
from app.db import migrate
from app.db.clock import DbTime
from app.db.tables import metadata
from app.engine.keys import create_key
from app.main import create_app
from app.otel_setup import Telemetry
from app.settings import Settings
from tests.dbserver import fresh_database, test_server
from tests.fakes import FakeClock

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


@pytest.fixture(scope="session")
def db_server() -> Iterator[tuple[str, str]]:
    with test_server() as server:
        yield server


@pytest.fixture(scope="session")
def database_url(db_server: tuple[str, str]) -> Iterator[str]:
    with fresh_database(db_server[1]) as url:
        yield url


@pytest.fixture(scope="session")
async def db_engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(database_url)
    await migrate.upgrade(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
async def db(db_engine: AsyncEngine) -> AsyncEngine:
    tables = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables)
    async with db_engine.begin() as connection:
        await connection.execute(text(f"TRUNCATE {tables}"))
    return db_engine


def make_config(
    agents: dict[str, Any] | None = None,
    extra_specs: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    tools: dict[str, Any] | None = None,
    approvals: dict[str, Any] | None = None,
):  # type: ignore[no-untyped-def]
    """`tools`: the config's HTTP tools section."""
    data: dict[str, Any] = {
        "models": {"scripted": {"provider": "scripted"}},
        "agents": agents or {"tech-radar": DEFAULT_AGENT},
    }
    if limits:
        data["limits"] = limits
    if tools:
        data["tools"] = tools
    if approvals:
        data["approvals"] = approvals
    return parse_config(data, builtin_tools={**SPECS, **(extra_specs or {})})


def with_probe(probe: Any) -> tuple[Any, Callable[..., Any]]:
    """A config whose tech-radar agent also has the fake tool, and a registry holding it."""
    name = probe.spec.name
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], name]}
    config = make_config({"tech-radar": agent}, extra_specs={name: probe.spec})

    def tools(sessions, clock):  # type: ignore[no-untyped-def]
        return {**radar_tools(sessions, clock), name: probe}

    return config, tools


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=SecretStr(database_url), lease_s=30, driver_poll_s=0.2)


async def _fresh_idempotency_key(request: httpx.Request) -> None:
    """Creating a run needs an Idempotency-Key; tests about something else get a new one
    per request (tests about the key use a client without this hook)."""
    if request.method == "POST" and request.url.path == "/v1/runs":
        request.headers.setdefault("Idempotency-Key", secrets.token_hex(8))


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


@pytest.fixture
async def harness_factory(  # type: ignore[no-untyped-def]
    db: AsyncEngine, settings: Settings, clock: FakeClock
):
    async with contextlib.AsyncExitStack() as stack:

        async def make(
            *,
            config: Any = None,
            tools: Callable[..., Any] | None = None,
            settings_override: dict[str, Any] | None = None,
            clock_: Any = None,
            run_driver: bool = True,
            probe: Any = None,
            db_time: DbTime | None = None,
            tracer_provider: Any = None,
            telemetry: Any = None,
        ) -> Harness:
            """`probe`: a fake tool added to the registry and to the tech-radar agent."""
            if probe is not None:
                config, tools = with_probe(probe)
            app_settings = settings.model_copy(update=settings_override or {})
            app = create_app(
                app_settings,
                config=config or make_config(),
                clock=clock_ or clock,
                tools=tools or radar_tools,
                run_driver=run_driver,
                db_time=db_time,
                telemetry=telemetry or Telemetry(tracer_provider=tracer_provider, instrument=False),
            )
            await stack.enter_async_context(LifespanManager(app))
            client = await stack.enter_async_context(
                httpx.AsyncClient(
                    transport=httpx.ASGITransport(app=app),
                    base_url="http://testserver",
                    timeout=60,
                    event_hooks={"request": [_fresh_idempotency_key]},
                )
            )
            return Harness(app, client)

        yield make


@pytest.fixture
async def harness(harness_factory) -> Harness:  # type: ignore[no-untyped-def]
    return await harness_factory()
