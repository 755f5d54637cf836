"""MCP declarations are pinned: `mcp_declaration` keeps each MCP tool's pinned declaration
(per server and the server's name for the tool; the operator's, of no tenant) and the one
pending an admin's acceptance; `mcp_declaration_acceptance` records every acceptance, in
the accepting admin's tenant, and a trigger keeps it append-only.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-04 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY_FUNCTION = """\
CREATE FUNCTION mcp_declaration_acceptance_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'check_violation',
        MESSAGE = 'an acceptance of an MCP declaration is never changed or removed';
END
$$"""
APPEND_ONLY_TRIGGER = """\
CREATE TRIGGER mcp_declaration_acceptance_kept BEFORE UPDATE OR DELETE
ON mcp_declaration_acceptance FOR EACH ROW EXECUTE FUNCTION mcp_declaration_acceptance_kept()"""


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "mcp_declaration",
        sa.Column("server", sa.String(64), nullable=False),
        sa.Column("tool", sa.Text(), nullable=False),
        sa.Column("pinned_hash", sa.String(80)),
        sa.Column("pinned", JSONB()),
        sa.Column("pending_hash", sa.String(80)),
        sa.Column("pending", JSONB()),
        sa.Column("held_for", ARRAY(sa.Text()), nullable=False, server_default="{}"),
        _ts("pending_since", nullable=True),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
        _ts("first_seen_at"),
        _ts("changed_at"),
        sa.PrimaryKeyConstraint("server", "tool", name=op.f("pk_mcp_declaration")),
    )
    op.create_table(
        "mcp_declaration_acceptance",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("server", sa.String(64), nullable=False),
        sa.Column("tool", sa.Text(), nullable=False),
        sa.Column("tool_name", sa.String(64), nullable=False),
        sa.Column("declaration_hash", sa.String(80), nullable=False),
        sa.Column("previous_hash", sa.String(80)),
        sa.Column("declaration", JSONB(), nullable=False),
        sa.Column("accepted_by", sa.String(200), nullable=False),
        _ts("accepted_at"),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_mcp_declaration_acceptance")),
    )
    op.execute(APPEND_ONLY_FUNCTION)
    op.execute(APPEND_ONLY_TRIGGER)


def downgrade() -> None:
    op.drop_table("mcp_declaration_acceptance")
    op.execute("DROP FUNCTION mcp_declaration_acceptance_kept()")
    op.drop_table("mcp_declaration")
