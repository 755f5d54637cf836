"""Less WAL a step (`bench/wal_breakdown.py` measures it; docs/performance.md, "What a step
writes to the WAL"):

- `tool_call` is filled to 70 % by inserts: a call's row grows about threefold when its
  outcome is written (its output), and the outcome's update is HOT only when the new
  version fits on the row's page. At 100 % about a third of them moved to another page,
  writing the whole row again, a lock record, and an entry in each of the table's indexes.
  A row's final size bounds what the page holds either way, so the table grows little.
- `run` is filled to 80 %: every step rewrites its run's row, and with many runs in flight
  on a full page a step's update found no room and moved (the whole row, and an entry in
  each of the run's indexes), though it changed no indexed column. The update that
  finishes a run changes `status` and is never HOT; the room makes the others so.
- `idempotency_key` is filled to 20 %: a key's row grows about sixfold when the answer it
  replays is stored (a run's answer is 1-1.5 KB, the claim 250 B), and at 100 % more than
  half of those updates moved to another page (the whole row again, a lock record, an
  entry in both indexes). The rows fill their pages once answered.
- `ix_run_tenant_parent` holds child runs only (`parent_run_id IS NOT NULL`): every query
  that uses it asks for the children of a given run, and a root run (most of them) wrote
  two entries of NULL into it, at its creation and at its finishing update.
- `tool_call`'s unique constraint on (tenant_id, operation_id) goes: no query looks a call
  up by its operation id, and the id is a hash of the call's own unique key (run, step,
  call id; and its preview for an approved execution: `app/domain/ids.py`), which
  `uq_tool_call_tenant_id_run_id_step_call_id` enforces already. It cost every call an
  index entry, and made the outcome of an approved call (which takes a new operation id)
  a non-HOT update.
- The tenant feed's index `ix_event_tenant_order` is (tenant_id, xid), no longer
  (tenant_id, xid, run_id, seq): every event wrote the run id (37 bytes) into it a second
  time (the primary key has it). The feed sorts the few events of one transaction by
  run_id and seq itself (app/db/lifecycle/events.py); the events of one transaction share an
  index key, which B-tree deduplication stores once. Events written before migration 0008
  all have xid 0, one group as large as the tenant's history then: they get their own
  index in feed order, `ix_event_tenant_legacy_order` (tenant_id, run_id, seq) WHERE
  xid = 0, into which no later event writes.

A fillfactor applies to the pages filled from now on; existing pages are left as they are
(no rewrite of the table).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE tool_call SET (fillfactor = 70)")
    op.execute("ALTER TABLE run SET (fillfactor = 80)")
    op.execute("ALTER TABLE idempotency_key SET (fillfactor = 20)")
    op.drop_index("ix_run_tenant_parent", table_name="run")
    op.create_index(
        "ix_run_tenant_parent",
        "run",
        ["tenant_id", "parent_run_id"],
        postgresql_where=sa.text("parent_run_id IS NOT NULL"),
    )
    op.drop_constraint("uq_tool_call_tenant_id_operation_id", "tool_call", type_="unique")
    op.drop_index("ix_event_tenant_order", table_name="event")
    op.create_index("ix_event_tenant_order", "event", ["tenant_id", "xid"])
    op.create_index(
        "ix_event_tenant_legacy_order",
        "event",
        ["tenant_id", "run_id", "seq"],
        postgresql_where=sa.text("xid = 0"),
    )


def downgrade() -> None:
    op.drop_index("ix_event_tenant_legacy_order", table_name="event")
    op.drop_index("ix_event_tenant_order", table_name="event")
    op.create_index("ix_event_tenant_order", "event", ["tenant_id", "xid", "run_id", "seq"])
    op.create_unique_constraint(
        "uq_tool_call_tenant_id_operation_id", "tool_call", ["tenant_id", "operation_id"]
    )
    op.drop_index("ix_run_tenant_parent", table_name="run")
    op.create_index("ix_run_tenant_parent", "run", ["tenant_id", "parent_run_id"])
    op.execute("ALTER TABLE idempotency_key RESET (fillfactor)")
    op.execute("ALTER TABLE run RESET (fillfactor)")
    op.execute("ALTER TABLE tool_call RESET (fillfactor)")
