"""A call's output is kept as JSON text (`json`), not parsed into `jsonb`: nothing queries
inside it, it is only read back whole. The step's write converts the batch's value once
(`jsonb_to_recordset` into a `json` column gives the `jsonb` rendering, so readers see
the keys in the order they did before). The text is smaller: a long run's step wrote
3,004 B of WAL, 2,921 B after (`bench/wal_breakdown.py --rounds 200`, the output a
search's 600 B). Rewrites `tool_call` once, under its lock.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-03 07:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE tool_call ALTER COLUMN output TYPE json USING output::json")


def downgrade() -> None:
    op.execute("ALTER TABLE tool_call ALTER COLUMN output TYPE jsonb USING output::jsonb")
