"""Continuation: a run may continue a finished one (`continue_from`): it names it
(`continued_from`) and keeps what it carries over from it (`carry_over`, a bounded
structured summary) for its model input.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 08:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("run", sa.Column("continued_from", sa.String(64)))
    op.add_column("run", sa.Column("carry_over", JSONB()))


def downgrade() -> None:
    op.drop_column("run", "carry_over")
    op.drop_column("run", "continued_from")
