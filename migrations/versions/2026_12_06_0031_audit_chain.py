"""The audit chain (SPEC §3.10): `audit_entry`, every tenant's entries, each hashed over the
previous one's hash; `audit_head`, each chain's last seq and hash, which an append locks.
Retention never deletes from either.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-06 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_entry",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("data", postgresql.JSONB(), nullable=False),
        sa.Column("prev_hash", sa.String(80), nullable=False),
        sa.Column("hash", sa.String(80), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "seq", name=op.f("pk_audit_entry")),
    )
    op.create_table(
        "audit_head",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(80), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", name=op.f("pk_audit_head")),
    )


def downgrade() -> None:
    op.drop_table("audit_head")
    op.drop_table("audit_entry")
