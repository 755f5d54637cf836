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

from app.adapters.tools.builtin.tech_radar import radar_tools
from app.config.settings import Settings
from app.db import migrate
from app.db.clock import DbTime
from app.db.tables import metadata
from app.main import create_app
from app.observability.otel_setup import Telemetry
from tests.support.dbserver import fresh_database, test_server
from tests.support.fakes import FakeClock
from tests.support.harness import Harness, make_config, with_probe


@pytest.fixture(scope="session")
def db_server() -> Iterator[tuple[str, str]]:
    with test_server() as server:
        yield server


@pytest.fixture(scope="session")
def database_url(db_server: tuple[str, str]) -> Iterator[str]:
    with fresh_database(db_server[1]) as url:
        yield url


@pytest.fixture
def own_database(db_server: tuple[str, str]) -> Iterator[str]:
    """A database of the test's own (not migrated), for real processes the test starts."""
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
            models: dict[str, Any] | None = None,
        ) -> Harness:
            """`probe`: a fake tool added to the registry and to the tech-radar agent;
            `models`: providers in place of the config's routes of those names."""
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
                models=models,
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
