"""A built-in tool's statement that meets an outage (its connection ended: a failover, a
terminated backend) is the database's failure, not the tool's: the call (or its preview) is
tried again after backoff, within the tool's `max_attempts`, like any transient failure,
and the model hears `unavailable` only when every attempt met it. Before, the read ended
`failed` `internal` at once, the preview's call likewise, and the run went on without them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.approvals import approvals_harness, keys, move, row
from tests.support.factories import final, run_body, search_rounds, seed_radar, tool_calls
from tests.support.harness import Harness
from tests.support.waiting import until

WAITING_ON_THE_RADAR = text(
    "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND query ILIKE '%technology%' AND pid <> pg_backend_pid()"
)


@contextlib.asynccontextmanager
async def radar_held(engine: AsyncEngine) -> AsyncIterator[None]:
    """The radar's table locked, so the tool's statement waits on it (until the block ends)."""
    async with engine.connect() as connection, connection.begin():
        await connection.execute(text("LOCK TABLE technology IN ACCESS EXCLUSIVE MODE"))
        yield


async def end_the_waiting_statement(engine: AsyncEngine) -> None:
    """The backend of the tool's statement, waiting on the lock, is terminated: to the
    process, its connection is gone, as in a failover."""
    waiting: list[int] = []

    async def found() -> bool:
        async with engine.connect() as connection:
            waiting[:] = (await connection.execute(WAITING_ON_THE_RADAR)).scalars().all()
        return bool(waiting)

    await until(found, what="the tool's statement waiting on the radar")
    async with engine.connect() as connection:
        for pid in waiting:
            await connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})


async def test_a_read_whose_connection_ends_mid_statement_is_read_again(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h: Harness = await harness_factory()
    await seed_radar(h)
    engine = h.app.state.engine
    async with radar_held(engine):
        made = await h.client.post(
            "/v1/runs", headers=await h.key(), json=run_body(*search_rounds(1), wait_s=0)
        )
        assert made.status_code == 201, made.text
        await end_the_waiting_statement(engine)
    run_id = made.json()["id"]
    done = await h.driver.wait("acme", run_id, 20)
    calls = (await h.client.get(f"/v1/runs/{run_id}/calls", headers=await h.key())).json()
    assert [(c["status"], c["error"]) for c in calls["items"]] == [("succeeded", None)]
    assert done.termination_reason == "final"


async def test_a_preview_whose_connection_ends_mid_statement_is_made_again(  # type: ignore[no-untyped-def]
    harness_factory,
) -> None:
    h = await approvals_harness(harness_factory)
    caller, _ = await keys(h)
    kafka = await row(h, "Kafka")
    engine = h.app.state.engine
    body = run_body(tool_calls(move(kafka["id"])), final("Moved [source:s1]"), wait_s=0)
    async with radar_held(engine):
        made = await h.client.post("/v1/runs", headers=caller, json=body)
        assert made.status_code == 201, made.text
        await end_the_waiting_statement(engine)
    run_id = made.json()["id"]
    parked = await h.driver.wait("acme", run_id, 20)
    assert parked.status == "awaiting_approval", parked
    calls = (await h.client.get(f"/v1/runs/{run_id}/calls", headers=caller)).json()["items"]
    assert [(c["status"], c["error"]) for c in calls] == [("awaiting_approval", None)]
