"""The engine's typed values for a run, a turn, a call, a preview and an event, as
persisted.

Repositories map rows to these and back; the engine never handles raw rows. They are
frozen: a change is a new value (`dataclasses.replace`), written under the run's lease.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.domain.errors import ErrorValue
from app.domain.lifecycle.status import OPEN_PREVIEW_STATUSES, CallStatus, PreviewStatus, RunStatus
from app.domain.limits.budget import Limits, Reserved, Usage, add_cost, own_limits
from app.domain.tools.specs import Principal

#: The run's `consistency` that pins its reads to its creation.
SNAPSHOT = "snapshot"

#: `add_cost` lives with the budgets; it is still imported from here.
__all__ = [
    "SNAPSHOT",
    "Approval",
    "Call",
    "EventRecord",
    "FeedEvent",
    "Preview",
    "Run",
    "RunLease",
    "Turn",
    "add_cost",
]


#: A run's usage and reservations before it spends or reserves anything.
NOTHING_SPENT = Usage()
NOTHING_RESERVED = Reserved()


@dataclass(frozen=True)
class RunLease:
    """A run's lease: the process that advances it, the token its writes are conditional
    on, and when it lapses on the database's clock (None: the run was made leased and the
    database has not answered its expiry yet)."""

    owner: str
    token: str
    expires_at: datetime | None = None


@dataclass(frozen=True)
class Run:
    tenant_id: str
    id: str
    agent: str
    route: str
    status: RunStatus
    input: str
    tools: tuple[str, ...]
    limits: Limits
    created_by: str
    creator_scopes: tuple[str, ...] | None
    root_run_id: str
    deadline_at: datetime
    created_at: datetime
    updated_at: datetime
    termination_reason: str | None = None
    error: Mapping[str, Any] | None = None
    output: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    #: What its own steps spent (its finished descendants' is `children`).
    usage: Usage = Usage()
    #: Recorded model outcomes so far; the scripted model reads its next item here.
    model_calls: int = 0
    #: Model attempts already made in the current step.
    step_attempts: int = 0
    next_source: int = 1
    #: Steps that failed unexpectedly in a row.
    step_failures: int = 0
    parent_run_id: str | None = None
    #: `latest`, or `snapshot`: its read tools read as of `as_of` (SPEC §3.1).
    consistency: str = "latest"
    #: A snapshot run's cut: the database snapshot its creation took (`pg_current_snapshot`
    #: text), opaque here. Tools that read this database read what it saw.
    read_snapshot: str | None = None
    cancel_requested_at: datetime | None = None
    #: Who advances it, and until when (None: nobody holds it).
    lease: RunLease | None = None
    version: int = 1
    event_seq: int = 0
    finished_at: datetime | None = None
    #: The span context of the run's latest advance (a W3C traceparent).
    trace_context: str | None = None
    #: Tags every route the run uses must carry (besides its agent's).
    data_policy: tuple[str, ...] = ()
    #: The config version it was created with (`domain.tools.pinning`), kept until it ends.
    config_hash: str | None = None
    #: Held for its unfinished children (their grants); given back as each finishes.
    reserved: Reserved = Reserved()
    #: What its finished descendants spent (their own usage, each counted once; steps are
    #: not shared, so theirs stay 0).
    children: Usage = Usage()
    #: The finished run it continues (`POST /v1/runs` with `continue_from`), and what it
    #: carries over from it into its model input (`domain.model.carry_over`).
    continued_from: str | None = None
    carry_over: Mapping[str, Any] | None = None

    @property
    def total_usage(self) -> Usage:
        """Its own usage with its finished descendants' (SPEC §3.5): what it shows."""
        own, children = self.usage, self.children
        return Usage(
            steps=own.steps,
            input_tokens=own.input_tokens + children.input_tokens,
            output_tokens=own.output_tokens + children.output_tokens,
            cost_usd=add_cost(own.cost_usd, children.cost_usd),
            tool_calls=own.tool_calls + children.tool_calls,
        )

    @property
    def own_limits(self) -> Limits:
        """What its own steps may spend: its limits less what its descendants spent and
        what it holds for its unfinished children. Every budget check of its steps
        compares its own usage with these, so a parent never spends its children's share."""
        if self.children == NOTHING_SPENT and self.reserved == NOTHING_RESERVED:
            return self.limits  # no children, nothing reserved: nothing is held by others
        return own_limits(self.limits, self.reserved, self.total_usage, self.usage)

    @property
    def as_of(self) -> datetime | None:
        """What a snapshot run's reads are pinned to: its creation (None: `latest`)."""
        return self.created_at if self.consistency == SNAPSHOT else None

    @property
    def creator(self) -> Principal:
        """Who created the run, as a principal (scopes kept on the run; roles not)."""
        scopes = None if self.creator_scopes is None else frozenset(self.creator_scopes)
        return Principal(self.tenant_id, self.created_by, frozenset(), scopes)


