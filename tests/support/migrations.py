"""Migration tests: a database of their own (synchronous tests, like test_database.py),
and the least run row any revision since 0019 takes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from tests.support.dbserver import fresh_database

#: A run `:id` in status `:status`, of tenant `acme`, with every other column defaulted.
RUN_ROW = """
INSERT INTO run (tenant_id, id, agent, route, status, input, tools, limits, created_by,
                 root_run_id, deadline_at, created_at, updated_at)
VALUES ('acme', :id, 'a', 'default', :status, 'hi', '[]', '{}', 'svc', :id,
        now(), now(), now())"""


def on_fresh_database(
    db_server: tuple[str, str], scenario: Callable[[AsyncEngine], Awaitable[None]]
) -> None:
    """Runs `scenario` against an engine on a new, empty database."""

    async def run(url: str) -> None:
        engine = create_async_engine(url)
        try:
            await scenario(engine)
        finally:
            await engine.dispose()

    with fresh_database(db_server[1]) as url:
        asyncio.run(run(url))
