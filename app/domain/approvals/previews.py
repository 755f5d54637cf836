"""Approvals (SPEC §3.3): what a preview is made of, its content hash, when it expires,
and who may decide on it. Pure rules; the engine applies them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from app.domain.guardrails.sensitive import redact_value
from app.domain.ids import new_id
from app.domain.lifecycle.records import Call, Preview
from app.domain.lifecycle.status import PreviewStatus
from app.domain.tools.specs import canonical_json, sha256_tag

#: The longest summary kept (a backend's text, shown to approvers).
MAX_SUMMARY = 500


@dataclass(frozen=True)
class PreviewBody:
    """What a tool says a call would do, before it is allowed to."""

    summary: str
    impact: Mapping[str, Any] = field(default_factory=dict)
    cost_usd: float = 0.0
    resource_version: str | None = None
    #: The tool's own limit on how long this preview stays valid.
    expires_in_s: float | None = None


@dataclass(frozen=True)
class PreviewRef:
    """What the tool gets at commit: the preview approved and the version it read."""

    id: str
    resource_version: str | None


def content_hash(tool: str, arguments: Any, body: PreviewBody) -> str:
    """Over everything an approver sees: the tool, the normalized arguments, the preview's
    body and the resource version it read."""
    return sha256_tag(
        canonical_json(
            {
                "tool": tool,
                "arguments": arguments,
                "summary": body.summary,
                "impact": body.impact,
                "cost_usd": body.cost_usd,
                "resource_version": body.resource_version,
            }
        )
    )


def expires_at(
    now: datetime, *, ttl_s: float, expires_in_s: float | None, deadline: datetime
) -> datetime:
    """The earliest of the configured TTL, the tool's own expiry and the run's deadline."""
    candidates = [now + timedelta(seconds=ttl_s), deadline]
    if expires_in_s is not None:
        candidates.append(now + timedelta(seconds=max(0.0, expires_in_s)))
    return min(candidates)


@dataclass(frozen=True)
class Asked:
    """Who a preview is made for: the run's creator, the run's deadline, the tool's
    quorum and the configured TTL."""

    requested_by: str
    deadline: datetime
    approvals_required: int
    ttl_s: float


def new_preview(
    call: Call,
    body: PreviewBody,
    asked: Asked,
    *,
    now: datetime,
    supersedes: str | None = None,
    revised_by: str | None = None,
    revision_reason: str | None = None,
) -> Preview:
    """A pending preview of `call` as it stands (its arguments, which a revision changed)."""
    # What a tool says of a call (it may echo an argument, or anything) is shown to
    # approvers as the API shows a call: no secret in it. The hash covers what is shown.
    body = replace(body, summary=redact_value(body.summary), impact=redact_value(body.impact))
    return Preview(
        tenant_id=call.tenant_id,
        id=new_id("prv"),
        run_id=call.run_id,
        call_row_id=call.id,
        call_id=call.call_id,
        step=call.step,
        tool=call.tool,
        arguments=call.arguments,
        args_hash=call.args_hash,
        summary=body.summary,
        impact=dict(body.impact),
        cost_usd=body.cost_usd,
        resource_version=body.resource_version,
        content_hash=content_hash(call.tool, call.arguments, body),
        status=PreviewStatus.PENDING,
        requested_by=asked.requested_by,
        expires_at=expires_at(
            now, ttl_s=asked.ttl_s, expires_in_s=body.expires_in_s, deadline=asked.deadline
        ),
        created_at=now,
        supersedes=supersedes,
        approvals_required=asked.approvals_required,
        revised_by=revised_by,
        revision_reason=revision_reason,
    )


def self_approval(approver: str, requested_by: str, *, allowed: bool, quorum: int = 1) -> bool:
    """Whether this decision is a run's creator approving its own run's call, refused
    unless the config allows it — and always under a quorum, where the creator never
    counts (two people besides the one who asked)."""
    return approver == requested_by and (not allowed or quorum > 1)
