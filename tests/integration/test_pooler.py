"""Behind PgBouncer in transaction mode (what managed Postgres offerings put in front of the
server): two real server processes share a few pooled server connections, LISTEN goes
straight to Postgres, a cancel and a kill switch reach the other process at once, and no
prepared statement is left on a server connection for another transaction to meet."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.lifecycle.liveness import LIVENESS_LOCK
from app.db.session import make_engine, make_sessionmaker
from tests.support.factories import final, run_body, tool_calls
from tests.support.pgbouncer import pgbouncer, prepared_on_servers
from tests.support.processes import (
    caller_key,
    cli_out,
    free_port,
    run_cli,
    server,
    wait_finished,
    wait_healthy,
)
from tests.support.waiting import until

POOL = 3
RUNS = 40
SEARCH = "search_technologies"


@contextlib.contextmanager
def two_processes(env: dict[str, str]) -> Iterator[tuple[str, str]]:
    ports = free_port(), free_port()
    with (
        server(["serve", "--port", str(ports[0])], env),
        server(["serve", "--port", str(ports[1])], env),
    ):
        yield f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}"


async def listening(db: AsyncEngine, processes: int) -> None:
    """Until `processes` listeners are connected, each past its LISTENs: a listener takes
    its process's liveness lock after its last LISTEN (the events channel's, after the
    cancels', the tool switches' and the key revocations')."""
    query = text(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE a.application_name = 'toolgate-listen' AND l.locktype = 'advisory' "
        "AND l.granted AND l.classid = :lock"
    )

    async def connected() -> bool:
        async with db.connect() as connection:
            found = await connection.execute(query, {"lock": LIVENESS_LOCK})
            return found.scalar_one() >= processes

    await until(connected, timeout_s=30, what="both listeners")


def searching(q: str) -> dict[str, Any]:
    return tool_calls(("c1", SEARCH, {"query": q}))


async def create(client: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Response:
    return await client.post(
        "/v1/runs", json=body, headers={"Idempotency-Key": secrets.token_hex(8)}
    )


async def cancel_reaches_the_holder(a: httpx.AsyncClient, b: httpx.AsyncClient) -> None:
    """A run held by b (created there, mid model call for a minute) is cancelled on a."""
    body = run_body(final("never", delay_ms=60_000), wait_s=0)
    run_id = (await create(b, body)).json()["id"]
    await asyncio.sleep(0.5)  # b is in the model call
    started = time.monotonic()
    cancelled = await a.post(f"/v1/runs/{run_id}/cancel")
    took = time.monotonic() - started
    assert cancelled.json()["termination_reason"] == "cancelled", cancelled.text
    # Lease upkeep (every 40 s here) would take far longer; the cancel waits up to 5 s.
    assert took < 3.0, took


async def switch_reaches_the_other(
    a: httpx.AsyncClient, b: httpx.AsyncClient, admin: dict[str, str]
) -> None:
    """b reads the tool as on, starts a run whose model proposes it 3 s later; the tool is
    switched off on a meanwhile. Without the notification b would trust its copy for 5 s;
    with it the proposal is refused."""
    tools = {t["name"]: t for t in (await b.get("/v1/tools")).json()["items"]}
    assert tools[SEARCH]["enabled"] is True
    script = [{**searching("db"), "delay_ms": 3000}, final("done")]
    run_id = (await create(b, run_body(*script, wait_s=0))).json()["id"]
    switched = await a.post(f"/v1/tools/{SEARCH}/disable", headers=admin)
    assert switched.status_code == 200, switched.text
    tools = {t["name"]: t for t in (await b.get("/v1/tools")).json()["items"]}
    assert tools[SEARCH]["enabled"] is False  # b's copy was dropped at once
    await wait_finished(str(b.base_url), dict(b.headers), run_id, timeout_s=15)
    calls = (await b.get(f"/v1/runs/{run_id}/calls")).json()["items"]
    assert [c["error"]["code"] for c in calls] == ["tool_disabled"], calls
    assert (await a.post(f"/v1/tools/{SEARCH}/enable", headers=admin)).status_code == 200


async def many_runs(a: httpx.AsyncClient, b: httpx.AsyncClient) -> None:
    """Runs on both processes at once, each a tool round and an answer: many statements
    over few shared server connections, where leaked prepared statements would collide."""
    bodies = [run_body(searching(f"q{i}"), final(f"answer {i}"), wait_s=20) for i in range(RUNS)]
    answers = await asyncio.gather(
        *[create(a if i % 2 else b, body) for i, body in enumerate(bodies)]
    )
    assert [r.status_code for r in answers] == [201] * RUNS
    assert {r.json()["termination_reason"] for r in answers} == {"final"}


async def test_two_processes_through_a_transaction_pooler(
    db: AsyncEngine, database_url: str
) -> None:
    key = await caller_key(make_sessionmaker(db))
    with pgbouncer(database_url, pool_size=POOL) as pooled:
        env = {
            "TOOLGATE_DATABASE_URL": pooled,
            "TOOLGATE_DATABASE_POOLER": "transaction",
            "TOOLGATE_LISTEN_DATABASE_URL": database_url,
            # Lease upkeep (which also tells of cancels) every 40 s: out of this test's reach.
            "TOOLGATE_LEASE_S": "120",
        }
        cli_out(env, "db", "upgrade")  # on the listen URL: a session of its own
        argv = ("keys", "create", "--tenant", "acme", "--subject", "root", "--roles", "admin")
        made = json.loads(cli_out(env, *argv))  # through the pooler
        admin = {"Authorization": f"Bearer {made['key']}"}
        with two_processes(env) as (base_a, base_b):
            await asyncio.gather(wait_healthy(base_a), wait_healthy(base_b))
            headers = {"Authorization": f"Bearer {key}"}
            async with (
                httpx.AsyncClient(base_url=base_a, headers=headers, timeout=30) as a,
                httpx.AsyncClient(base_url=base_b, headers=headers, timeout=30) as b,
            ):
                await listening(db, 2)
                assert (await a.get("/readyz")).status_code == 200  # the schema read through it
                await cancel_reaches_the_holder(a, b)
                await switch_reaches_the_other(a, b, admin)
                await many_runs(a, b)
        left = await prepared_on_servers(pooled, POOL)
    assert len(left) == POOL and all(names == [] for names in left.values()), left


async def test_a_connection_keeping_statements_prepared_leaves_them_on_the_pooler(
    db: AsyncEngine, database_url: str
) -> None:
    """Why the setting exists: by default a statement stays prepared on the server
    connection it ran on, which the pooler hands to whoever comes next."""
    with pgbouncer(database_url, pool_size=1) as pooled:
        engine = make_engine(pooled, pool_size=1)
        try:
            async with engine.begin() as connection:
                await connection.execute(text("SELECT count(*) FROM run"))
        finally:
            await engine.dispose()
        left = await prepared_on_servers(pooled, 1)
    assert [len(names) > 0 for names in left.values()] == [True], left


def test_a_transaction_pooler_without_a_listen_url_is_refused_in_words() -> None:
    env = {
        "TOOLGATE_DATABASE_URL": "postgresql+asyncpg://app:s3cret@127.0.0.1:6432/app",
        "TOOLGATE_DATABASE_POOLER": "transaction",
    }
    port = str(free_port())
    done = run_cli("serve", "--port", port, env=env, unset=("TOOLGATE_LISTEN_DATABASE_URL",))
    assert done.returncode == 2, done.stderr
    assert "TOOLGATE_LISTEN_DATABASE_URL" in done.stderr and "Traceback" not in done.stderr
    assert "s3cret" not in done.stderr
