"""The demo domain's tables: the tech radar's technologies, and the write tool's ledger of
operations. Declared on `tables.metadata` (which imports this module)."""

from __future__ import annotations

from sqlalchemy import Column, Integer, PrimaryKeyConstraint, String, Table, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB

from app.db.tables import _ts, metadata

technology = Table(
    "technology",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("name", String(200), nullable=False),
    Column("category", String(100), nullable=False),
    Column("ring", String(16), nullable=False),
    Column("description", Text, nullable=False),
    Column("version", Integer, nullable=False, server_default="1"),
    _ts("updated_at"),
    PrimaryKeyConstraint("tenant_id", "id"),
    UniqueConstraint("tenant_id", "name"),
)

# The write tool's ledger: a row per operation id, written with its change (made once).
technology_operation = Table(
    "technology_operation",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("operation_id", String(64), nullable=False),
    Column("technology_id", String(64), nullable=False),
    Column("result", JSONB, nullable=False),
    _ts("created_at"),
    PrimaryKeyConstraint("tenant_id", "operation_id"),
)
