"""Migration 0024 moves the columns a step writes to the end of the run's row: every
value is kept, the defaults and the day-cost trigger still hold.

Synchronous, like test_database.py: it makes its own database."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import migrate
from tests.support.migrations import RUN_ROW, on_fresh_database

_RUN = """
INSERT INTO run (tenant_id, id, agent, route, status, input, tools, limits, created_by,
                 root_run_id, deadline_at, created_at, updated_at, steps, input_tokens,
                 output_tokens, cost_usd, tool_calls, model_calls, step_attempts, next_source,
                 step_failures, version, event_seq)
VALUES ('acme', 'r1', 'a', 'default', 'running', 'hi', '[]', '{}', 'svc', 'r1',
        now(), now(), '2026-12-02T10:00:00Z', 3, 120, 20, 0.25, 2, 4, 1, 3, 1, 9, 14)"""
_COUNTERS = """
SELECT steps, input_tokens, output_tokens, cost_usd::text, tool_calls, model_calls,
       step_attempts, next_source, step_failures, version, event_seq,
       updated_at = '2026-12-02T10:00:00Z'
FROM run WHERE id = :id"""
_LAST = """
SELECT attname FROM pg_attribute WHERE attrelid = 'run'::regclass AND attnum > 0
AND NOT attisdropped ORDER BY attnum DESC LIMIT 1"""


def test_the_step_columns_move_to_the_end_with_their_values(db_server: tuple[str, str]) -> None:
    async def scenario(engine: AsyncEngine) -> None:
        await migrate.upgrade(engine, "0023")
        async with engine.begin() as connection:
            await connection.execute(text(_RUN))
        await migrate.upgrade(engine)
        await engine.dispose()
        async with engine.begin() as connection:
            kept = (await connection.execute(text(_COUNTERS), {"id": "r1"})).one()
            assert tuple(kept) == (3, 120, 20, "0.25000000", 2, 4, 1, 3, 1, 9, 14, True)
            assert (await connection.execute(text(_LAST))).scalar_one() == "updated_at"
            # A run made now takes the defaults; a finishing run with a cost is counted.
            await connection.execute(text(RUN_ROW), {"id": "r2", "status": "running"})
            fresh = (await connection.execute(text(_COUNTERS), {"id": "r2"})).one()
            assert tuple(fresh)[:11] == (0, 0, 0, "0.00000000", 0, 0, 0, 1, 0, 1, 0)
            await connection.execute(text("UPDATE run SET status = 'finished' WHERE id = 'r1'"))
            spent = "SELECT cost_usd::text FROM tenant_day_cost WHERE tenant_id = 'acme'"
            assert (await connection.execute(text(spent))).scalar_one() == "0.25000000"
        await migrate.downgrade(engine, "0023")
        await migrate.upgrade(engine)

    on_fresh_database(db_server, scenario)
