"""Engine economy. The driver's claim query served by an index in its own order: a run
without a lease sorts as -infinity, so `coalesce(lease_expires_at, '-infinity') < now()`
is one range scan in claim order, with no sort over runnable rows. A scripted run's
script moves out of the run row (rewritten by every step) into `run_script`.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 06:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_script",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("script", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id", "run_id"],
            ["run.tenant_id", "run.id"],
            name=op.f("fk_run_script_tenant_id_run_id_run"),
        ),
        sa.PrimaryKeyConstraint("tenant_id", "run_id", name=op.f("pk_run_script")),
    )
    op.execute(
        "INSERT INTO run_script (tenant_id, run_id, script) "
        "SELECT tenant_id, id, script FROM run WHERE script IS NOT NULL"
    )
    op.drop_column("run", "script")
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
    op.add_column(
        "run", sa.Column("script", postgresql.JSONB(astext_type=sa.Text()), nullable=True)
    )
    op.execute(
        "UPDATE run SET script = s.script FROM run_script s "
        "WHERE s.tenant_id = run.tenant_id AND s.run_id = run.id"
    )
    op.drop_table("run_script")
