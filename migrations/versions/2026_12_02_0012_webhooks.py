"""Webhooks: endpoints, and the outbox of deliveries a trigger on `event` writes.

Every statement that inserts events also writes the deliveries of the endpoints that
subscribed to them, in the same transaction (a statement-level trigger over the inserted
rows), so no path that writes events can forget them and a step pays no extra round trip.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OUTBOX_FUNCTION = """\
CREATE FUNCTION webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_delivery
        (tenant_id, id, endpoint_id, run_id, seq, type, status, next_attempt_at, created_at)
    SELECT a.tenant_id, 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id,
           a.run_id, a.seq, a.type, 'pending', now(), now()
    FROM added a
    JOIN webhook_endpoint w
      ON w.tenant_id = a.tenant_id AND a.type = ANY (w.events) AND w.disabled_at IS NULL;
    RETURN NULL;
END
$$"""
OUTBOX_TRIGGER = """\
CREATE TRIGGER event_webhook_outbox AFTER INSERT ON event
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION webhook_outbox()"""


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "webhook_endpoint",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("events", ARRAY(sa.Text()), nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("previous_secret", sa.Text()),
        _ts("previous_secret_expires_at", nullable=True),
        _ts("created_at"),
        sa.Column("created_by", sa.String(200), nullable=False),
        _ts("disabled_at", nullable=True),
        sa.Column("disabled_reason", sa.Text()),
        sa.PrimaryKeyConstraint("tenant_id", "id", name="pk_webhook_endpoint"),
    )
    op.create_index(
        "ix_webhook_endpoint_tenant_created", "webhook_endpoint", ["tenant_id", "created_at", "id"]
    )
    op.create_table(
        "webhook_delivery",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("endpoint_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        _ts("next_attempt_at"),
        sa.Column("claim_token", sa.String(64)),
        sa.Column("attempts_log", JSONB(), nullable=False, server_default="[]"),
        _ts("created_at"),
        _ts("finished_at", nullable=True),
        sa.PrimaryKeyConstraint("tenant_id", "id", name="pk_webhook_delivery"),
        sa.ForeignKeyConstraint(
            ["tenant_id", "endpoint_id"],
            ["webhook_endpoint.tenant_id", "webhook_endpoint.id"],
            name="fk_webhook_delivery_tenant_id_endpoint_id_webhook_endpoint",
            ondelete="CASCADE",
        ),
    )
    op.create_index(
        "ix_webhook_delivery_tenant_endpoint_created",
        "webhook_delivery",
        ["tenant_id", "endpoint_id", "created_at"],
    )
    op.create_index(
        "ix_webhook_delivery_pending_run",
        "webhook_delivery",
        ["tenant_id", "endpoint_id", "run_id", "seq"],
        postgresql_where=sa.text("status = 'pending'"),
    )
    op.create_index(
        "ix_webhook_delivery_due",
        "webhook_delivery",
        ["next_attempt_at"],
        postgresql_where=sa.text("status = 'pending'"),
    )
    op.execute(OUTBOX_FUNCTION)
    op.execute(OUTBOX_TRIGGER)


def downgrade() -> None:
    op.execute("DROP TRIGGER event_webhook_outbox ON event")
    op.execute("DROP FUNCTION webhook_outbox()")
    op.drop_table("webhook_delivery")
    op.drop_table("webhook_endpoint")
