"""Migration 0023 keeps a turn's hashes as their bytes, and back as their tags; the
service reads them as the tags it wrote.

Synchronous, like test_database.py: it makes its own database."""

from __future__ import annotations

import hashlib

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import migrate
from app.db.tables import turn
from tests.support.migrations import RUN_ROW, on_fresh_database

_INSTRUCTIONS = "sha256:" + hashlib.sha256(b"Answer.").hexdigest()
_TOOLS = "sha256:" + hashlib.sha256(b"[]").hexdigest()
_TURN = f"""
INSERT INTO turn (tenant_id, run_id, step, route, model, instructions_hash, tool_schema_hash,
                  kind, attempts, input_tokens, output_tokens, cost_usd, created_at)
VALUES ('acme', 'r1', 1, 'default', 'm', '{_INSTRUCTIONS}', '{_TOOLS}', 'final', 1, 0, 0, 0,
        now())"""
_STORED = "SELECT instructions_hash, tool_schema_hash FROM turn"


def test_turn_hashes_are_kept_as_bytes_and_read_as_tags(db_server: tuple[str, str]) -> None:
    async def scenario(engine: AsyncEngine) -> None:
        await migrate.upgrade(engine, "0022")
        async with engine.begin() as connection:
            await connection.execute(text(RUN_ROW), {"id": "r1", "status": "finished"})
            await connection.execute(text(_TURN))
        await migrate.upgrade(engine)
        async with engine.connect() as connection:
            stored = (await connection.execute(text(_STORED))).one()
            read = (
                await connection.execute(select(turn.c.instructions_hash, turn.c.tool_schema_hash))
            ).one()
        assert [bytes(v) for v in stored] == [
            hashlib.sha256(b"Answer.").digest(),
            hashlib.sha256(b"[]").digest(),
        ]
        assert tuple(read) == (_INSTRUCTIONS, _TOOLS)
        await migrate.downgrade(engine, "0022")
        await engine.dispose()  # its statements were prepared against the bytes
        async with engine.connect() as connection:
            assert tuple((await connection.execute(text(_STORED))).one()) == (
                _INSTRUCTIONS,
                _TOOLS,
            )

    on_fresh_database(db_server, scenario)
