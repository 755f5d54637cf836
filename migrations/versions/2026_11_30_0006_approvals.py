"""Approvals: previews (immutable proposals an approver decides on), the operations ledger
of the built-in write tool, and the indexes the expiry sweep reads.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 08:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "preview",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("call_row_id", sa.String(length=64), nullable=False),
        sa.Column("call_id", sa.String(length=200), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("tool", sa.String(length=200), nullable=False),
        sa.Column("arguments", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("args_hash", sa.String(length=80), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("impact", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("cost_usd", sa.Numeric(precision=18, scale=8), nullable=False),
        sa.Column("resource_version", sa.String(length=200), nullable=True),
        sa.Column("content_hash", sa.String(length=80), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("requested_by", sa.String(length=200), nullable=False),
        sa.Column("decided_by", sa.String(length=200), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("committed_by", sa.String(length=200), nullable=True),
        sa.Column("commit_key", sa.String(length=255), nullable=True),
        sa.Column("supersedes", sa.String(length=64), nullable=True),
        sa.Column("superseded_by", sa.String(length=64), nullable=True),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        _ts("expires_at"),
        _ts("created_at"),
        _ts("decided_at", nullable=True),
        _ts("committed_at", nullable=True),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_preview")),
    )
    op.create_index(
        "ix_preview_tenant_status_created",
        "preview",
        ["tenant_id", "status", "created_at", "id"],
    )
    op.create_index("ix_preview_tenant_created", "preview", ["tenant_id", "created_at", "id"])
    op.create_index("ix_preview_tenant_run", "preview", ["tenant_id", "run_id"])
    op.create_index(
        "ix_preview_open_expiry",
        "preview",
        ["expires_at"],
        postgresql_where=sa.text("status IN ('pending', 'approved')"),
    )
    op.create_index(
        "ix_run_awaiting_deadline",
        "run",
        ["deadline_at"],
        postgresql_where=sa.text("status = 'awaiting_approval'"),
    )
    op.create_table(
        "technology_operation",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("operation_id", sa.String(length=64), nullable=False),
        sa.Column("technology_id", sa.String(length=64), nullable=False),
        sa.Column("result", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("tenant_id", "operation_id", name=op.f("pk_technology_operation")),
    )


def downgrade() -> None:
    op.drop_table("technology_operation")
    op.drop_index("ix_run_awaiting_deadline", table_name="run")
    op.drop_table("preview")
