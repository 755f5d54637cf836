"""API keys managed over HTTP: a name, a non-secret prefix, who made and revoked a key,
and when it was last used.

Keys made before this revision are named after their subject; their prefix stays NULL
(only the key's hash was ever stored).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("api_key", sa.Column("name", sa.String(length=100), nullable=True))
    op.execute("UPDATE api_key SET name = left(subject, 100)")
    op.alter_column("api_key", "name", nullable=False)
    op.add_column("api_key", sa.Column("prefix", sa.String(length=16), nullable=True))
    op.add_column("api_key", sa.Column("created_by", sa.String(length=200), nullable=True))
    op.add_column("api_key", sa.Column("revoked_by", sa.String(length=200), nullable=True))
    op.add_column("api_key", sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    for column in ("last_used_at", "revoked_by", "created_by", "prefix", "name"):
        op.drop_column("api_key", column)
