"""A turn's two hashes (its instructions' and its tool schemas') are kept as their 32
bytes (`bytea`), not as the 71 characters of `sha256:` and 64 hex digits: 78 bytes less
a turn row, of its WAL and of the table. The service reads and writes them as before
(`app.db.column_types.Sha256`). The table is rewritten once, under its lock.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-02 20:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("instructions_hash", "tool_schema_hash")


def upgrade() -> None:
    changes = ", ".join(
        f"ALTER COLUMN {c} TYPE bytea USING decode(substr({c}, 8), 'hex')" for c in _COLUMNS
    )
    op.execute(f"ALTER TABLE turn {changes}")


def downgrade() -> None:
    changes = ", ".join(
        f"ALTER COLUMN {c} TYPE varchar(80) USING 'sha256:' || encode({c}, 'hex')" for c in _COLUMNS
    )
    op.execute(f"ALTER TABLE turn {changes}")
