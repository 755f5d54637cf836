"""The columns a step writes on its run (usage counters, `version`, `event_seq`,
`updated_at`) move to the end of the row. A HOT update logs the new row from its first
changed byte to its last: with these columns spread between the 12th and the 36th, every
step logged the ones between them too (the creator, the lineage, the lease, the deadline).
Measured with `bench/wal_breakdown.py --try`: the run's WAL a step at N = 200 from 333 to
210 bytes. Postgres cannot reorder columns: each is added again, filled, and the old one
dropped, in one pass over the table (which rewrites every row once, under its lock). The
day-cost trigger's condition reads `cost_usd`, so it is made again around the move. The
downgrade leaves the order as it is: a column's place in the row has no other meaning.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-02 20:40:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: (name, type, default), in their new order at the end of the row.
_MOVED = (
    ("steps", "integer", "0"),
    ("input_tokens", "bigint", "0"),
    ("output_tokens", "bigint", "0"),
    ("cost_usd", "numeric(18,8)", "0"),
    ("tool_calls", "integer", "0"),
    ("model_calls", "integer", "0"),
    ("step_attempts", "integer", "0"),
    ("next_source", "integer", "1"),
    ("step_failures", "integer", "0"),
    ("version", "integer", "1"),
    ("event_seq", "integer", "0"),
    ("updated_at", "timestamp with time zone", None),
)
_DAY_COST_TRIGGER = """\
CREATE TRIGGER run_finished_day_cost AFTER UPDATE OF status ON run FOR EACH ROW
WHEN (OLD.status <> 'finished' AND NEW.status = 'finished' AND NEW.cost_usd > 0)
EXECUTE FUNCTION run_day_cost()"""


def upgrade() -> None:
    op.execute("DROP TRIGGER run_finished_day_cost ON run")
    op.execute("ALTER TABLE run " + ", ".join(f"ADD COLUMN moved_{n} {t}" for n, t, _ in _MOVED))
    op.execute("UPDATE run SET " + ", ".join(f"moved_{n} = {n}" for n, _, _ in _MOVED))
    op.execute("ALTER TABLE run " + ", ".join(f"DROP COLUMN {n}" for n, _, _ in _MOVED))
    for name, _, default in _MOVED:
        op.execute(f"ALTER TABLE run RENAME COLUMN moved_{name} TO {name}")
        settings = [f"ALTER COLUMN {name} SET NOT NULL"]
        if default is not None:
            # Quoted, as the tables' declarations make it (`'0'::numeric`, not `0`).
            settings.append(f"ALTER COLUMN {name} SET DEFAULT '{default}'")
        op.execute(f"ALTER TABLE run {', '.join(settings)}")
    op.execute(_DAY_COST_TRIGGER)
    op.execute("ANALYZE run")


def downgrade() -> None:
    pass  # the columns keep their new places: nothing reads a column by its position
