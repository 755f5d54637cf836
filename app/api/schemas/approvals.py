"""What approvers send and get (SPEC §3.3): previews, their approvals, the decisions on
them (approve, reject, revise) and a commit's answer."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.api.hygiene import RequestBody
from app.api.schemas.runs import CallOut, RunOut
from app.domain.lifecycle.status import PreviewStatus


class ApprovalOut(BaseModel):
    by: str = Field(description="The approver's subject.")
    at: datetime


class PreviewOut(BaseModel):
    """A proposed call as an approver decides on it: immutable but for its status."""

    id: str
    run_id: str
    call_id: str
    step: int
    tool: str
    arguments: Any
    args_hash: str
    content_hash: str = Field(description="What `approve` must send back: over all of it.")
    summary: str
    impact: dict[str, Any]
    cost_usd: float
    resource_version: str | None
    status: PreviewStatus
    requested_by: str = Field(description="The run's creator.")
    expires_at: datetime
    created_at: datetime
    approvals_required: int = Field(
        description="Distinct approvers it needs, none of them the run's creator (quorum)."
    )
    approvals: list[ApprovalOut] = Field(description="Who approved it so far, in order.")
    revised_by: str | None = Field(
        description="Made from this approver's revision of the call's arguments (else null)."
    )
    revision_reason: str | None
    decided_by: str | None = Field(
        description="Who decided it: the rejecter, the reviser, or the approver who "
        "completed its quorum."
    )
    decided_at: datetime | None
    reason: str | None
    committed_by: str | None
    committed_at: datetime | None
    supersedes: str | None
    superseded_by: str | None


class PreviewPage(BaseModel):
    items: list[PreviewOut]
    next_cursor: str | None


class ApproveIn(RequestBody):
    content_hash: str = Field(
        min_length=1, max_length=80, description="The preview's `content_hash` as reviewed."
    )


class RejectIn(RequestBody):
    reason: str = Field(min_length=1, max_length=500)


class ReviseIn(RequestBody):
    arguments: dict[str, Any] = Field(
        description="The call's new arguments, checked as a proposal's are."
    )
    reason: str = Field(
        min_length=1, max_length=500, description="Why: the model is told, with the change."
    )


class ReviseOut(BaseModel):
    preview: PreviewOut = Field(description="The new preview, to be approved in its turn.")


class CommitIn(RequestBody):
    wait_s: float = Field(
        default=10, ge=0, le=30, description="How long to advance the run after the commit."
    )


class CommitOut(BaseModel):
    preview: PreviewOut
    call: CallOut
    run: RunOut
