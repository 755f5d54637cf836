"""People signed in to the console through the identity provider (SPEC §3.9, migration
0032): a sign-in under way (`console_login`, by its `state`, before anyone is known: no
tenant) and a signed-in person's session (`console_session`, looked up by its cookie's
hash, whatever the tenant, as an API key is). Neither keeps a token: a login keeps its
PKCE verifier and nonce, a session the principal its token named and when it expires.
Declared on `tables.metadata` (which imports this module)."""

from __future__ import annotations

from sqlalchemy import Column, Index, PrimaryKeyConstraint, String, Table, Text
from sqlalchemy.dialects.postgresql import ARRAY

from app.db.tables import _ts, metadata

console_login = Table(
    "console_login",
    metadata,
    Column("state_hash", String(80), nullable=False),
    Column("verifier", String(128), nullable=False),
    Column("nonce", String(64), nullable=False),
    # The browser that began it (a cookie's hash): only that browser may finish it.
    Column("browser_hash", String(80), nullable=False),
    Column("next_path", Text, nullable=False),
    _ts("expires_at"),
    PrimaryKeyConstraint("state_hash"),
)

console_session = Table(
    "console_session",
    metadata,
    Column("id_hash", String(80), nullable=False),
    Column("tenant_id", String(64), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("roles", ARRAY(Text), nullable=False),
    Column("scopes", ARRAY(Text), nullable=True),  # NULL: bounded by its roles only
    Column("name", String(200), nullable=True),  # the id token's name or email, to show
    Column("csrf_token", String(64), nullable=False),
    _ts("created_at"),
    _ts("expires_at"),
    PrimaryKeyConstraint("id_hash"),
    Index("ix_console_session_expires_at", "expires_at"),
)
