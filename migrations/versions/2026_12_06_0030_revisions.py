"""An approver's revision of a call's arguments (SPEC §3.3 revise): the call keeps the
model's own arguments beside the revised ones, and who revised, when and why; the preview
made from a revision says who made it and why.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable, no default: no table rewrite.
    op.add_column("tool_call", sa.Column("proposed_arguments", postgresql.JSONB()))
    op.add_column("tool_call", sa.Column("revision", postgresql.JSONB()))
    op.add_column("preview", sa.Column("revised_by", sa.String(200)))
    op.add_column("preview", sa.Column("revision_reason", sa.Text()))


def downgrade() -> None:
    op.drop_column("preview", "revision_reason")
    op.drop_column("preview", "revised_by")
    op.drop_column("tool_call", "revision")
    op.drop_column("tool_call", "proposed_arguments")
