"""Rows and records as the API shows them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from app.domain.guardrails.sensitive import redact_value
from app.domain.lifecycle.records import Call, Preview, Run
from app.domain.model.context import UNTRUSTED
from app.domain.ports import Tool


def run_view(record: Run, pending: Sequence[Preview] = ()) -> dict[str, Any]:
    usage = record.total_usage.as_dict()
    return {
        "id": record.id,
        "agent": record.agent,
        "input": redact_value(record.input),
        "status": record.status,
        "termination_reason": record.termination_reason,
        "output": record.output,
        "error": record.error,
        "parent_run_id": record.parent_run_id,
        "root_run_id": record.root_run_id,
        "metadata": record.metadata,
        "tools": list(record.tools),
        "limits": record.limits.as_dict(),
        "usage": usage,
        "reserved": record.reserved.as_dict(),
        "pending_approvals": [
            {
                "preview_id": p.id,
                "call_id": p.call_id,
                "tool": p.tool,
                "summary": p.summary,
                "expires_at": p.expires_at,
            }
            for p in pending
        ],
        "consistency": record.consistency,
        "as_of": record.as_of,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "deadline_at": record.deadline_at,
        "version": record.version,
        "config_hash": record.config_hash,
        "continued_from": record.continued_from,
    }


def call_view(call: Call) -> dict[str, Any]:
    keys = (
        "id",
        "call_id",
        "step",
        "tool",
        "status",
        "arguments",
        "args_hash",
        "operation_id",
        "attempts",
        "error",
        "output",
        "source_id",
        "observed_at",
        "source_version",
        "preview_id",
        "output_withheld",
    )
    view = {k: getattr(call, k) for k in keys}
    view["error"] = None if call.error is None else call.error.as_dict()
    # The tool got the arguments as proposed; nobody reads a secret in them here.
    view["arguments"] = redact_value(call.arguments)
    view["proposed_arguments"] = redact_value(call.proposed_arguments)
    view["revision"] = call.revision
    # What a tool returns is data from outside, whatever it says (docs/trust.md).
    view["trust"] = UNTRUSTED
    return view


def tool_view(tool: Tool, disabled: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`disabled`: the tools the caller's tenant switched off."""
    spec = tool.spec
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": dict(spec.input_schema),
        "output_schema": dict(spec.output_schema) if spec.output_schema else None,
        "risk": spec.risk.value,
        "requires_approval": spec.requires_approval,
        "side_effects": spec.side_effects,
        "idempotent": spec.idempotent,
        "permissions": list(spec.permissions),
        "timeout_s": spec.timeout_s,
        "concurrency_group": spec.concurrency_group,
        "max_concurrency": spec.max_concurrency,
        "cost_usd": spec.cost_usd,
        # An MCP tool its server does not offer now cannot be used either.
        "enabled": spec.enabled and spec.listed and spec.name not in disabled,
        "pending_declaration": getattr(tool, "pending_declaration", None),
    }


def preview_view(record: Preview, now: datetime) -> dict[str, Any]:
    """A preview as the API shows it (its status as of `now`)."""
    return {
        "id": record.id,
        "run_id": record.run_id,
        "call_id": record.call_id,
        "step": record.step,
        "tool": record.tool,
        "arguments": redact_value(record.arguments),
        "args_hash": record.args_hash,
        "content_hash": record.content_hash,
        "summary": record.summary,
        "impact": record.impact,
        "cost_usd": record.cost_usd,
        "resource_version": record.resource_version,
        "status": record.status_at(now).value,
        "requested_by": record.requested_by,
        "expires_at": record.expires_at,
        "created_at": record.created_at,
        "approvals_required": record.approvals_required,
        "approvals": [{"by": a.by, "at": a.at} for a in record.approvals],
        "revised_by": record.revised_by,
        "revision_reason": record.revision_reason,
        "decided_by": record.decided_by,
        "decided_at": record.decided_at,
        "reason": record.reason,
        "committed_by": record.committed_by,
        "committed_at": record.committed_at,
        "supersedes": record.supersedes,
        "superseded_by": record.superseded_by,
    }
