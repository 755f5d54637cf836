"""Pinned config versions: `config_version` keeps each version of an agent and its tools'
declarations by hash, and a run names the version it was created with (`config_hash`),
which it keeps until it ends. Runs created before have none and are stepped with the
current config, as before.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "config_version",
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("document", JSONB(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("hash", name=op.f("pk_config_version")),
    )
    op.add_column("run", sa.Column("config_hash", sa.String(64)))


def downgrade() -> None:
    op.drop_column("run", "config_hash")
    op.drop_table("config_version")
