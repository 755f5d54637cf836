"""Retention (`retention:` in the config): finished runs go with everything they hold once
they are older than `runs_days`, their events after `events_days`; a run awaiting approval
stays whatever its age; expired Idempotency-Keys go in batches fast enough for a keyed
load; `db purge --dry-run` says what would go and removes nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text

from app.db.tables import event, idempotency_key, preview, run, tool_call, turn
from app.domain.limits.retention import Kind
from app.engine.limits import retention
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config
from tests.support.processes import cli_out

DAY_S = 86_400
WRITER = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "move_technology_ring"]}
#: Deadlines long enough that no run is ended by the clock while the test moves it.
LONG = {**WRITER, "limits": {**WRITER["limits"], "deadline_s": 30 * DAY_S}}


def _config(**kept: int) -> Any:
    config = make_config({"tech-radar": LONG}, limits={"deadline_s": 30 * DAY_S})
    return config.model_copy(update={"retention": config.retention.model_copy(update=kept)})


async def _rows(h: Harness, table: Any, run_id: str) -> int:
    column = table.c.id if table is run else table.c.run_id
    async with h.runtime.sessions() as session:
        query = select(func.count()).select_from(table).where(column == run_id)
        return int((await session.execute(query)).scalar_one())


async def _finished_run(h: Harness, headers: dict[str, str]) -> str:
    script = [tool_calls(("c1", "search_technologies", {"query": "db"})), final("done")]
    done = (await h.client.post("/v1/runs", headers=headers, json=run_body(*script))).json()
    assert done["status"] == "finished", done
    return done["id"]


async def _parked_run(h: Harness, headers: dict[str, str]) -> str:
    async with h.runtime.sessions() as session:
        found = await session.execute(text("SELECT id FROM technology WHERE name = 'Kafka'"))
    move = {"technology_id": found.scalar_one(), "ring": "adopt", "rationale": "proven"}
    script = [tool_calls(("m1", "move_technology_ring", move)), final("moved")]
    parked = (await h.client.post("/v1/runs", headers=headers, json=run_body(*script))).json()
    assert parked["status"] == "awaiting_approval", parked
    return parked["id"]


async def test_an_old_finished_run_goes_whole_and_a_parked_one_stays(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=_config(runs_days=2), run_driver=False)
    await seed_radar(h)
    headers = await h.key(roles="caller,approver")
    old, parked = await _finished_run(h, headers), await _parked_run(h, headers)
    h.travel(DAY_S)
    young = await _finished_run(h, headers)
    h.travel(1.5 * DAY_S)  # `old` (and `parked`) is 2.5 days old, `young` 1.5
    pass_ = retention.pass_of(h.runtime)

    counted = await retention.count(h.runtime.sessions, pass_)
    assert counted.removed[Kind.RUNS] == 1  # only `old` is past two days
    assert await _rows(h, run, old) == 1  # a dry count removes nothing

    done = await retention.purge(h.runtime.sessions, pass_)
    assert done.removed[Kind.RUNS] == 1 and not done.behind
    for table in (run, turn, tool_call, event):
        assert await _rows(h, table, old) == 0, table.name
    assert (await h.client.get(f"/v1/runs/{old}", headers=headers)).status_code == 404
    # The parked run is older still, and stays with its preview; the young one stays.
    for kept in (parked, young):
        assert await _rows(h, run, kept) == 1
        assert await _rows(h, event, kept) > 0
    assert await _rows(h, preview, parked) == 1


async def test_a_finished_runs_events_may_go_before_the_run(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=_config(events_days=1, runs_days=30), run_driver=False)
    await seed_radar(h)
    headers = await h.key()
    old = await _finished_run(h, headers)
    listed = await h.client.get(f"/v1/runs/{old}/events?limit=200", headers=headers)
    h.travel(2 * DAY_S)
    # A row holds one write's events: the counts are of events, and a batch is of rows.
    rows, events = await _rows(h, event, old), len(listed.json()["items"])
    assert rows < events
    pass_ = replace(retention.pass_of(h.runtime), batch=rows + 1, pass_s=0.0)
    counted = await retention.count(h.runtime.sessions, pass_)
    assert counted.removed[Kind.EVENTS] == events

    done = await retention.purge(h.runtime.sessions, pass_)
    assert done.removed[Kind.EVENTS] == events and done.removed[Kind.RUNS] == 0
    # One batch took every row: the pass is not behind, though its time was up at once.
    assert Kind.EVENTS not in done.behind
    assert await _rows(h, event, old) == 0
    still = await h.client.get(f"/v1/runs/{old}", headers=headers)
    assert still.status_code == 200 and still.json()["status"] == "finished"


async def test_expired_keys_go_in_one_pass_at_a_keyed_load(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """200 keyed requests a second for a minute is 12,000 keys a pass: a pass takes 30,000
    (in batches of its setting), not the 1,000 a purge used to take."""
    h = await harness_factory(config=_config(), run_driver=False)
    async with h.runtime.sessions.begin() as session:
        await session.execute(
            text(
                "INSERT INTO idempotency_key (tenant_id, key, fingerprint, state, claim_token,"
                " locked_until, created_at, expires_at)"
                " SELECT 'acme', 'k' || n, 'sha256:x', 'done', 't', now(), now() - interval"
                " '2 days', now() - interval '1 day' FROM generate_series(1, 30000) AS n"
            )
        )
        await session.execute(
            text(
                "INSERT INTO idempotency_key (tenant_id, key, fingerprint, state, claim_token,"
                " locked_until, created_at, expires_at) VALUES ('acme', 'live', 'sha256:x',"
                " 'done', 't', now(), now(), now() + interval '1 day')"
            )
        )

    done = await retention.purge(h.runtime.sessions, retention.pass_of(h.runtime))
    assert done.removed[Kind.IDEMPOTENCY_KEYS] == 30_000 and not done.behind
    async with h.runtime.sessions() as session:
        left = (await session.execute(select(idempotency_key.c.key))).scalars().all()
    assert left == ["live"]


async def test_db_purge_dry_run_says_what_would_go(
    harness_factory, database_url: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=_config(), run_driver=False)
    await seed_radar(h)
    headers = await h.key()
    finished = await _finished_run(h, headers)
    async with h.runtime.sessions.begin() as session:  # finished long ago
        await session.execute(
            run.update()
            .where(run.c.id == finished)
            .values(finished_at=func.now() - text("interval '40 days'"))
        )
    config = tmp_path / "config.yaml"
    config.write_text("retention: {runs_days: 30}\n")
    env = {"TOOLGATE_DATABASE_URL": database_url, "TOOLGATE_CONFIG": str(config)}

    def purge(*flags: str) -> dict[str, Any]:
        return json.loads(cli_out(env, "db", "purge", *flags))

    dry = purge("--dry-run")
    assert dry["dry_run"] is True and dry["removed"]["runs"] == 1
    assert await _rows(h, run, finished) == 1
    wet = purge()
    assert wet["dry_run"] is False and wet["removed"]["runs"] == 1
    assert await _rows(h, run, finished) == 0


async def test_done_deliveries_go_after_their_days_and_pending_ones_stay(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=_config(deliveries_days=7), run_driver=False)
    statements = [
        "INSERT INTO webhook_endpoint (tenant_id, id, url, events, secret, created_at,"
        " created_by) VALUES ('acme', 'wh_1', 'https://hooks.example.com/x',"
        " ARRAY['run.finished'], 'whsec_x', now(), 'admin')",
        *(
            "INSERT INTO webhook_delivery (tenant_id, id, endpoint_id, run_id, seq, type,"
            " status, attempts, next_attempt_at, created_at, finished_at) VALUES"
            f" ('acme', '{id_}', 'wh_1', 'run_x', {seq}, 'run.finished', '{status}', 1,"
            f" now(), now() - interval '{age}', {finished})"
            for id_, seq, status, age, finished in (
                ("msg_old_sent", 1, "succeeded", "10 days", "now() - interval '10 days'"),
                ("msg_old_failed", 2, "failed", "10 days", "now() - interval '9 days'"),
                ("msg_new_sent", 3, "succeeded", "1 day", "now() - interval '1 day'"),
                ("msg_old_pending", 4, "pending", "10 days", "NULL"),
            )
        ),
    ]
    async with h.runtime.sessions.begin() as session:
        for statement in statements:
            await session.execute(text(statement))

    done = await retention.purge(h.runtime.sessions, retention.pass_of(h.runtime))
    assert done.removed[Kind.DELIVERIES] == 2
    async with h.runtime.sessions() as session:
        left = (
            await session.execute(text("SELECT id FROM webhook_delivery ORDER BY id"))
        ).scalars()
        assert list(left) == ["msg_new_sent", "msg_old_pending"]
