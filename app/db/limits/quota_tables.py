"""The quota tables (SPEC §4): runs created per tenant and minute, and the cost of each
tenant's finished runs per UTC day, kept by a trigger on `run`. Declared on
`tables.metadata` (which imports this module)."""

from __future__ import annotations

from sqlalchemy import DDL, Column, Date, Integer, Numeric, PrimaryKeyConstraint, String, Table
from sqlalchemy import event as sql_events

from app.db.tables import _ts, metadata

# Runs created per tenant and minute, for the `runs_per_minute` quota: counted in the
# database so that every replica shares them (like `tool_rate`).
run_rate = Table(
    "run_rate",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    _ts("window_start"),
    Column("runs", Integer, nullable=False),
    PrimaryKeyConstraint("tenant_id", "window_start"),
)

# What a tenant's finished runs cost, by the UTC day they were created (migration 0014),
# for the `daily_cost_usd` quota: a creation reads one row and the runs still going,
# never the day's runs.
tenant_day_cost = Table(
    "tenant_day_cost",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("day", Date, nullable=False),
    Column("cost_usd", Numeric(18, 8), nullable=False),
    PrimaryKeyConstraint("tenant_id", "day"),
)

#: A run's cost joins its day's total in the step that finishes it, however it finishes
#: (any path that sets `finished`), with no round trip; a run that cost nothing writes
#: nothing. Migration 0014 creates the same function and trigger.
DAY_COST_FUNCTION = DDL("""\
CREATE FUNCTION run_day_cost() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_day_cost AS c (tenant_id, day, cost_usd)
    VALUES (NEW.tenant_id, (NEW.created_at AT TIME ZONE 'UTC')::date, NEW.cost_usd)
    ON CONFLICT (tenant_id, day) DO UPDATE SET cost_usd = c.cost_usd + excluded.cost_usd;
    RETURN NULL;
END
$$""")
DAY_COST_TRIGGER = DDL("""\
CREATE TRIGGER run_finished_day_cost AFTER UPDATE OF status ON run FOR EACH ROW
WHEN (OLD.status <> 'finished' AND NEW.status = 'finished' AND NEW.cost_usd > 0)
EXECUTE FUNCTION run_day_cost()""")
sql_events.listen(metadata, "after_create", DAY_COST_FUNCTION)
sql_events.listen(metadata, "after_create", DAY_COST_TRIGGER)
