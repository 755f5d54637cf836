"""Where the tests' Postgres comes from, in order: TOOLGATE_TEST_DATABASE_URL (a server we
create a fresh database on), a testcontainers Postgres when Docker answers, else an
embedded pgserver. Each test session gets its own new database."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy.engine import make_url


def _docker_works() -> bool:
    try:
        import docker

        docker.from_env(timeout=2).ping()
        return True
    except Exception:
        return False


@contextlib.contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """Creates a uniquely named database on the server; yields its asyncpg URL."""
    import asyncio

    import asyncpg

    base = make_url(server_url)
    name = f"toolgate_test_{secrets.token_hex(6)}"
    params = {
        "user": base.username or "postgres",
        "password": base.password,
        "host": base.query.get("host") or base.host or "127.0.0.1",
        "port": base.port or 5432,
        "database": base.database or "postgres",
    }

    async def admin(sql: str) -> None:
        connection = await asyncpg.connect(**params)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(drivername="postgresql+asyncpg", database=name).render_as_string(
            hide_password=False
        )
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextlib.contextmanager
def embedded_server() -> Iterator[str]:
    """A pgserver in a temporary folder; yields a server URL for `fresh_database`."""
    from app.db.embedded import pgserver_module

    pgserver = pgserver_module()
    folder = Path(tempfile.mkdtemp(prefix="toolgate-pg-"))
    server = pgserver.get_server(str(folder), cleanup_mode="delete")
    try:
        yield f"postgresql+asyncpg://postgres@/postgres?host={folder}"
    finally:
        with contextlib.suppress(Exception):
            server.cleanup()


@contextlib.contextmanager
def test_server() -> Iterator[tuple[str, str]]:
    """Yields (kind, server URL)."""
    url = os.environ.get("TOOLGATE_TEST_DATABASE_URL")
    if url:
        yield "server-url", url
        return
    if _docker_works():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:16-alpine", driver="asyncpg") as container:
            yield "testcontainers", container.get_connection_url()
        return
    with embedded_server() as server_url:
        yield "embedded", server_url
