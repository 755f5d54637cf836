"""An approver's revision of a call's arguments (SPEC §3.3 revise).

The revised arguments go through a proposal's checks — the tool's schema and semantic
check, the run creator's scopes, the switches, the before_call guardrails — then the tool
previews them (a read: it changes nothing, so this process asks it, outside any lease,
while the run stays parked). One transaction then supersedes the pending preview, inserts
the new one and moves the call onto it, conditional on the preview's version, the call's
preview and the run still parked: a revision racing a decision, another revision or the
run's end changes nothing. What is committed later is exactly what the new preview shows."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from app.db.access import idempotency as idempotency_repo
from app.db.approvals import decisions as decisions_repo
from app.db.lifecycle import runs as runs_repo
from app.db.lifecycle import turns
from app.domain.approvals import decisions
from app.domain.approvals.previews import Asked, PreviewBody, new_preview, self_approval
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.guardrails import policy as guardrails
from app.domain.guardrails.policy import Point, Policy, Subject
from app.domain.guardrails.sensitive import redact_value
from app.domain.ids import operation_id
from app.domain.lifecycle.events import Event
from app.domain.lifecycle.records import Call, Preview, Run
from app.domain.lifecycle.status import PreviewStatus
from app.domain.limits.budget import seconds_left
from app.domain.model.replies import ProposedCall
from app.domain.ports import Previewer, Tool, ToolContext
from app.domain.tools.proposals import check_call
from app.domain.tools.specs import Principal, ToolError
from app.engine import off_loop
from app.engine.access import idempotency
from app.engine.access.idempotency import Claim
from app.engine.approvals.decisions import get_preview, refusal
from app.engine.runner import Runtime
from app.engine.tools import offered
from app.engine.tools.gates import refusal_in
from app.engine.tools.pinned_config import RunConfig

log = logging.getLogger(__name__)


def _invalid(path: str, message: str) -> DomainError:
    return DomainError(ErrorCode.VALIDATION, message, [FieldError(path, message)])


async def revise(
    rt: Runtime,
    *,
    principal: Principal,
    preview_id: str,
    arguments: Any,
    reason: str,
    claim: Claim | None = None,
) -> Preview:
    """The new preview, made from `arguments`, which replaces the pending one; `422` and
    nothing changed when they fail a check or the tool cannot preview them."""
    reason = redact_value(reason)  # an approver's words, shown and sent on: no secret
    record = await get_preview(rt, principal=principal, preview_id=preview_id)
    if claim is not None and claim.resource_id is not None:  # made; its answer was lost
        return await get_preview(rt, principal=principal, preview_id=claim.resource_id)
    allowed = rt.config.approvals.allow_self_approval
    quorum = record.approvals_required
    if self_approval(principal.subject, record.requested_by, allowed=allowed, quorum=quorum):
        raise DomainError(ErrorCode.FORBIDDEN, "the run's creator may not revise its calls")
    if record.status_at(rt.clock.now()) is not PreviewStatus.PENDING:
        raise refusal(record, rt.clock.now(), wanted=PreviewStatus.PENDING)
    run, call = await _run_and_call(rt, record)
    config = await rt.versions.of_run(rt.reads, run)  # its pinned version, read once
    tool = await _tool(config, record.tool)
    checked = check_call(
        ProposedCall(record.call_id, record.tool, arguments),
        exposed={record.tool: tool},
        principal=run.creator,
        seen_ids=set(),
    )
    if checked.rejection is not None:
        raise _invalid("arguments", checked.rejection.message)
    if checked.args_hash == call.args_hash:
        raise _invalid("arguments", "the arguments are those the preview already shows")
    guarded = await _guardrails(config, call.step, checked, tool)
    revised = replace(call, arguments=checked.arguments, args_hash=checked.args_hash)
    body = await _previewed(rt, run, revised, tool)
    ttl_s = rt.config.approvals.preview_ttl_s
    asked = Asked(run.created_by, run.deadline_at, tool.spec.approvals_required, ttl_s)
    made = new_preview(
        revised,
        body,
        asked,
        now=rt.clock.now(),
        supersedes=record.id,
        revised_by=principal.subject,
        revision_reason=reason,
    )
    decision = decisions.revision(
        record,
        call,
        made,
        operation_id=operation_id(run.id, call.step, call.call_id, made.id),
        reason=reason,
        now=rt.clock.now(),
    )
    decision = replace(decision, events=(*guarded, *decision.events))
    await _apply(rt, principal, run.creator, record, decision, tool, claim)
    return made


async def _run_and_call(rt: Runtime, record: Preview) -> tuple[Run, Call]:
    async with rt.reads() as session:
        run = await runs_repo.get(session, record.tenant_id, record.run_id)
        calls = await turns.calls(
            session, tenant_id=record.tenant_id, run_id=record.run_id, step=record.step
        )
    call = next((c for c in calls if c.id == record.call_row_id), None)
    if run is None or call is None:  # only if its rows were removed by hand
        raise DomainError(ErrorCode.NOT_FOUND, "no such preview")
    return run, call


async def _tool(config: RunConfig, name: str) -> Tool:
    """The tool as the run's pinned config version has it, offered now."""
    await offered.ready(t for t in (config.tools.get(name),) if t is not None)
    tool = offered.serving(config.tools, name)
    if tool is None or not isinstance(tool, Previewer):
        raise DomainError(ErrorCode.INVALID_STATE, f"the tool {name!r} is no longer offered")
    return tool


