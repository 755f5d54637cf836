"""The hot path's statements are planned once per connection (a generic plan, kept), so a
plan must not bet on what the tables held when it was made. Planned on a new database, the
step batch hashed the whole run table and went on doing so while it grew: in `make bench`,
16 clients and 4,000 runs, a batch read every run row twice (25 million rows in 20 s,
Postgres's CPU a step 1.7 ms). Each table a batch touches is reached by its key."""

from __future__ import annotations

import json

from app.db import raw, step_writes
from tests.support.factories import final, run_body
from tests.support.tenancy import plan_nodes


async def test_the_step_batch_reaches_every_table_by_its_key_on_a_new_database(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(run_driver=False)
    sql = "EXPLAIN (FORMAT JSON) " + step_writes.statement()
    (row,) = await raw.fetch(h.app.state.engine, sql, "[]", "[]", "[]")
    plan = json.loads(row[0])[0]["Plan"]
    scanned = [(n["Node Type"], n.get("Relation Name")) for n in plan_nodes(plan)]
    tables = {"run", "idempotency_key", "tool_call", "preview", "event", "turn"}
    read = [(kind, name) for kind, name in scanned if name in tables and kind != "ModifyTable"]
    whole = [(kind, name) for kind, name in read if "Index" not in kind]
    assert whole == []
    by_key = {name for kind, name in scanned if "Index" in kind}
    assert {"run", "idempotency_key", "tool_call", "preview"} <= by_key


async def test_the_step_batch_looks_each_run_up_by_its_key_once_the_table_has_statistics(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """With the run's status guard a condition of the run alone, the batch walked the
    partial index of active runs (and the entries finished runs left in it) for every
    batch: the planner, guessing a batch at 100 rows and seeing few active runs, found that
    cheaper than a lookup by key per write. Once the table has statistics (autovacuum's
    first pass), each run must be reached by its key."""
    h = await harness_factory(run_driver=False)
    headers = await h.key(roles="caller")
    answer = await h.client.post("/v1/runs", headers=headers, json=run_body(final("done")))
    assert answer.status_code == 201, answer.text
    engine = h.app.state.engine
    async with engine.begin() as connection:
        await connection.exec_driver_sql(
            "INSERT INTO run SELECT (jsonb_populate_record(r, jsonb_build_object("
            "'id', r.id || '_' || g, 'root_run_id', r.id || '_' || g))).* "
            "FROM run r, generate_series(1, 200) g"
        )
    async with engine.connect() as connection:
        await connection.exec_driver_sql("ANALYZE run")
    sql = "EXPLAIN (FORMAT JSON) " + step_writes.statement()
    (row,) = await raw.fetch(engine, sql, "[]", "[]", "[]")
    plan = json.loads(row[0])[0]["Plan"]
    runs = [n for n in plan_nodes(plan) if n.get("Relation Name") == "run"]
    reads = [n for n in runs if n["Node Type"] != "ModifyTable"]
    assert reads, "the batch reads no run"
    for node in reads:
        assert node["Node Type"] == "Index Scan" and node["Index Name"] == "pk_run", node
        assert "id" in node.get("Index Cond", ""), node
