"""What the webhook outbox trigger costs a statement that inserts events (figures, not
pass/fail).

    .venv/bin/python bench/bench_outbox.py [--statements 3000]

Creates a scratch database on the server at TOOLGATE_BENCH_DATABASE_URL (default: the
local server at 127.0.0.1:5432), migrates it, and times single-row event inserts, each a
statement of its own (as a step's write is; `synchronous_commit = off`, so that the
commit's flush does not drown the difference), in turn: with the trigger disabled, with no
endpoint, with an endpoint of the tenant subscribed to other types, and with one that
subscribes to the event (one delivery written per event). The configurations alternate in
rounds so that the machine's other load spreads over all of them. Drops the database."""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.db import migrate  # noqa: E402
from app.db.webhooks.tables import WEBHOOK_OUTBOX_FUNCTION  # noqa: E402
from app.domain.lifecycle.events import EventType  # noqa: E402

LOCKED = str(WEBHOOK_OUTBOX_FUNCTION.statement).replace(
    "CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"
)
# The trigger as migration 0012 made it, before the tenant's endpoints lock (0014).
UNLOCKED = "\n".join(
    line for line in LOCKED.splitlines() if "pg_advisory" not in line and "FROM (SELECT" not in line
)
ENABLE = "ALTER TABLE event ENABLE TRIGGER event_webhook_outbox"
SETUPS = {
    "trigger disabled": (["ALTER TABLE event DISABLE TRIGGER event_webhook_outbox"], None),
    "no endpoint, no lock": ([ENABLE, UNLOCKED], None),
    "no endpoint": ([ENABLE, LOCKED], None),
    "endpoint, other types": ([], EventType.TURN_COMPLETED),
    "endpoint, subscribed": ([], EventType.RUN_CLAIMED),
}
RUN = """INSERT INTO run (tenant_id, id, agent, route, status, input, tools, limits,
    created_by, root_run_id, deadline_at, created_at, updated_at)
    VALUES ('acme', 'run_b', 'a', 'r', 'running', 'x', '[]', '{}', 's', 'run_b',
            now(), now(), now())"""
EVENT = """INSERT INTO event (tenant_id, run_id, seq, last_seq, at, events)
    VALUES ('acme', 'run_b', $1, $1, now(),
            jsonb_build_array(jsonb_build_array($2::text, '{"after_step": 0}'::jsonb)))"""
ENDPOINT = """INSERT INTO webhook_endpoint (tenant_id, id, url, events, secret, created_at,
    created_by) VALUES ('acme', 'wh_b', 'https://x.example', $1, 's', now(), 'b')"""


async def _round(conn: asyncpg.Connection, n: int, seq: int) -> tuple[float, int]:
    statement = await conn.prepare(EVENT)
    started = time.perf_counter()
    for i in range(n):
        await statement.fetch(seq + i, EventType.RUN_CLAIMED.value)
    return (time.perf_counter() - started) / n * 1e6, seq + n


async def _configure(conn: asyncpg.Connection, name: str) -> None:
    ddl, subscribed = SETUPS[name]
    for statement in ddl:
        await conn.execute(statement)
    await conn.execute("DELETE FROM webhook_endpoint")
    if subscribed:
        await conn.execute(ENDPOINT, [subscribed.value])


async def measure(url: str, statements: int, rounds: int) -> dict[str, list[float]]:
    engine = create_async_engine(url)
    await migrate.upgrade(engine)
    await engine.dispose()
    conn = await asyncpg.connect(make_url(url).set(drivername="postgresql").render_as_string(False))
    try:
        # Without waiting for each commit's flush: the trigger's own cost, not the disk's.
        await conn.execute("SET synchronous_commit = off")
        await conn.execute(RUN)
        seq, found = 1, {name: [] for name in SETUPS}
        for _ in range(rounds):
            for name in SETUPS:
                await _configure(conn, name)
                micros, seq = await _round(conn, statements // rounds, seq)
                found[name].append(micros)
        deliveries = await conn.fetchval("SELECT count(*) FROM webhook_delivery")
        print(f"deliveries written: {deliveries}")
        return found
    finally:
        await conn.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=3000, help="per configuration")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    server = os.environ.get(
        "TOOLGATE_BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    name = f"toolgate_outbox_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(
        make_url(server).set(drivername="postgresql").render_as_string(False)
    )
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        found = await measure(
            make_url(server).set(database=name).render_as_string(False),
            args.statements,
            args.rounds,
        )
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()
    base = statistics.median(found["trigger disabled"])
    for label, micros in found.items():
        mid = statistics.median(micros)
        rounds = len(micros)
        print(f"{label:24} {mid:8.1f} µs a statement ({rounds} rounds)  {mid - base:+7.1f} µs")


if __name__ == "__main__":
    asyncio.run(main())