@dataclass(frozen=True)
class Turn:
    """One model turn that produced an answer or tool calls."""

    tenant_id: str
    run_id: str
    step: int
    route: str
    model: str
    instructions_hash: str
    tool_schema_hash: str
    kind: str  # "tool_calls" | "final"
    attempts: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    created_at: datetime
    text: str | None = None
    rejection: ErrorValue | None = None
    #: Proposals refused before they became calls (a repeated call id), kept for the model.
    extra_rejections: tuple[Mapping[str, Any], ...] = ()
    #: Why a router chose `route` (None: the agent's route is not a router).
    route_reason: str | None = None


@dataclass(frozen=True)
class Call:
    tenant_id: str
    id: str
    run_id: str
    step: int
    position: int
    call_id: str
    tool: str
    status: CallStatus
    arguments: Any
    args_hash: str
    operation_id: str
    created_at: datetime
    updated_at: datetime
    attempts: int = 0
    error: ErrorValue | None = None
    ends_run: bool = False
    output: Any = None
    source_id: str | None = None
    observed_at: str | None = None
    source_version: str | None = None
    preview_id: str | None = None
    version: int = 1
    #: It succeeded (it took effect), but its output broke its schema or size limit and
    #: was not kept: the model is told so, and never asked to make it again.
    output_withheld: bool = False
    #: An approver revised its arguments: the model's own, and who revised, when and why
    #: (`{"by", "reason", "at"}`); `arguments` are the revised ones, which run.
    proposed_arguments: Any = None
    revision: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Approval:
    """One approver's approval of a preview (a quorum needs several)."""

    by: str
    at: datetime

    def as_dict(self) -> dict[str, str]:
        return {"by": self.by, "at": self.at.isoformat()}

    @classmethod
    def of(cls, data: Mapping[str, str]) -> Approval:
        return cls(data["by"], datetime.fromisoformat(data["at"]))


@dataclass(frozen=True)
class Preview:
    """An immutable proposal an approver decides on; only its status and the decision's
    who, when and why change."""

    tenant_id: str
    id: str
    run_id: str
    call_row_id: str
    call_id: str
    step: int
    tool: str
    arguments: Any
    args_hash: str
    summary: str
    impact: Mapping[str, Any]
    cost_usd: float
    resource_version: str | None
    content_hash: str
    status: PreviewStatus
    requested_by: str
    expires_at: datetime
    created_at: datetime
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None
    committed_by: str | None = None
    committed_at: datetime | None = None
    commit_key: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    version: int = 1
    #: Distinct approvers it needs (the tool's `approvals_required`), and those it has.
    approvals_required: int = 1
    approvals: tuple[Approval, ...] = ()
    #: Made from an approver's revision of the call's arguments: who, and why.
    revised_by: str | None = None
    revision_reason: str | None = None

    def status_at(self, now: datetime) -> PreviewStatus:
        """Its status as of `now`: an open preview past its expiry is expired, whether or
        not the sweep has written so yet."""
        if self.status in OPEN_PREVIEW_STATUSES and now >= self.expires_at and not self.committing:
            return PreviewStatus.EXPIRED
        return self.status

    @property
    def committing(self) -> bool:
        """Approved and its commit claimed (in time): the clock no longer expires it."""
        return self.status is PreviewStatus.APPROVED and self.commit_key is not None


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One event of a run's timeline, as stored."""

    seq: int
    type: str
    at: datetime
    data: dict[str, Any]

    def as_item(self) -> dict[str, Any]:
        return {"seq": self.seq, "type": self.type, "at": self.at, "data": self.data}


#: A place in a tenant's feed: (xid of the writing transaction, run id, seq).
FeedPosition = tuple[int, str, int]


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One event of a tenant's feed, with the id of the transaction that wrote it: its
    place in the feed's gap-free order is (xid, run_id, seq)."""

    xid: int
    run_id: str
    seq: int
    type: str
    at: datetime
    data: dict[str, Any]

    @property
    def position(self) -> FeedPosition:
        return (self.xid, self.run_id, self.seq)
