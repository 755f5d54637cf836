"""Webhook endpoints ordered against event writes, a cap per endpoint on the senders, and
a running total of each tenant's cost per day.

- The outbox trigger first takes the tenant's shared advisory lock, which a registration
  or a removal of an endpoint takes exclusively: an event committed after a
  registration's answer always has its delivery, and no event write meets an endpoint
  removed under it.
- An index over the deliveries being sent, per endpoint: the senders' claim counts them
  to keep one endpoint from holding all of a process's sending slots.
- `tenant_day_cost`, kept by a trigger on the step that finishes a run: the
  `daily_cost_usd` quota reads one row and the runs still going, not the day's runs.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OUTBOX_INSERT = """\
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
OUTBOX_LOCKED = f"""\
CREATE OR REPLACE FUNCTION webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(2003331889, hashtext(t.tenant_id))
    FROM (SELECT DISTINCT tenant_id FROM added ORDER BY tenant_id) t;
{_OUTBOX_INSERT}"""
OUTBOX_UNLOCKED = f"""\
CREATE OR REPLACE FUNCTION webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
{_OUTBOX_INSERT}"""

DAY_COST_FUNCTION = """\
CREATE FUNCTION run_day_cost() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_day_cost AS c (tenant_id, day, cost_usd)
    VALUES (NEW.tenant_id, (NEW.created_at AT TIME ZONE 'UTC')::date, NEW.cost_usd)
    ON CONFLICT (tenant_id, day) DO UPDATE SET cost_usd = c.cost_usd + excluded.cost_usd;
    RETURN NULL;
END
$$"""
DAY_COST_TRIGGER = """\
CREATE TRIGGER run_finished_day_cost AFTER UPDATE OF status ON run FOR EACH ROW
WHEN (OLD.status <> 'finished' AND NEW.status = 'finished' AND NEW.cost_usd > 0)
EXECUTE FUNCTION run_day_cost()"""

# What the runs finished before this migration cost, by tenant and day.
BACKFILL = """\
INSERT INTO tenant_day_cost (tenant_id, day, cost_usd)
SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, sum(cost_usd)
FROM run WHERE status = 'finished' AND cost_usd > 0
  AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
GROUP BY 1, 2"""


def upgrade() -> None:
    op.execute(OUTBOX_LOCKED)
    op.create_index(
        "ix_webhook_delivery_claimed",
        "webhook_delivery",
        ["tenant_id", "endpoint_id", "next_attempt_at"],
        postgresql_where=sa.text("status = 'pending' AND claim_token IS NOT NULL"),
    )
    op.create_table(
        "tenant_day_cost",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("cost_usd", sa.Numeric(18, 8), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "day", name=op.f("pk_tenant_day_cost")),
    )
    op.execute(DAY_COST_FUNCTION)
    op.execute(DAY_COST_TRIGGER)
    op.execute(BACKFILL)


def downgrade() -> None:
    op.execute("DROP TRIGGER run_finished_day_cost ON run")
    op.execute("DROP FUNCTION run_day_cost()")
    op.drop_table("tenant_day_cost")
    op.drop_index("ix_webhook_delivery_claimed", table_name="webhook_delivery")
    op.execute(OUTBOX_UNLOCKED)
