"""`process`: the processes serving, each holding a liveness lock on its own session, so
that a dead one's runs are taken over at once rather than when its leases lapse.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-05 22:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "process",
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("lock_key", sa.Integer(), nullable=False),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            nullable=False,
            server_default=sa.text("now()"),
        ),
        sa.PrimaryKeyConstraint("owner", name=op.f("pk_process")),
    )


def downgrade() -> None:
    op.drop_table("process")
