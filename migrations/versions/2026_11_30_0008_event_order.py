"""A tenant-wide order of events: the id of the transaction that wrote each one.

Events are read across runs in (xid, run_id, seq) order, and only below the oldest
transaction still running, so a reader that has seen an event never later finds an older
one committed: a gap-free cursor without a counter every step would have to lock.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 10:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing events take 0 (no table rewrite): they all come first, in (run_id, seq) order.
    op.add_column("event", sa.Column("xid", sa.BigInteger(), nullable=False, server_default="0"))
    op.alter_column(
        "event",
        "xid",
        server_default=sa.text("(pg_current_xact_id()::text)::bigint"),
    )
    op.create_index("ix_event_tenant_order", "event", ["tenant_id", "xid", "run_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_event_tenant_order", table_name="event")
    op.drop_column("event", "xid")
