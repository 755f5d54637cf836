"""The radar's history (migration 0016): every version of every technology, written by a
trigger on `technology` in the transaction that made it, so that a snapshot run reads a
technology as it stood when the run was created. Declared on `tables.metadata` (which
imports this module)."""

from __future__ import annotations

from sqlalchemy import (
    DDL,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    text,
)
from sqlalchemy import event as sql_events

from app.db.tables import _ts, metadata

# One row per (technology, version): what the row said from the commit of the transaction
# `xid` on. A snapshot read takes, per technology, the highest version whose `xid` the
# run's snapshot sees; a deletion leaves a tombstone (`deleted`) one version higher.
technology_version = Table(
    "technology_version",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("version", Integer, nullable=False),
    Column("name", String(200), nullable=False),
    Column("category", String(100), nullable=False),
    Column("ring", String(16), nullable=False),
    Column("description", Text, nullable=False),
    _ts("updated_at"),
    Column("deleted", Boolean, nullable=False, server_default="false"),
    # The writing transaction's id, what a snapshot's visibility is decided on.
    Column(
        "xid",
        BigInteger,
        nullable=False,
        server_default=text("(pg_current_xact_id()::text)::bigint"),
    ),
    # When it was written, on the database's clock: the purge's grace period.
    Column("written_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    PrimaryKeyConstraint("tenant_id", "id", "version"),
)

#: Every change of a technology (insert, update, delete) writes its version in the same
#: transaction, whoever makes it: the write tool, the seed, an operator's SQL. A change
#: that keeps the version would escape the commit's version check and the history both:
#: it is refused. Migration 0016 creates the same function and trigger.
HISTORY_FUNCTION = DDL("""\
CREATE FUNCTION technology_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO technology_version (tenant_id, id, version, name, category, ring,
                                        description, updated_at, deleted)
        VALUES (OLD.tenant_id, OLD.id, OLD.version + 1, OLD.name, OLD.category, OLD.ring,
                OLD.description, now(), true);
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF NEW IS NOT DISTINCT FROM OLD THEN
            RETURN NULL;
        END IF;
        IF NEW.version <= OLD.version THEN
            RAISE EXCEPTION USING ERRCODE = 'check_violation',
                MESSAGE = 'a change of technology ' || OLD.id || ' must raise its version';
        END IF;
    END IF;
    INSERT INTO technology_version (tenant_id, id, version, name, category, ring,
                                    description, updated_at)
    VALUES (NEW.tenant_id, NEW.id, NEW.version, NEW.name, NEW.category, NEW.ring,
            NEW.description, NEW.updated_at);
    RETURN NULL;
END
$$""")
HISTORY_TRIGGER = DDL("""\
CREATE TRIGGER technology_history AFTER INSERT OR UPDATE OR DELETE ON technology
FOR EACH ROW EXECUTE FUNCTION technology_history()""")
sql_events.listen(metadata, "after_create", HISTORY_FUNCTION)
sql_events.listen(metadata, "after_create", HISTORY_TRIGGER)
