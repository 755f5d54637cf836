"""Under load and outages the engine hands runs back rather than failing them: many
clients at once, a pool with no free connection, connections dropped by the server."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fakes import HeldModel
from tests.support.harness import Harness
from tests.support.waiting import until

SEARCH = ("c1", "search_technologies", {"query": "database"})
SCRIPT = [tool_calls(SEARCH), tool_calls(SEARCH), final("done [source:s1]")]


async def run_outcomes(h: Harness) -> dict[str, int]:
    async with h.runtime.sessions() as session:
        rows = await session.execute(
            text(
                "SELECT coalesce(termination_reason, status) AS outcome, count(*) FROM run "
                "GROUP BY 1"
            )
        )
        internal = await session.execute(
            text("SELECT count(*) FROM run WHERE error->>'code' = 'internal'")
        )
        outcomes = {r[0]: r[1] for r in rows}
        outcomes["internal"] = internal.scalar_one()
    return outcomes


async def test_64_concurrent_clients_end_with_no_5xx_and_no_internal_run(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    statuses: list[int] = []
    loop = asyncio.get_running_loop()
    stop_at = loop.time() + 4.0

    async def client() -> None:
        while loop.time() < stop_at:
            response = await harness.client.post(
                "/v1/runs", headers=headers, json=run_body(*SCRIPT, wait_s=30)
            )
            statuses.append(response.status_code)

    await asyncio.gather(*(client() for _ in range(64)))
    assert len(statuses) >= 64 and set(statuses) == {201}
    outcomes = await run_outcomes(harness)
    assert outcomes == {"final": len(statuses), "internal": 0}


async def test_a_step_that_finds_no_free_connection_hands_the_run_back(
    harness_factory, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    model = HeldModel()
    h: Harness = await harness_factory(
        settings_override={"db_pool_size": 1, "db_pool_timeout_s": 0.2, "lease_s": 1.5},
        models={"scripted": model},
    )
    headers = await h.key()
    run = (
        await h.client.post("/v1/runs", headers=headers, json=run_body(final("ok"), wait_s=0))
    ).json()
    await asyncio.wait_for(model.started.wait(), 10)

    # Take the pool's only connection while the model call is in flight, past its end:
    # held until the turn's write has met the full pool (the run waits for the database)
    # or went through without it (statements of the hot path's own pool).
    async def written_or_refused() -> bool:
        if "waits for the database" in caplog.text:
            return True
        async with db.connect() as connection:
            query = text("SELECT status FROM run WHERE id = :id")
            return (await connection.execute(query, {"id": run["id"]})).scalar_one() != "running"

    with caplog.at_level(logging.INFO, logger="app.engine.steps.stepper"):
        async with h.app.state.engine.connect() as held:
            await held.execute(text("SELECT 1"))
            model.gate.set()
            await until(written_or_refused, what="the turn's write")
    finished = await h.driver.wait("acme", run["id"], 15)
    assert finished.termination_reason == "final"
    assert finished.step_failures == 0
    events = (await h.client.get(f"/v1/runs/{run['id']}/events", headers=headers)).json()
    kinds = [e["type"] for e in events["items"]]
    assert "step.failed" not in kinds and kinds.count("turn.completed") == 1


async def test_connections_dropped_by_the_server_are_replaced_without_an_error(
    harness_factory, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    # Without the poller and what runs with it (purge, webhook sender), which would meet
    # some dead connections first, in their own way (an outage said, a pass skipped):
    # the requests are the pool's only users, and the run goes on in the request.
    h: Harness = await harness_factory(run_driver=False)
    await seed_radar(h)
    headers = await h.key()
    # Listening, the process keeps the key's principal: the request after the drop sends
    # no key lookup, and its first statement meets a dropped connection.
    await asyncio.wait_for(h.app.state.driver.listener.ready.wait(), 10)
    first = await h.client.post("/v1/runs", headers=headers, json=run_body(*SCRIPT))
    assert first.json()["termination_reason"] == "final"
    # Every pooled connection of the app ends, server side, as in a restart or a blip.
    killed = await app_connections(db, terminate=True)
    assert killed

    async def gone() -> bool:  # pg_terminate_backend only signals: until they have ended
        return not (await app_connections(db)) & killed

    await until(gone, what="the backends' end")
    # A backend leaves pg_stat_activity just before its socket closes: the app's loop reads
    # each end within a moment (a statement sent before that meets the connection in a
    # state no client can tell from a live one, and its outcome is unknown).
    await asyncio.sleep(0.2)
    again = await h.client.post("/v1/runs", headers=headers, json=run_body(*SCRIPT))
    assert again.status_code == 201 and again.json()["termination_reason"] == "final"
    # Replaced: the app now talks to Postgres on connections it opened since.
    now = await app_connections(db)
    assert now and not now & killed


async def app_connections(db: AsyncEngine, *, terminate: bool = False) -> set[int]:
    """The backends of the app's connections (killed first, with `terminate`)."""
    async with db.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT pid, CASE WHEN :kill THEN pg_terminate_backend(pid) END "
                "FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = 'toolgate'"
            ),
            {"kill": terminate},
        )
        return {row[0] for row in rows}


async def test_a_run_outlasts_dropped_connections_without_waiting_for_its_lease(
    harness_factory, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    model = HeldModel()
    # No poller: only the holder resumes.
    h: Harness = await harness_factory(run_driver=False, models={"scripted": model})
    headers = await h.key()
    body = run_body(final("still here"), wait_s=0)
    run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    await asyncio.wait_for(model.started.wait(), 10)
    # While the model call is in flight, every pooled connection of the app dies: the
    # turn's write meets a dead one.
    async with db.connect() as conn:
        await conn.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = 'toolgate'"
            )
        )
    model.gate.set()
    # Watched from the test's own connection, so that the app's first use of its pool
    # after the blow is the turn's write.
    with caplog.at_level(logging.INFO, logger="app.engine.steps.stepper"):
        finished = await watch(db, run["id"], timeout_s=15)  # the lease is 30 s
    # Finished well within its lease, its model call made once: the turn's write went on
    # a fresh connection (the hot path's pool replaces a closed one as it hands it out),
    # or, had it met a dead one, the stepper would have waited for the database and gone
    # on from what it holds.
    assert finished["termination_reason"] == "final"
    assert finished["model_calls"] == 1 and finished["steps"] == 1


async def watch(db: AsyncEngine, run_id: str, *, timeout_s: float) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while loop.time() < end:
        async with db.connect() as conn:
            row = (
                (
                    await conn.execute(
                        text(
                            "SELECT status, termination_reason, model_calls, steps FROM run "
                            "WHERE id = :id"
                        ),
                        {"id": run_id},
                    )
                )
                .mappings()
                .one()
            )
        if row["status"] == "finished":
            return dict(row)
        await asyncio.sleep(0.1)
    raise AssertionError("the run did not finish in time")
