"""Kill switch: tools an admin disabled for a tenant.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 06:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tool_switch",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("tool", sa.String(length=200), nullable=False),
        sa.Column("disabled_by", sa.String(length=200), nullable=False),
        sa.Column("disabled_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "tool", name=op.f("pk_tool_switch")),
    )


def downgrade() -> None:
    op.drop_table("tool_switch")
