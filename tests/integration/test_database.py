"""Migrations from empty to head and back, and the embedded-Postgres path end to end.

These tests are synchronous on purpose: each makes its own database and runs its own
event loop, apart from the session's shared one."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import httpx
from asgi_lifespan import LifespanManager
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from app.config.settings import Settings
from app.db import migrate
from app.db.embedded import start_embedded
from app.db.tables import metadata
from app.engine.access.keys import create_key
from app.main import create_app
from tests.support.dbserver import embedded_server, fresh_database
from tests.support.factories import final
from tests.support.harness import make_config


async def _tables(engine) -> set[str]:  # type: ignore[no-untyped-def]
    async with engine.connect() as connection:
        rows = await connection.execute(
            text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        )
        return {r[0] for r in rows}


def test_migrations_up_from_empty_and_down_to_base(db_server: tuple[str, str]) -> None:
    expected = {t.name for t in metadata.sorted_tables}

    async def scenario(url: str) -> None:
        engine = create_async_engine(url)
        try:
            assert await _tables(engine) == set()
            await migrate.upgrade(engine)
            assert await _tables(engine) == expected | {"alembic_version"}
            async with engine.connect() as connection:
                assert await migrate.current_revision(connection) == migrate.head_revision()
            await migrate.downgrade(engine, "base")
            assert await _tables(engine) == {"alembic_version"}
            async with engine.connect() as connection:
                assert await migrate.current_revision(connection) is None
            await migrate.upgrade(engine)
            assert expected <= await _tables(engine)
        finally:
            await engine.dispose()

    with fresh_database(db_server[1]) as url:
        asyncio.run(scenario(url))


def test_embedded_postgres_serves_a_run_end_to_end() -> None:
    """The path `make run` takes when TOOLGATE_DATABASE_URL is unset: pgserver on a socket
    under the data folder, started by the product's own code."""

    async def scenario(url: str, data_dir: Path) -> None:
        assert make_url(url).query["host"] == str((data_dir / "pg").resolve())
        engine = create_async_engine(url)
        await migrate.upgrade(engine)
        await engine.dispose()
        app = create_app(Settings(database_url=SecretStr(url)), config=make_config())
        async with LifespanManager(app):
            runtime = app.state.runtime
            _, key = await create_key(
                runtime.sessions,
                runtime.clock,
                tenant_id="acme",
                subject="svc",
                roles=["caller"],
                scopes=None,
            )
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                ready = await client.get("/readyz")
                assert ready.status_code == 200
                response = await client.post(
                    "/v1/runs",
                    headers={"Authorization": f"Bearer {key}", "Idempotency-Key": "embedded-1"},
                    json={"agent": "tech-radar", "input": "hi", "script": [final("hello")]},
                )
                assert response.status_code == 201
                assert response.json()["termination_reason"] == "final"

    # Not pytest's tmp_path: pgserver opens permissions up the tree, and concurrent pytest
    # sessions prune each other's numbered temp folders.
    data_dir = Path(tempfile.mkdtemp(prefix="toolgate-embedded-"))
    url, server = start_embedded(data_dir)
    try:
        asyncio.run(scenario(url, data_dir))
    finally:
        server.cleanup()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_the_fixtures_embedded_path_gives_a_fresh_migratable_database() -> None:
    """The fixture's last resort (no server URL, no Docker): pgserver, then a fresh
    database on it, as a session without TOOLGATE_TEST_DATABASE_URL would use."""

    async def scenario(url: str) -> None:
        engine = create_async_engine(url)
        try:
            assert await _tables(engine) == set()
            await migrate.upgrade(engine)
            assert {t.name for t in metadata.sorted_tables} <= await _tables(engine)
        finally:
            await engine.dispose()

    with embedded_server() as server_url, fresh_database(server_url) as url:
        assert make_url(url).query["host"].startswith("/")
        asyncio.run(scenario(url))
