"""Migration 0025 keeps a call's output as JSON text: what was stored reads back the same,
through the table as the service reads it, and back as `jsonb` on the way down.

Synchronous, like test_database.py: it makes its own database."""

from __future__ import annotations

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import migrate
from app.db.tables import tool_call
from tests.support.migrations import RUN_ROW, on_fresh_database

_TURN = """
INSERT INTO turn (tenant_id, run_id, step, route, model, instructions_hash, tool_schema_hash,
                  kind, attempts, input_tokens, output_tokens, cost_usd, created_at)
VALUES ('acme', 'r1', 1, 'default', 'm', '\\x00', '\\x00', 'tool_calls', 1, 0, 0, 0, now())"""
_CALL = """
INSERT INTO tool_call (tenant_id, id, run_id, step, position, call_id, tool, status,
                       arguments, args_hash, operation_id, output, created_at, updated_at)
VALUES ('acme', 'call_1', 'r1', 1, 0, 'c1', 'search', 'succeeded', '{}', 'sha256:x', 'op_1',
        '{"total": 1, "items": [{"name": "Redis", "id": "t1"}]}', now(), now())"""
_TYPE = "SELECT pg_typeof(output)::text, output::text FROM tool_call"
OUTPUT = {"items": [{"id": "t1", "name": "Redis"}], "total": 1}


def test_a_calls_output_is_kept_as_text_and_reads_back_the_same(
    db_server: tuple[str, str],
) -> None:
    async def scenario(engine: AsyncEngine) -> None:
        await migrate.upgrade(engine, "0024")
        async with engine.begin() as connection:
            await connection.execute(text(RUN_ROW), {"id": "r1", "status": "running"})
            await connection.execute(text(_TURN))
            await connection.execute(text(_CALL))
        await migrate.upgrade(engine)
        async with engine.connect() as connection:
            kind, stored = (await connection.execute(text(_TYPE))).one()
            read = (await connection.execute(select(tool_call.c.output))).scalar_one()
        assert kind == "json"
        # The jsonb rendering: the keys in the order readers saw before.
        assert stored == '{"items": [{"id": "t1", "name": "Redis"}], "total": 1}'
        assert read == OUTPUT and list(read) == ["items", "total"]
        await migrate.downgrade(engine, "0024")
        await engine.dispose()  # its statements were prepared against the text
        async with engine.connect() as connection:
            assert (await connection.execute(text(_TYPE))).one()[0] == "jsonb"

    on_fresh_database(db_server, scenario)
