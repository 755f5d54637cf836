"""MCP declarations (migration 0026, SPEC §4 "MCP declarations are pinned"): each tool's
pinned declaration and what is pending for it, and the acceptances of pending ones.
Declared on `tables.metadata` (which imports this module).

`mcp_declaration` belongs to no tenant: MCP servers and the tools taken from them are the
operator's, shared by every tenant (like `config_version`). `mcp_declaration_acceptance`
is append-only (a trigger refuses an update or a delete): who accepted which declaration
when, in the accepting admin's tenant — what that tenant's audit chain (SPEC §3.10) will
take its entries from."""

from __future__ import annotations

from sqlalchemy import (
    DDL,
    Column,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)
from sqlalchemy import event as sql_events
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from app.db.tables import _ts, metadata

#: "sha256:" and 64 hex digits.
HASH = String(80)

# One row per (server, the server's name for the tool), written at first sight.
mcp_declaration = Table(
    "mcp_declaration",
    metadata,
    Column("server", String(64), nullable=False),
    Column("tool", Text, nullable=False),
    # What the model sees (NULL until a first declaration is accepted).
    Column("pinned_hash", HASH),
    Column("pinned", JSONB),
    # A declaration seen since and held (a different one, or one refused at first sight).
    Column("pending_hash", HASH),
    Column("pending", JSONB),
    Column("held_for", ARRAY(Text), nullable=False, server_default="{}"),
    _ts("pending_since", nullable=True),
    # Bumped by every change: the compare-and-set of acceptances and pending changes.
    Column("version", Integer, nullable=False, server_default="1"),
    _ts("first_seen_at"),
    _ts("changed_at"),
    PrimaryKeyConstraint("server", "tool"),
)

mcp_declaration_acceptance = Table(
    "mcp_declaration_acceptance",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("server", String(64), nullable=False),
    Column("tool", Text, nullable=False),
    # The operator's name of the tool the admin accepted it through.
    Column("tool_name", String(64), nullable=False),
    Column("declaration_hash", HASH, nullable=False),
    Column("previous_hash", HASH),
    Column("declaration", JSONB, nullable=False),
    Column("accepted_by", String(200), nullable=False),
    _ts("accepted_at"),
    PrimaryKeyConstraint("tenant_id", "id"),
)

#: Acceptances are a record: never changed, never removed. Migration 0026 creates the
#: same function and trigger.
APPEND_ONLY_FUNCTION = DDL("""\
CREATE FUNCTION mcp_declaration_acceptance_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'check_violation',
        MESSAGE = 'an acceptance of an MCP declaration is never changed or removed';
END
$$""")
APPEND_ONLY_TRIGGER = DDL("""\
CREATE TRIGGER mcp_declaration_acceptance_kept BEFORE UPDATE OR DELETE
ON mcp_declaration_acceptance FOR EACH ROW EXECUTE FUNCTION mcp_declaration_acceptance_kept()""")
sql_events.listen(metadata, "after_create", APPEND_ONLY_FUNCTION)
sql_events.listen(metadata, "after_create", APPEND_ONLY_TRIGGER)
