"""A run keeps the span context of its latest advance, so that the next one (in any
process) links to it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 07:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("run", sa.Column("trace_context", sa.String(length=64), nullable=True))


def downgrade() -> None:
    op.drop_column("run", "trace_context")
