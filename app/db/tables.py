"""Tables. `tenant_id` leads every key and index, except the API-key lookup by hash, the
driver's queue index over runnable runs, the purges of expired Idempotency-Keys and of
finished runs, the sweep of expired approvals and the webhook senders' queue of due
deliveries (the tenant is not known, or not relevant, there); `config_version` and
`mcp_declaration` (`mcp_tables.py`) hold the operator's, which belong to no tenant."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    Numeric,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSON, JSONB

from app.db.column_types import Sha256

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def _ts(name: str, nullable: bool = False) -> Column:
    return Column(name, DateTime(timezone=True), nullable=nullable)


api_key = Table(
    "api_key",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("key_hash", String(80), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("roles", ARRAY(Text), nullable=False),
    Column("scopes", ARRAY(Text), nullable=True),  # NULL: every scope
    _ts("created_at"),
    _ts("revoked_at", nullable=True),
    Column("name", String(100), nullable=False),
    # The key's first characters, to tell keys apart in a list; NULL for keys made before
    # it was kept (the key itself is never stored, so it cannot be filled in afterwards).
    Column("prefix", String(16), nullable=True),
    Column("created_by", String(200), nullable=True),  # NULL: made by the CLI
    Column("revoked_by", String(200), nullable=True),
    # On the database's clock, written at most once a minute per key (keys.TOUCH_EVERY_S).
    _ts("last_used_at", nullable=True),
    PrimaryKeyConstraint("tenant_id", "id"),
    UniqueConstraint("key_hash"),
)

#: A run's children are indexed; a root run (most of them) is not (migration 0020).
_CHILD = text("parent_run_id IS NOT NULL")

run = Table(
    "run",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("agent", String(64), nullable=False),
    Column("route", String(64), nullable=False),
    Column("status", String(32), nullable=False),
    Column("termination_reason", String(32)),
    Column("error", JSONB),
    Column("input", Text, nullable=False),
    Column("output", JSONB),
    Column("tools", JSONB, nullable=False),
    Column("limits", JSONB, nullable=False),
    Column("steps", Integer, nullable=False, server_default="0"),
    Column("input_tokens", BigInteger, nullable=False, server_default="0"),
    Column("output_tokens", BigInteger, nullable=False, server_default="0"),
    Column("cost_usd", Numeric(18, 8), nullable=False, server_default="0"),
    Column("tool_calls", Integer, nullable=False, server_default="0"),
    Column("metadata", JSONB),
    # Recorded model outcomes so far; the scripted model reads its next item here.
    Column("model_calls", Integer, nullable=False, server_default="0"),
    # Model attempts already made in the current step (reset when a turn is recorded).
    Column("step_attempts", Integer, nullable=False, server_default="0"),
    Column("next_source", Integer, nullable=False, server_default="1"),
    # Steps that failed unexpectedly in a row; past a few the run ends instead of looping.
    Column("step_failures", Integer, nullable=False, server_default="0"),
    Column("created_by", String(200), nullable=False),
    Column("creator_scopes", ARRAY(Text)),
    Column("parent_run_id", String(64)),
    Column("root_run_id", String(64), nullable=False),
    Column("consistency", String(16), nullable=False, server_default="latest"),
    # A snapshot run's reads: the database snapshot of its creating statement, as
    # `pg_current_snapshot()` spells it (NULL for a `latest` run). See history_tables.py.
    Column("read_snapshot", Text),
    _ts("deadline_at"),
    _ts("cancel_requested_at", nullable=True),
    Column("lease_owner", String(200)),
    # The W3C traceparent of the run's latest advance: the next one links to it.
    Column("trace_context", String(64)),
    Column("data_policy", ARRAY(Text)),  # tags every route the run uses must carry
    # The config version the run was created with (`config_version`), kept until it ends.
    Column("config_hash", String(64)),
    # Child runs (migration 0019): what the run has reserved for its unfinished children,
    # and what its finished descendants spent. Written by a child's creation and by the
    # trigger that settles a finishing child (lineage_tables.py), never by its own steps.
    Column("reserved_tokens", BigInteger, nullable=False, server_default="0"),
    Column("reserved_cost_usd", Numeric(18, 8), nullable=False, server_default="0"),
    Column("reserved_tool_calls", Integer, nullable=False, server_default="0"),
    Column("children_input_tokens", BigInteger, nullable=False, server_default="0"),
    Column("children_output_tokens", BigInteger, nullable=False, server_default="0"),
    Column("children_cost_usd", Numeric(18, 8), nullable=False, server_default="0"),
    Column("children_tool_calls", Integer, nullable=False, server_default="0"),
    # The finished run this one continues, and what it carries over from it (bounded).
    Column("continued_from", String(64)),
    Column("carry_over", JSONB),
    Column("lease_token", String(64)),
    _ts("lease_expires_at", nullable=True),
    Column("version", Integer, nullable=False, server_default="1"),
    Column("event_seq", Integer, nullable=False, server_default="0"),
    _ts("created_at"),
    _ts("updated_at"),
    _ts("finished_at", nullable=True),
    PrimaryKeyConstraint("tenant_id", "id"),
    Index("ix_run_tenant_created", "tenant_id", "created_at", "id"),
    Index("ix_run_tenant_status_created", "tenant_id", "status", "created_at", "id"),
    Index("ix_run_tenant_parent", "tenant_id", "parent_run_id", postgresql_where=_CHILD),
    # The driver's queue: runs that may need a stepper, oldest lease first, a run without
    # a lease first of all; in the claim query's own order (see leases_repo.claim_runnable).
    Index(
        "ix_run_claimable",
        func.coalesce(Column("lease_expires_at"), text("'-infinity'::timestamptz")),
        postgresql_where=text("status IN ('queued', 'running')"),
    ),
    # Retention: finished runs, oldest first. Spans tenants, like the keys' expiry.
    Index("ix_run_finished_at", "finished_at", postgresql_where=text("status = 'finished'")),
    # The history's purge: per tenant, the snapshot runs that may still read.
    Index(
        "ix_run_open_snapshot",
        "tenant_id",
        postgresql_where=text("read_snapshot IS NOT NULL AND status <> 'finished'"),
    ),
    # The expiry sweep: parked runs whose deadline passed.
    Index(
        "ix_run_awaiting_deadline",
        "deadline_at",
        postgresql_where=text("status = 'awaiting_approval'"),
    ),
    # Each step rewrites the row: room on its page keeps that HOT (migration 0020).
    postgresql_with={"fillfactor": 80},
)

# Config versions by hash: an agent and its tools' declarations, as a run was created
# with (migration 0017). Written once per version, by the processes serving it; read once
# per process by one stepping a run of a version it was not started with.
config_version = Table(
    "config_version",
    metadata,
    Column("hash", String(64), nullable=False),
    Column("document", JSONB, nullable=False),
    _ts("created_at"),
    PrimaryKeyConstraint("hash"),
)

# A scripted run's script: read once by its claimer, kept out of the rewritten run row.
run_script = Table(
    "run_script",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("script", JSONB, nullable=False),
    PrimaryKeyConstraint("tenant_id", "run_id"),
    ForeignKeyConstraint(["tenant_id", "run_id"], ["run.tenant_id", "run.id"]),
)

turn = Table(
    "turn",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("step", Integer, nullable=False),
    Column("route", String(64), nullable=False),
    Column("route_reason", Text),  # why a router chose `route`
    Column("model", String(200), nullable=False),
    Column("instructions_hash", Sha256, nullable=False),
    Column("tool_schema_hash", Sha256, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("text", Text),
    Column("rejection", JSONB),
    Column("extra_rejections", JSONB, nullable=False, server_default="[]"),
    Column("attempts", Integer, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cost_usd", Numeric(18, 8), nullable=False, server_default="0"),
    _ts("created_at"),
    PrimaryKeyConstraint("tenant_id", "run_id", "step"),
    ForeignKeyConstraint(["tenant_id", "run_id"], ["run.tenant_id", "run.id"]),
)

tool_call = Table(
    "tool_call",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("step", Integer, nullable=False),
    Column("position", Integer, nullable=False),  # proposal order within the turn
    Column("call_id", String(200), nullable=False),
    Column("tool", String(200), nullable=False),
    Column("status", String(32), nullable=False),
    Column("arguments", JSONB, nullable=False),
    Column("args_hash", String(80), nullable=False),
    Column("operation_id", String(64), nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("error", JSONB),
    Column("ends_run", Boolean, nullable=False, server_default="false"),
    Column("output", JSON),  # only read back whole: kept as text (migration 0025)
    Column("source_id", String(32)),
    Column("observed_at", String(64)),
    Column("source_version", String(200)),
    Column("preview_id", String(64)),
    Column("version", Integer, nullable=False, server_default="1"),
    # A side effect that took effect but answered an output that could not be kept.
    Column("output_withheld", Boolean, nullable=False, server_default="false"),
    Column("proposed_arguments", JSONB),  # the model's, when an approver revised them
    Column("revision", JSONB),  # {"by", "reason", "at"} of the latest revision
    _ts("created_at"),
    _ts("updated_at"),
    PrimaryKeyConstraint("tenant_id", "id"),
    UniqueConstraint("tenant_id", "run_id", "step", "call_id"),
    # operation_id is a hash of the key above (and a preview): unique with no index (0020).
    ForeignKeyConstraint(
        ["tenant_id", "run_id", "step"], ["turn.tenant_id", "turn.run_id", "turn.step"]
    ),
    # Room on a page for its calls' outcomes (a row triples): a HOT update (migration 0020).
    postgresql_with={"fillfactor": 70},
)

# A row is one write's events, `[[type, data], ...]` with seqs `seq` to `last_seq`, keyed
# by the last: a run's events after seq s are the rows with `last_seq > s` (migration 0021).
event = Table(
    "event",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    _ts("at"),
    # The writing transaction's id: the tenant-wide order (see migration 0008).
    Column(
        "xid",
        BigInteger,
        nullable=False,
        server_default=text("(pg_current_xact_id()::text)::bigint"),
    ),
    Column("last_seq", Integer, nullable=False),
    Column("events", JSON, nullable=False),
    PrimaryKeyConstraint("tenant_id", "run_id", "last_seq"),
    ForeignKeyConstraint(["tenant_id", "run_id"], ["run.tenant_id", "run.id"]),
    # The feed sorts an xid's few rows itself; xid 0 (before 0008) has its own (0020).
    Index("ix_event_tenant_order", "tenant_id", "xid"),
    Index(
        "ix_event_tenant_legacy_order",
        "tenant_id",
        "run_id",
        "last_seq",
        postgresql_where=text("xid = 0"),
    ),
)

idempotency_key = Table(
    "idempotency_key",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("key", String(255), nullable=False),
    Column("fingerprint", String(80), nullable=False),
    Column("state", String(16), nullable=False),  # in_flight | done
    Column("resource_id", String(64)),
    Column("response_status", Integer),
    Column("response_headers", JSONB),
    Column("response_body", JSON),  # as answered, not parsed (migration 0022)
    Column("claim_token", String(64), nullable=False),
    _ts("locked_until"),
    _ts("created_at"),
    _ts("expires_at"),
    PrimaryKeyConstraint("tenant_id", "key"),
    # The third exception to "tenant_id leads": the purge of expired keys spans tenants.
    Index("ix_idempotency_key_expires", "expires_at"),
    # A row grows ~6x with its answer: room for that keeps the update HOT (migration 0020).
    postgresql_with={"fillfactor": 20},
)

# The kill switch: a tool an admin disabled for the tenant (`enabled: false`: everyone's).
tool_switch = Table(
    "tool_switch",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("tool", String(200), nullable=False),
    Column("disabled_by", String(200), nullable=False),
    _ts("disabled_at"),
    PrimaryKeyConstraint("tenant_id", "tool"),
)

# Rate limits (`rate_limit_per_minute`): calls of a tool per tenant and minute, all replicas.
tool_rate = Table(
    "tool_rate",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("tool", String(200), nullable=False),
    _ts("window_start"),
    Column("calls", Integer, nullable=False),
    PrimaryKeyConstraint("tenant_id", "tool", "window_start"),
)

# What an approver decides on: immutable once made, apart from its status and decision.
preview = Table(
    "preview",
    metadata,
    Column("tenant_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("call_row_id", String(64), nullable=False),  # the tool_call row it is for
    Column("call_id", String(200), nullable=False),
    Column("step", Integer, nullable=False),
    Column("tool", String(200), nullable=False),
    Column("arguments", JSONB, nullable=False),
    Column("args_hash", String(80), nullable=False),
    Column("summary", Text, nullable=False),
    Column("impact", JSONB, nullable=False),
    Column("cost_usd", Numeric(18, 8), nullable=False),
    Column("resource_version", String(200)),
    Column("content_hash", String(80), nullable=False),
    Column("status", String(16), nullable=False),
    Column("requested_by", String(200), nullable=False),  # the run's creator
    Column("decided_by", String(200)),
    Column("reason", Text),
    Column("committed_by", String(200)),
    Column("commit_key", String(255)),  # the Idempotency-Key of the commit
    Column("supersedes", String(64)),
    Column("superseded_by", String(64)),
    Column("version", Integer, nullable=False, server_default="1"),
    # A quorum (SPEC §3.3): how many distinct approvers, and who approved when, in order.
    Column("approvals_required", Integer, nullable=False, server_default="1"),
    Column("approvals", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
    Column("revised_by", String(200)),  # made from an approver's revision: who, and why
    Column("revision_reason", Text),
    _ts("expires_at"),
    _ts("created_at"),
    _ts("decided_at", nullable=True),
    _ts("committed_at", nullable=True),
    PrimaryKeyConstraint("tenant_id", "id"),
    Index("ix_preview_tenant_status_created", "tenant_id", "status", "created_at", "id"),
    Index("ix_preview_tenant_created", "tenant_id", "created_at", "id"),
    Index("ix_preview_tenant_run", "tenant_id", "run_id"),
    # The expiry sweep: open previews by expiry, whatever the tenant.
    Index(
        "ix_preview_open_expiry",
        "expires_at",
        postgresql_where=text("status IN ('pending', 'approved')"),
    ),
)

# What other modules declare on `metadata` (tables, triggers, functions): imported here.
from app.db.access import session_tables as _session_tables  # noqa: E402, F401
from app.db.audit import tables as _audit_tables  # noqa: E402, F401
from app.db.lifecycle import json_rows as _json_rows  # noqa: E402, F401
from app.db.lifecycle import liveness as _liveness  # noqa: E402, F401
from app.db.limits import lineage_tables as _lineage_tables  # noqa: E402, F401
from app.db.limits import quota_tables as _quota_tables  # noqa: E402, F401
from app.db.radar import history_tables as _history_tables  # noqa: E402, F401
from app.db.radar import radar_tables as _radar_tables  # noqa: E402, F401
from app.db.tools import mcp_tables as _mcp_tables  # noqa: E402, F401
from app.db.webhooks import tables as _webhook_tables  # noqa: E402, F401