async def _guardrails(config: RunConfig, step: int, checked: Any, tool: Tool) -> list[Event]:
    """The run's before_call guardrails on the revised arguments, as on a proposal: a
    block is a `422`; what they flagged is told in the revision's events."""
    policy = Policy() if config.agent is None else config.agent.guardrails.policy()
    subject = Subject(
        Point.BEFORE_CALL,
        checked.call_id,
        tool.spec.name,
        tool.spec.external,
        arguments=checked.arguments,
    )
    size = off_loop.json_size(checked.arguments)
    seen = await off_loop.run(size, guardrails.check, policy, subject)
    if seen.blocked is not None:
        raise _invalid("arguments", seen.blocked.message)
    return list(seen.events(step))


async def _previewed(rt: Runtime, run: Run, call: Call, tool: Tool) -> PreviewBody:
    """The tool's preview of the revised call, asked once within its timeout and the
    run's deadline; a refusal or a failure is the revision's `422`."""
    assert isinstance(tool, Previewer)
    left = seconds_left(rt.clock.now(), run.deadline_at)
    timeout = min(tool.spec.timeout_s, left)
    if timeout <= 0:
        raise DomainError(ErrorCode.PREVIEW_EXPIRED, "the run's deadline has passed")
    context = ToolContext(
        tenant_id=run.tenant_id,
        run_id=run.id,
        step=call.step,
        call_id=call.call_id,
        operation_id=operation_id(run.id, call.step, call.call_id),
        principal=run.creator,
        timeout_s=timeout,
    )
    try:
        async with asyncio.timeout(timeout):
            return await tool.preview(call.arguments, context)
    except TimeoutError:
        message = "the tool did not preview the revised call in time"
    except ToolError as error:
        message = f"the tool could not preview the revised call: {error.message}"
    except Exception:
        log.exception("tool %s failed to preview a revision", tool.spec.name)
        message = "the tool failed to preview the revised call"
    raise _invalid("arguments", message)


async def _apply(
    rt: Runtime,
    principal: Principal,
    creator: Principal,
    record: Preview,
    decision: decisions.Decision,
    tool: Tool,
    claim: Claim | None,
) -> None:
    """The revision's writes, with the switches read again and the Idempotency-Key bound
    in the same transaction; the preview as it is now says why when they lost."""
    assert decision.new_preview is not None
    try:
        async with rt.sessions.begin() as session:
            refused = await refusal_in(session, tool.spec, principal=creator)
            if refused is not None:
                raise _invalid("tool", refused.message)
            if claim is not None:
                binding = idempotency.binding(rt, claim)
                made = decision.new_preview.id
                if not await idempotency_repo.bind(session, binding, made, db_time=rt.db_time):
                    raise idempotency.binding_failed(claim)
            await decisions_repo.apply(
                session, record=record, decision=decision, now=rt.clock.now()
            )
    except decisions_repo.DecisionLost:
        latest = await get_preview(rt, principal=principal, preview_id=record.id)
        raise refusal(latest, rt.clock.now(), wanted=PreviewStatus.PENDING) from None
    rt.events.committed(record.tenant_id, record.run_id)
