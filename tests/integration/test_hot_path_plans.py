"""The step batch's plan comes from the indexes and the statistics alone (no planner
setting of ours): on an analyzed database holding many finished runs and many active
ones, the batch reaches each run by its key; with few active ones, by its key or through
the index of those few, never through the table. Both plans a connection makes are
checked: the first executions' (planned for the batch at hand) and the one it may keep
for any batch."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.lifecycle import step_writes
from app.db.session import alone
from tests.support.factories import final, run_body
from tests.support.tenancy import plan_nodes

#: The tables a batch reads (beside the arrays it is given).
TABLES = {"run", "idempotency_key", "tool_call", "preview", "event", "turn"}
#: A run and its request's key, `copies` times: one in `every` active, the others finished.
SEED = """
INSERT INTO run (tenant_id, id, agent, route, status, input, tools, limits, created_by,
                 root_run_id, deadline_at, created_at, updated_at, lease_token, lease_expires_at)
SELECT 't' || (g % 10), 'r' || g, 'a', 'm',
       CASE WHEN g % {every} = 0 THEN 'running' ELSE 'finished' END, 'x', '[]', '{{}}', 'k',
       'r' || g, now() + interval '1 hour', now(), now(),
       CASE WHEN g % {every} = 0 THEN 'token' || g END,
       CASE WHEN g % {every} = 0 THEN now() + interval '30 seconds' END
FROM generate_series(1, {copies}) g;
INSERT INTO idempotency_key (tenant_id, key, fingerprint, state, claim_token, locked_until,
                             created_at, expires_at)
SELECT 't' || (g % 10), 'k' || g, 'f', 'done', 'c' || g, now(), now(), now() + interval '1 day'
FROM generate_series(1, {copies}) g
"""
#: A batch of two writes, as its first executions are planned (the arrays known).
BATCH = (['{"i": 0}', '{"i": 1}'], ['{"tenant_id": "t"}'], [])


async def _plans(engine: AsyncEngine) -> list[dict[str, Any]]:
    """The batch's plan for the batch at hand, and the one kept for any batch."""
    explain = "EXPLAIN (FORMAT JSON) "
    async with engine.connect() as connection:
        first = (await connection.exec_driver_sql(explain + step_writes.statement(), BATCH)).one()
        # Only to read the kept plan now, not after five executions: the service never
        # sets this.
        await connection.exec_driver_sql("SET plan_cache_mode = force_generic_plan")
        await connection.exec_driver_sql(
            "PREPARE batch (jsonb[], jsonb[], jsonb[]) AS " + step_writes.statement()
        )
        kept = (await connection.exec_driver_sql(explain + "EXECUTE batch('{}', '{}', '{}')")).one()
        await connection.rollback()
    return [first[0][0]["Plan"], kept[0][0]["Plan"]]  # the driver decodes the JSON


def _assert_by_key(plan: dict[str, Any], *, few_active: bool) -> None:
    nodes = list(plan_nodes(plan))
    read = [
        n for n in nodes if n.get("Relation Name") in TABLES and n["Node Type"] != "ModifyTable"
    ]
    runs = [n for n in read if n["Relation Name"] == "run"]
    assert runs, "the batch reads no run"
    for node in runs:
        assert node["Node Type"] == "Index Scan", node  # never the table, never a bitmap
        if few_active and node["Index Name"] == "ix_run_claimable":
            # Those few, walked through the index of active runs: the planner's choice when
            # it costs less than a lookup per write (it never walks finished runs).
            continue
        assert node["Index Name"] == "pk_run" and "id" in node["Index Cond"], node
    keys = [n for n in read if n["Relation Name"] == "idempotency_key"]
    assert keys and all(n["Index Name"] == "pk_idempotency_key" for n in keys), keys


@pytest.mark.parametrize("every", [400, 4], ids=["few-active", "many-active"])
async def test_an_analyzed_database_plans_the_batch_by_key(harness_factory, every: int) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(run_driver=False)
    headers = await h.key(roles="caller")
    answer = await h.client.post("/v1/runs", headers=headers, json=run_body(final("done")))
    assert answer.status_code == 201, answer.text
    engine = h.app.state.engine
    async with engine.begin() as connection:
        for statement in SEED.format(every=every, copies=20_000).split(";"):
            await connection.exec_driver_sql(statement)
    for table in sorted(TABLES):
        await alone(engine, f"ANALYZE {table}", ())
    for plan in await _plans(engine):
        _assert_by_key(plan, few_active=every > 100)


async def test_a_connection_keeps_one_plan_for_every_batch(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """Planning the batch's nine CTEs costs Postgres more than running them: after its
    first executions a connection keeps a plan for any batch (Postgres's own choice, no
    setting of ours), because the plan for the batch at hand is sized the same."""
    h = await harness_factory(run_driver=False)
    async with h.app.state.engine.connect() as connection:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        for n in range(8):
            batch = ([], [f'{{"tenant_id": "t", "key": "k{i}"}}' for i in range(n % 3)], [])
            await connection.exec_driver_sql(step_writes.statement(), batch)
        (generic, custom) = (
            await connection.exec_driver_sql(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                "WHERE statement LIKE 'WITH w AS%'"
            )
        ).one()
    assert generic >= 3 and custom <= 5, (generic, custom)
