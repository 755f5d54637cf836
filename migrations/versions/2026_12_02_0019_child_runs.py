"""Child runs: what a run has reserved for its unfinished children (`reserved_*`, taken
by a child's creating transaction under a condition on the parent's room, given back
when the child finishes) and what its finished descendants spent (`children_*`), both
written only by those two paths and by the trigger below, never by the run's own steps.
The trigger settles a child in the transaction that finishes it, whatever finishes it.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-03 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The same text as app/db/limits/lineage_tables.py (test_schema compares them).
SETTLE_FUNCTION = """\
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
$$"""
SETTLE_TRIGGER = """\
CREATE TRIGGER run_child_finished AFTER UPDATE OF status ON run FOR EACH ROW
WHEN (OLD.status <> 'finished' AND NEW.status = 'finished' AND NEW.parent_run_id IS NOT NULL)
EXECUTE FUNCTION run_child_settle()"""

_COLUMNS = (
    ("reserved_tokens", sa.BigInteger()),
    ("reserved_cost_usd", sa.Numeric(18, 8)),
    ("reserved_tool_calls", sa.Integer()),
    ("children_input_tokens", sa.BigInteger()),
    ("children_output_tokens", sa.BigInteger()),
    ("children_cost_usd", sa.Numeric(18, 8)),
    ("children_tool_calls", sa.Integer()),
)


def upgrade() -> None:
    for name, kind in _COLUMNS:
        op.add_column("run", sa.Column(name, kind, nullable=False, server_default="0"))
    op.execute(SETTLE_FUNCTION)
    op.execute(SETTLE_TRIGGER)


def downgrade() -> None:
    op.execute("DROP TRIGGER run_child_finished ON run")
    op.execute("DROP FUNCTION run_child_settle()")
    for name, _ in reversed(_COLUMNS):
        op.drop_column("run", name)
