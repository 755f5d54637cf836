"""Consistent snapshots: a snapshot run keeps the database snapshot of its creation
(`run.read_snapshot`), and every version of every technology is kept in
`technology_version`, written by a trigger on `technology` in the changing transaction.
The technologies that exist now get their current version as history, visible to every
snapshot taken after this migration.

Revision ID: 0016
Revises: 0014
Create Date: 2026-12-03 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HISTORY_FUNCTION = """\
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
$$"""
HISTORY_TRIGGER = """\
CREATE TRIGGER technology_history AFTER INSERT OR UPDATE OR DELETE ON technology
FOR EACH ROW EXECUTE FUNCTION technology_history()"""

BACKFILL = """\
INSERT INTO technology_version (tenant_id, id, version, name, category, ring, description,
                                updated_at)
SELECT tenant_id, id, version, name, category, ring, description, updated_at FROM technology"""


def upgrade() -> None:
    op.add_column("run", sa.Column("read_snapshot", sa.Text(), nullable=True))
    op.create_index(
        "ix_run_open_snapshot",
        "run",
        ["tenant_id"],
        postgresql_where=sa.text("read_snapshot IS NOT NULL AND status <> 'finished'"),
    )
    op.create_table(
        "technology_version",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("category", sa.String(100), nullable=False),
        sa.Column("ring", sa.String(16), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False, server_default="false"),
        sa.Column(
            "xid",
            sa.BigInteger(),
            nullable=False,
            server_default=sa.text("(pg_current_xact_id()::text)::bigint"),
        ),
        sa.Column(
            "written_at",
            sa.DateTime(timezone=True),
            nullable=False,
            server_default=sa.text("now()"),
        ),
        sa.PrimaryKeyConstraint("tenant_id", "id", "version", name=op.f("pk_technology_version")),
    )
    op.execute(BACKFILL)
    op.execute(HISTORY_FUNCTION)
    op.execute(HISTORY_TRIGGER)


def downgrade() -> None:
    op.execute("DROP TRIGGER technology_history ON technology")
    op.execute("DROP FUNCTION technology_history()")
    op.drop_table("technology_version")
    op.drop_index("ix_run_open_snapshot", table_name="run")
    op.drop_column("run", "read_snapshot")
