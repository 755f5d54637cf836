"""A run as the domain holds it, built in memory for tests of pure domain code."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.domain.lifecycle.records import Run
from app.domain.lifecycle.run_columns import with_columns
from app.domain.lifecycle.status import RunStatus
from app.domain.limits.budget import Limits

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
LIMITS = Limits(max_steps=8, deadline_s=600, max_tokens=1000, max_cost_usd=1.0, max_tool_calls=10)


def run_record(**fields: object) -> Run:
    """A running run of agent `a` made at NOW, with LIMITS, then `fields` set: its own
    fields or its table's columns (`input_tokens=5` for its usage's)."""
    run = Run(
        tenant_id="acme",
        id="run_p",
        agent="a",
        route="scripted",
        status=RunStatus.RUNNING,
        input="x",
        tools=(),
        limits=LIMITS,
        created_by="svc",
        creator_scopes=None,
        root_run_id="run_p",
        deadline_at=NOW + timedelta(seconds=100),
        created_at=NOW,
        updated_at=NOW,
    )
    return with_columns(run, fields)
