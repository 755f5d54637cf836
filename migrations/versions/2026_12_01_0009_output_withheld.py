"""A call that took effect but whose output could not be kept says so.

A side effect whose 2xx answer breaks its output schema or size limit has succeeded: it
is recorded `succeeded` with `output_withheld`, never as a failure the model would retry.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 20:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "tool_call",
        sa.Column("output_withheld", sa.Boolean(), nullable=False, server_default="false"),
    )


def downgrade() -> None:
    op.drop_column("tool_call", "output_withheld")
