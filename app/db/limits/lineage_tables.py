"""The trigger that settles a child run when it finishes (migration 0019): its own usage
joins every ancestor's `children_*`, and its parent gets back what it reserved for it
(the child's limits are its grant). It runs in the transaction that finishes the child,
whatever path finishes it, so a crash can never leave a reservation held by a finished
child nor a finished child's spending uncounted. Declared on `tables.metadata` (which
imports this module)."""

from __future__ import annotations

from sqlalchemy import DDL
from sqlalchemy import event as sql_events

from app.db.tables import metadata

# Ancestors bottom-up (a finishing run locks its parent after itself, as a cancel of a
# tree locks children before parents): the same order everywhere, so no deadlock.
SETTLE_FUNCTION = DDL("""\
CREATE FUNCTION run_child_settle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH RECURSIVE up(id, depth) AS (
        SELECT NEW.parent_run_id, 1
        UNION ALL
        SELECT r.parent_run_id, up.depth + 1
        FROM run r JOIN up ON r.tenant_id = NEW.tenant_id AND r.id = up.id
        WHERE r.parent_run_id IS NOT NULL AND up.depth < 100
    )
    UPDATE run SET
        children_input_tokens = run.children_input_tokens + NEW.input_tokens,
        children_output_tokens = run.children_output_tokens + NEW.output_tokens,
        children_cost_usd = run.children_cost_usd + NEW.cost_usd,
        children_tool_calls = run.children_tool_calls + NEW.tool_calls,
        reserved_tokens = run.reserved_tokens - CASE WHEN up.depth = 1
            THEN (NEW.limits ->> 'max_tokens')::bigint ELSE 0 END,
        reserved_cost_usd = run.reserved_cost_usd - CASE WHEN up.depth = 1
            THEN (NEW.limits ->> 'max_cost_usd')::numeric ELSE 0 END,
        reserved_tool_calls = run.reserved_tool_calls - CASE WHEN up.depth = 1
            THEN (NEW.limits ->> 'max_tool_calls')::integer ELSE 0 END
    FROM up
    WHERE run.tenant_id = NEW.tenant_id AND run.id = up.id;
    RETURN NULL;
END
$$""")
SETTLE_TRIGGER = DDL("""\
CREATE TRIGGER run_child_finished AFTER UPDATE OF status ON run FOR EACH ROW
WHEN (OLD.status <> 'finished' AND NEW.status = 'finished' AND NEW.parent_run_id IS NOT NULL)
EXECUTE FUNCTION run_child_settle()""")
sql_events.listen(metadata, "after_create", SETTLE_FUNCTION)
sql_events.listen(metadata, "after_create", SETTLE_TRIGGER)
