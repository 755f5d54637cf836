"""The audit chain (SPEC §3.10, migration 0031): every tenant's entries, and each chain's
head, the row an append locks so that a tenant's entries are chained one after another.
Declared on `tables.metadata` (which imports this module); retention never deletes them."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, PrimaryKeyConstraint, String, Table, Text
from sqlalchemy.dialects.postgresql import JSONB

from app.db.tables import _ts, metadata

audit_entry = Table(
    "audit_entry",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("seq", BigInteger, nullable=False),
    _ts("at"),
    Column("actor", String(200), nullable=False),
    Column("action", String(64), nullable=False),
    Column("target", Text, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("prev_hash", String(80), nullable=False),
    Column("hash", String(80), nullable=False),
    PrimaryKeyConstraint("tenant_id", "seq"),
)

# The last entry of each tenant's chain: its seq and hash.
audit_head = Table(
    "audit_head",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("hash", String(80), nullable=False),
    PrimaryKeyConstraint("tenant_id"),
)
