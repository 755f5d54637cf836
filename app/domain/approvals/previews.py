"""Approvals (SPEC §3.3): what a preview is made of, its content hash, when it expires,
and who may decide on it. Pure rules; the engine applies them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

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


def self_approval(approver: str, requested_by: str, *, allowed: bool) -> bool:
    """Whether this decision is a run's creator approving its own run's call, refused
    unless the config allows it."""
    return approver == requested_by and not allowed
