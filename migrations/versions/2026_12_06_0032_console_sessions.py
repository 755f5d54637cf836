"""The console's sign-in through the identity provider (SPEC §3.9): `console_login`, a
sign-in under way (its PKCE verifier and nonce, by its state's hash), and
`console_session`, a signed-in person's session (by its cookie's hash: the principal its
token named, a CSRF token, when it expires). No token is stored.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-06 05:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "console_login",
        sa.Column("state_hash", sa.String(80), nullable=False),
        sa.Column("verifier", sa.String(128), nullable=False),
        sa.Column("nonce", sa.String(64), nullable=False),
        sa.Column("browser_hash", sa.String(80), nullable=False),
        sa.Column("next_path", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("state_hash", name=op.f("pk_console_login")),
    )
    op.create_table(
        "console_session",
        sa.Column("id_hash", sa.String(80), nullable=False),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("roles", postgresql.ARRAY(sa.Text()), nullable=False),
        sa.Column("scopes", postgresql.ARRAY(sa.Text()), nullable=True),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id_hash", name=op.f("pk_console_session")),
    )
    op.create_index("ix_console_session_expires_at", "console_session", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_console_session_expires_at", table_name="console_session")
    op.drop_table("console_session")
    op.drop_table("console_login")
