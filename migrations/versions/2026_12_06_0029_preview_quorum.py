"""`preview.approvals_required` and `preview.approvals`: a tool may need several distinct
approvers (SPEC §3.3 quorum); a preview keeps who approved it, and when, in order.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-06 04:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Constant defaults: no table rewrite.
    op.add_column(
        "preview",
        sa.Column("approvals_required", sa.Integer(), nullable=False, server_default="1"),
    )
    op.add_column(
        "preview",
        sa.Column(
            "approvals",
            postgresql.JSONB(),
            nullable=False,
            server_default=sa.text("'[]'::jsonb"),
        ),
    )
    # A preview approved before this had one approver: the decision's who and when.
    op.execute(
        "UPDATE preview SET approvals = jsonb_build_array("
        "jsonb_build_object('by', decided_by, 'at', to_jsonb(decided_at))) "
        "WHERE decided_by IS NOT NULL AND decided_at IS NOT NULL AND status <> 'rejected'"
    )


def downgrade() -> None:
    op.drop_column("preview", "approvals")
    op.drop_column("preview", "approvals_required")
