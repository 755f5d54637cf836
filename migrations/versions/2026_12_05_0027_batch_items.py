"""`batch_items`: the elements of a statement's array of JSON rows (the batch of step writes,
the runs made), declared at 10 rows. Postgres guesses `unnest` of an array from the array
itself when it plans for the values at hand, and at 10 when it plans once for any; the
plans then differ in cost, so a connection plans the batch (nine CTEs) again on every
execution. `jsonb_to_recordset` is always guessed at 100 rows, at which a lookup by key
per write looked dearer than walking every active run. A set-returning SQL function that
is not inlined (VOLATILE) is planned at its declared ROWS whatever the array.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-05 17:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE FUNCTION batch_items(items jsonb[]) RETURNS SETOF jsonb "
        "LANGUAGE sql VOLATILE ROWS 10 AS 'SELECT unnest(items)'"
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION batch_items(jsonb[])")
