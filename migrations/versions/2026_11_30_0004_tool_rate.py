"""Rate limits: calls of a tool per tenant and minute, counted in the database so that
every replica shares them.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 07:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tool_rate",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("tool", sa.String(length=200), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "tool", "window_start", name=op.f("pk_tool_rate")),
    )


def downgrade() -> None:
    op.drop_table("tool_rate")
