"""Quotas: runs created per tenant and minute, counted in the database so that every
replica shares them.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_rate",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "window_start", name=op.f("pk_run_rate")),
    )


def downgrade() -> None:
    op.drop_table("run_rate")
