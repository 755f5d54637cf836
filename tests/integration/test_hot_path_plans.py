"""The hot path's statements are planned once per connection (a generic plan, kept), so a
plan must not bet on what the tables held when it was made. Planned on a new database, the
step batch hashed the whole run table and went on doing so while it grew: in `make bench`,
16 clients and 4,000 runs, a batch read every run row twice (25 million rows in 20 s,
Postgres's CPU a step 1.7 ms). Each table a batch touches is reached by its key."""

from __future__ import annotations

import json

from app.db import raw, step_writes
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
