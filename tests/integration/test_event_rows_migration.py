"""Migration 0021 turns one `event` row per event into one row per write, and back, with
every event kept in order and nothing sent twice by the webhook outbox.

Synchronous, like test_database.py: it makes its own database."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import migrate
from tests.support.migrations import RUN_ROW, on_fresh_database

_PER_EVENT = """
INSERT INTO event (tenant_id, run_id, seq, type, at, data, xid)
VALUES ('acme', 'r1', 1, 'run.created', now(), '{"n": 1}', 0),
       ('acme', 'r1', 2, 'turn.completed', now(), '{"n": 2}', 7),
       ('acme', 'r1', 3, 'run.finished', now(), '{"n": 3}', 7)"""
# Subscribed to two of the three events of the write below.
_ENDPOINT = """
INSERT INTO webhook_endpoint (tenant_id, id, url, events, secret, created_at, created_by)
VALUES ('acme', 'w1', 'http://127.0.0.1:9/', '{call.proposed,call.succeeded}', 's', now(), 'svc')
"""
_PER_WRITE = """
INSERT INTO event (tenant_id, run_id, seq, last_seq, at, events)
VALUES ('acme', 'r1', 4, 6, now(),
        '[["call.proposed", {"n": 4}], ["call.started", {"n": 5}], ["call.succeeded", {"n": 6}]]')
"""


async def _rows(engine: AsyncEngine, sql: str) -> list[tuple[Any, ...]]:
    async with engine.connect() as connection:
        return [tuple(r) for r in await connection.execute(text(sql))]


async def _run(engine: AsyncEngine, *statements: str) -> None:
    async with engine.begin() as connection:
        for statement in statements:
            await connection.execute(text(statement))


def test_events_are_regrouped_into_rows_and_back_in_order(db_server: tuple[str, str]) -> None:
    async def scenario(engine: AsyncEngine) -> None:
        await migrate.upgrade(engine, "0020")
        async with engine.begin() as connection:
            await connection.execute(text(RUN_ROW), {"id": "r1", "status": "finished"})
        await _run(engine, _PER_EVENT)
        await migrate.upgrade(engine)
        rows = await _rows(engine, "SELECT seq, last_seq, events, xid FROM event ORDER BY last_seq")
        assert rows == [
            (1, 1, [["run.created", {"n": 1}]], 0),
            (2, 2, [["turn.completed", {"n": 2}]], 7),
            (3, 3, [["run.finished", {"n": 3}]], 7),
        ]
        await _run(engine, _ENDPOINT, _PER_WRITE)
        deliveries = "SELECT seq, type FROM webhook_delivery ORDER BY seq"
        assert await _rows(engine, deliveries) == [(4, "call.proposed"), (6, "call.succeeded")]
        await migrate.downgrade(engine, "0020")
        rows = await _rows(engine, "SELECT seq, type, data FROM event ORDER BY seq")
        assert rows == [
            (1, "run.created", {"n": 1}),
            (2, "turn.completed", {"n": 2}),
            (3, "run.finished", {"n": 3}),
            (4, "call.proposed", {"n": 4}),
            (5, "call.started", {"n": 5}),
            (6, "call.succeeded", {"n": 6}),
        ]
        # Splitting the row wrote no delivery again.
        assert await _rows(engine, deliveries) == [(4, "call.proposed"), (6, "call.succeeded")]

    on_fresh_database(db_server, scenario)
