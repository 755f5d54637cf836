"""Retention: finished runs, and done webhook deliveries, oldest first, for the purge
(across tenants, like the expiry of Idempotency-Keys).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 02:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_run_finished_at",
        "run",
        ["finished_at"],
        postgresql_where=sa.text("status = 'finished'"),
    )
    op.create_index(
        "ix_webhook_delivery_done",
        "webhook_delivery",
        ["finished_at"],
        postgresql_where=sa.text("status <> 'pending'"),
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_delivery_done", table_name="webhook_delivery")
    op.drop_index("ix_run_finished_at", table_name="run")
