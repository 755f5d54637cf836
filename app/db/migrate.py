"""Alembic, driven from code: the CLI, the app's readiness check and the tests use this."""

from __future__ import annotations

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

# alembic.ini and migrations/ sit at the top of the repository (or beside the package in
# the image); find them relative to this file, never to the working directory.
ROOT = Path(__file__).resolve().parents[2]
#: Advisory lock held while migrating (an arbitrary constant of ours).
LOCK_KEY = 7_261_100_001


def alembic_config() -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    return config


@functools.cache  # the migration scripts ship with the code: read once per process
def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def _run(engine: AsyncEngine, fn, *args: str) -> None:  # type: ignore[no-untyped-def]
    config = alembic_config()

    def work(sync_connection) -> None:  # type: ignore[no-untyped-def]
        # Replicas starting together migrate one after another, not over each other.
        sync_connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
        config.attributes["connection"] = sync_connection
        fn(config, *args)

    async with engine.begin() as connection:
        await connection.run_sync(work)


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    await _run(engine, command.upgrade, revision)


async def downgrade(engine: AsyncEngine, revision: str = "base") -> None:
    await _run(engine, command.downgrade, revision)


async def current_revision(connection: AsyncConnection) -> str | None:
    return await connection.run_sync(
        lambda sync: MigrationContext.configure(sync).get_current_revision()
    )
