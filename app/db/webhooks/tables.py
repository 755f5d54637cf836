"""The webhook tables (SPEC §3.8): a tenant's endpoints, and the outbox of deliveries that
a trigger on `event` fills in the event's own transaction. Declared on `tables.metadata`
(which imports this module), with the same rule: `tenant_id` leads every key and index
but the senders' queue of due deliveries."""

from __future__ import annotations

from sqlalchemy import (
    DDL,
    Column,
    ForeignKeyConstraint,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    text,
)
from sqlalchemy import event as sql_events
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from app.db.tables import _ts, metadata

# A tenant's webhook endpoints (SPEC §3.8). The secret is kept as is: it is the HMAC key.
# During a rotation the previous secret signs too, until `previous_secret_expires_at`.
webhook_endpoint = Table(
    "webhook_endpoint",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("url", Text, nullable=False),
    Column("events", ARRAY(Text), nullable=False),
    Column("secret", Text, nullable=False),
    Column("previous_secret", Text),
    _ts("previous_secret_expires_at", nullable=True),
    _ts("created_at"),
    Column("created_by", String(200), nullable=False),
    _ts("disabled_at", nullable=True),
    Column("disabled_reason", Text),
    PrimaryKeyConstraint("tenant_id", "id"),
    Index("ix_webhook_endpoint_tenant_created", "tenant_id", "created_at", "id"),
)

# The outbox: one row per (endpoint, event), written by the trigger below in the event's
# own transaction; `id` is the `webhook-id`, the same on every attempt.
webhook_delivery = Table(
    "webhook_delivery",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("endpoint_id", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("type", String(64), nullable=False),
    Column("status", String(16), nullable=False),  # pending | succeeded | failed | abandoned
    Column("attempts", Integer, nullable=False, server_default="0"),
    # When a sender may claim it next: due, or the end of the current sender's lease.
    _ts("next_attempt_at"),
    Column("claim_token", String(64)),
    # Each attempt: {at, status_code, latency_ms, error}.
    Column("attempts_log", JSONB, nullable=False, server_default="[]"),
    _ts("created_at"),
    _ts("finished_at", nullable=True),
    PrimaryKeyConstraint("tenant_id", "id"),
    ForeignKeyConstraint(
        ["tenant_id", "endpoint_id"],
        ["webhook_endpoint.tenant_id", "webhook_endpoint.id"],
        ondelete="CASCADE",
    ),
    Index("ix_webhook_delivery_tenant_endpoint_created", "tenant_id", "endpoint_id", "created_at"),
    # Per-run order: a delivery waits for the earlier pending ones of its run and endpoint.
    Index(
        "ix_webhook_delivery_pending_run",
        "tenant_id",
        "endpoint_id",
        "run_id",
        "seq",
        postgresql_where=text("status = 'pending'"),
    ),
    # The senders' queue, whatever the tenant.
    Index(
        "ix_webhook_delivery_due",
        "next_attempt_at",
        postgresql_where=text("status = 'pending'"),
    ),
    # Deliveries being sent (claimed, lease running), per endpoint: the claim's cap on
    # what one endpoint may hold of the senders (migration 0014).
    Index(
        "ix_webhook_delivery_claimed",
        "tenant_id",
        "endpoint_id",
        "next_attempt_at",
        postgresql_where=text("status = 'pending' AND claim_token IS NOT NULL"),
    ),
    # Retention: done deliveries by age, whatever the tenant (migration 0013).
    Index(
        "ix_webhook_delivery_done",
        "finished_at",
        postgresql_where=text("status <> 'pending'"),
    ),
)

#: The class of the advisory locks that order a tenant's event writes against changes to
#: its endpoints: each event statement takes the tenant's shared, a registration or a
#: removal takes it exclusively (`webhooks_repo.lock_endpoints`).
ENDPOINTS_LOCK = 2003331889

#: The transactional outbox: every statement that inserts events (a step's write, a claim,
#: a creation, a decision) also writes their deliveries, in its own transaction and with
#: no extra round trip; a tenant without endpoints costs a shared lock and one index probe
#: per statement. The lock comes first, and the insert's own snapshot after it: the insert
#: sees every endpoint whose registration answered before this transaction commits, and
#: no removed endpoint (migration 0014 made it so; 0012 created the trigger). A row holds
#: one write's events (migration 0021): each is matched to the endpoints on its own.
WEBHOOK_OUTBOX_FUNCTION = DDL(f"""\
CREATE FUNCTION webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared({ENDPOINTS_LOCK}, hashtext(t.tenant_id))
    FROM (SELECT DISTINCT tenant_id FROM added ORDER BY tenant_id) t;
    INSERT INTO webhook_delivery
        (tenant_id, id, endpoint_id, run_id, seq, type, status, next_attempt_at, created_at)
    SELECT a.tenant_id, 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id,
           a.run_id, a.seq + e.ord - 1, e.item ->> 0, 'pending', now(), now()
    FROM added a
    CROSS JOIN LATERAL json_array_elements(a.events) WITH ORDINALITY AS e(item, ord)
    JOIN webhook_endpoint w
      ON w.tenant_id = a.tenant_id AND e.item ->> 0 = ANY (w.events) AND w.disabled_at IS NULL;
    RETURN NULL;
END
$$""")
WEBHOOK_OUTBOX_TRIGGER = DDL("""\
CREATE TRIGGER event_webhook_outbox AFTER INSERT ON event
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION webhook_outbox()""")
sql_events.listen(metadata, "after_create", WEBHOOK_OUTBOX_FUNCTION)
sql_events.listen(metadata, "after_create", WEBHOOK_OUTBOX_TRIGGER)
