"""The driver's claim query served by an index in its own order: a run without a lease
sorts as -infinity, so `coalesce(lease_expires_at, '-infinity') < now()` is one range
scan in claim order, with no sort over runnable rows.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 06:10:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_run_runnable", table_name="run")
    op.execute(
        "CREATE INDEX ix_run_claimable ON run "
        "((coalesce(lease_expires_at, '-infinity'::timestamptz))) "
        "WHERE status IN ('queued', 'running')"
    )


def downgrade() -> None:
    op.drop_index("ix_run_claimable", table_name="run")
    op.execute(
        "CREATE INDEX ix_run_runnable ON run (lease_expires_at) "
        "WHERE status IN ('queued', 'running')"
    )
