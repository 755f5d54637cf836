"""Initial schema: keys, runs, turns, calls, events, idempotency keys, technologies.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 22:04:54.920641
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_key",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("key_hash", sa.String(length=80), nullable=False),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("roles", postgresql.ARRAY(sa.Text()), nullable=False),
        sa.Column("scopes", postgresql.ARRAY(sa.Text()), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_api_key")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_key_key_hash")),
    )
    op.create_table(
        "idempotency_key",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("fingerprint", sa.String(length=80), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("resource_id", sa.String(length=64), nullable=True),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_headers", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("response_body", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("claim_token", sa.String(length=64), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "key", name=op.f("pk_idempotency_key")),
    )
    op.create_index("ix_idempotency_key_expires", "idempotency_key", ["expires_at"], unique=False)
    op.create_table(
        "run",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("agent", sa.String(length=64), nullable=False),
        sa.Column("route", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("termination_reason", sa.String(length=32), nullable=True),
        sa.Column("error", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("input", sa.Text(), nullable=False),
        sa.Column("output", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("tools", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("limits", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("steps", sa.Integer(), server_default="0", nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column(
            "cost_usd", sa.Numeric(precision=18, scale=8), server_default="0", nullable=False
        ),
        sa.Column("tool_calls", sa.Integer(), server_default="0", nullable=False),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("script", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("model_calls", sa.Integer(), server_default="0", nullable=False),
        sa.Column("step_attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_source", sa.Integer(), server_default="1", nullable=False),
        sa.Column("step_failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("creator_scopes", postgresql.ARRAY(sa.Text()), nullable=True),
        sa.Column("parent_run_id", sa.String(length=64), nullable=True),
        sa.Column("root_run_id", sa.String(length=64), nullable=False),
        sa.Column("consistency", sa.String(length=16), server_default="latest", nullable=False),
        sa.Column("deadline_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("cancel_requested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_owner", sa.String(length=200), nullable=True),
        sa.Column("lease_token", sa.String(length=64), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("event_seq", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_run")),
    )
    op.create_index(
        "ix_run_runnable",
        "run",
        ["lease_expires_at"],
        unique=False,
        postgresql_where=sa.text("status IN ('queued', 'running')"),
    )
    op.create_index("ix_run_tenant_created", "run", ["tenant_id", "created_at", "id"], unique=False)
    op.create_index("ix_run_tenant_parent", "run", ["tenant_id", "parent_run_id"], unique=False)
    op.create_index(
        "ix_run_tenant_status_created",
        "run",
        ["tenant_id", "status", "created_at", "id"],
        unique=False,
    )
    op.create_table(
        "technology",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("category", sa.String(length=100), nullable=False),
        sa.Column("ring", sa.String(length=16), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_technology")),
        sa.UniqueConstraint("tenant_id", "name", name=op.f("uq_technology_tenant_id_name")),
    )
    op.create_table(
        "event",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("data", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id", "run_id"],
            ["run.tenant_id", "run.id"],
            name=op.f("fk_event_tenant_id_run_id_run"),
        ),
        sa.PrimaryKeyConstraint("tenant_id", "run_id", "seq", name=op.f("pk_event")),
    )
    op.create_table(
        "turn",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("route", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("instructions_hash", sa.String(length=80), nullable=False),
        sa.Column("tool_schema_hash", sa.String(length=80), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("rejection", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column(
            "extra_rejections",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default="[]",
            nullable=False,
        ),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column(
            "cost_usd", sa.Numeric(precision=18, scale=8), server_default="0", nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id", "run_id"],
            ["run.tenant_id", "run.id"],
            name=op.f("fk_turn_tenant_id_run_id_run"),
        ),
        sa.PrimaryKeyConstraint("tenant_id", "run_id", "step", name=op.f("pk_turn")),
    )
    op.create_table(
        "tool_call",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("call_id", sa.String(length=200), nullable=False),
        sa.Column("tool", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("arguments", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("args_hash", sa.String(length=80), nullable=False),
        sa.Column("operation_id", sa.String(length=64), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("error", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("ends_run", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("output", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("source_id", sa.String(length=32), nullable=True),
        sa.Column("observed_at", sa.String(length=64), nullable=True),
        sa.Column("source_version", sa.String(length=200), nullable=True),
        sa.Column("preview_id", sa.String(length=64), nullable=True),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id", "run_id", "step"],
            ["turn.tenant_id", "turn.run_id", "turn.step"],
            name=op.f("fk_tool_call_tenant_id_run_id_step_turn"),
        ),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_tool_call")),
        sa.UniqueConstraint(
            "tenant_id", "operation_id", name=op.f("uq_tool_call_tenant_id_operation_id")
        ),
        sa.UniqueConstraint(
            "tenant_id",
            "run_id",
            "step",
            "call_id",
            name=op.f("uq_tool_call_tenant_id_run_id_step_call_id"),
        ),
    )


def downgrade() -> None:
    op.drop_table("tool_call")
    op.drop_table("turn")
    op.drop_table("event")
    op.drop_table("technology")
    op.drop_index("ix_run_tenant_status_created", table_name="run")
    op.drop_index("ix_run_tenant_parent", table_name="run")
    op.drop_index("ix_run_tenant_created", table_name="run")
    op.drop_index(
        "ix_run_runnable",
        table_name="run",
        postgresql_where=sa.text("status IN ('queued', 'running')"),
    )
    op.drop_table("run")
    op.drop_index("ix_idempotency_key_expires", table_name="idempotency_key")
    op.drop_table("idempotency_key")
    op.drop_table("api_key")
