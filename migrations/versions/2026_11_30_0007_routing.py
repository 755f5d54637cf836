"""Routing: a run's own data-policy tags, and why each turn went to its route.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("run", sa.Column("data_policy", postgresql.ARRAY(sa.Text()), nullable=True))
    op.add_column("turn", sa.Column("route_reason", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("turn", "route_reason")
    op.drop_column("run", "data_policy")
