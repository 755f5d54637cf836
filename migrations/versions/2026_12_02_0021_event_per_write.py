"""One `event` row per write, not per event (docs/performance.md, "What a step writes to
the WAL"):

A step, a claim, a creation or a decision writes its events together, two on average (a
turn and its call's proposal, a call's start and outcome). Each event had a row of its
own: a heap tuple with the tenant, run id, time and transaction id again, and an entry in
both of the table's indexes. A row now holds one write's events, `[[type, data], ...]` in
`events`, with seqs `seq` to `last_seq`: half the rows and index entries, and the webhook
outbox trigger sees half the rows. `events` is `json`, not `jsonb`: it is only unpacked
and sent, and its text is a quarter smaller.

The key is (tenant_id, run_id, last_seq): "a run's events after seq s" is a range scan
over it (`last_seq > s`), and the row holding seq s is the first with `last_seq >= s`.
The existing events become rows of one event each (seq = last_seq), in a table built anew
(see upgrade).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02 16:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OUTBOX = """\
CREATE OR REPLACE FUNCTION webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(2003331889, hashtext(t.tenant_id))
    FROM (SELECT DISTINCT tenant_id FROM added ORDER BY tenant_id) t;
    INSERT INTO webhook_delivery
        (tenant_id, id, endpoint_id, run_id, seq, type, status, next_attempt_at, created_at)
    SELECT a.tenant_id, 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id,
           a.run_id, {seq}, {type}, 'pending', now(), now()
    FROM added a{items}
    JOIN webhook_endpoint w
      ON w.tenant_id = a.tenant_id AND {type} = ANY (w.events) AND w.disabled_at IS NULL;
    RETURN NULL;
END
$$"""
OUTBOX_PER_WRITE = _OUTBOX.format(
    seq="a.seq + e.ord - 1",
    type="e.item ->> 0",
    items="\n    CROSS JOIN LATERAL json_array_elements(a.events) WITH ORDINALITY AS e(item, ord)",
)
OUTBOX_PER_EVENT = _OUTBOX.format(seq="a.seq", type="a.type", items="")


_TRIGGER = """\
CREATE TRIGGER event_webhook_outbox AFTER INSERT ON event
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION webhook_outbox()"""


def upgrade() -> None:
    # The table is built anew and filled in one pass, rather than updated in place: an
    # update of every row would leave the table twice its size until a VACUUM FULL, and
    # maintain three indexes row by row. Writers wait from the first statement on, so no
    # event is written to the old table after it is read.
    op.execute("LOCK TABLE event IN EXCLUSIVE MODE")
    op.execute("ALTER TABLE event RENAME TO event_0020")
    for index in ("pk_event", "ix_event_tenant_order", "ix_event_tenant_legacy_order"):
        op.execute(f"ALTER INDEX {index} RENAME TO {index}_0020")
    op.create_table(
        "event",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "xid",
            sa.BigInteger(),
            nullable=False,
            server_default=sa.text("(pg_current_xact_id()::text)::bigint"),
        ),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("events", sa.dialects.postgresql.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id", "run_id"],
            ["run.tenant_id", "run.id"],
            name="fk_event_tenant_id_run_id_run",
        ),
    )
    op.execute(
        "INSERT INTO event (tenant_id, run_id, seq, at, xid, last_seq, events) "
        "SELECT tenant_id, run_id, seq, at, xid, seq, "
        "json_build_array(json_build_array(type, data)) FROM event_0020"
    )
    op.create_primary_key("pk_event", "event", ["tenant_id", "run_id", "last_seq"])
    op.create_index("ix_event_tenant_order", "event", ["tenant_id", "xid"])
    op.create_index(
        "ix_event_tenant_legacy_order",
        "event",
        ["tenant_id", "run_id", "last_seq"],
        postgresql_where=sa.text("xid = 0"),
    )
    op.drop_table("event_0020")
    op.execute(OUTBOX_PER_WRITE)
    op.execute(_TRIGGER)
    # The feed's plans read the new table's statistics; autovacuum would take a while.
    op.execute("ANALYZE event")


def downgrade() -> None:
    op.add_column("event", sa.Column("type", sa.String(64)))
    op.add_column("event", sa.Column("data", sa.dialects.postgresql.JSONB()))
    # Every event but a row's last becomes a row of its own; the row keeps its last.
    op.execute(
        "INSERT INTO event (tenant_id, run_id, seq, last_seq, at, xid, events, type, data) "
        "SELECT e.tenant_id, e.run_id, e.seq + i.ord - 1, e.seq + i.ord - 1, e.at, e.xid, "
        "'[]', i.item ->> 0, i.item -> 1 "
        "FROM event e, json_array_elements(e.events) WITH ORDINALITY AS i(item, ord) "
        "WHERE i.ord < json_array_length(e.events)"
    )
    op.execute(
        "UPDATE event SET seq = last_seq, type = events -> -1 ->> 0, data = events -> -1 -> 1 "
        "WHERE type IS NULL"
    )
    op.alter_column("event", "type", nullable=False)
    op.alter_column("event", "data", nullable=False)
    op.drop_index("ix_event_tenant_legacy_order", table_name="event")
    op.drop_constraint("pk_event", "event", type_="primary")
    op.create_primary_key("pk_event", "event", ["tenant_id", "run_id", "seq"])
    op.create_index(
        "ix_event_tenant_legacy_order",
        "event",
        ["tenant_id", "run_id", "seq"],
        postgresql_where=sa.text("xid = 0"),
    )
    op.drop_column("event", "last_seq")
    op.drop_column("event", "events")
    op.execute(OUTBOX_PER_EVENT)
