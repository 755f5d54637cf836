"""A call that requires approval, within the ExecuteCalls step (SPEC §3.3).

Pending: the tool is asked for a preview, which is stored immutable with the call moved
to `awaiting_approval`, and the run parks — no lease, no task — in the same transaction.
Claimed again (a decision, the expiry sweep, a cancel), the call is looked at afresh: an
expired preview ends it `rejected` with `approval_expired`; one still undecided (or
approved but not yet committed) parks the run again; one whose commit was asked for is
executed with exactly the approved arguments, and a backend that says the resource
changed since the preview gets a new preview in place of the old.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from app.db.errors import is_database_outage
from app.domain.approvals.previews import Asked, PreviewBody, new_preview
from app.domain.errors import ToolgateError
from app.domain.lifecycle.records import Call, Preview
from app.domain.lifecycle.status import CallStatus, PreviewStatus
from app.domain.lifecycle.steps import Next
from app.domain.limits.budget import seconds_left
from app.domain.ports import Previewer, Tool
from app.domain.tools.retry import backoff_s
from app.domain.tools.specs import ToolError
from app.engine.process.lease import Interrupted
from app.engine.steps.round import Round
from app.engine.steps.tool_attempt import DATABASE_UNAVAILABLE, DeadlineReached, context_of
from app.engine.tools.gates import refusal_now

log = logging.getLogger(__name__)


RunCall = Callable[..., Awaitable[Next]]


class VersionConflict(ToolgateError):
    """The backend refused an approved call: its resource changed since the preview."""

    def __init__(self, call: Call) -> None:
        super().__init__(call.call_id)
        self.call = call


async def handle(batch: Round, call: Call, run_call: RunCall) -> Next:
    """The call to an outcome (as `run_call` answers), or `Next.PARK`: the run now waits
    for a decision, and nothing after this call may start."""
    rt = batch.lease.rt
    tool = batch.state.tools[call.tool]
    if call.status is CallStatus.PENDING:
        # A switch thrown since the proposal: no preview is asked for, none is offered.
        if await _stopped(batch, call, tool):
            return Next.GO_ON
        return await _preview_and_park(batch, call, tool)
    preview = batch.preview_of(call)
    if preview is None:  # only if its rows were edited by hand
        batch.fail(call, ToolError("internal", "the call's preview is missing"))
        return Next.STOP
    # A commit already claimed (it checked the expiry then) is executed, not expired.
    waiting = call.status is CallStatus.AWAITING_APPROVAL or (
        call.status is CallStatus.APPROVED and preview.commit_key is None
    )
    if waiting:
        if preview.status_at(rt.clock.now()) is PreviewStatus.EXPIRED:
            batch.expire(call)
            return Next.GO_ON
        if await _stopped(batch, call, tool):
            return Next.GO_ON
        await batch.wait_for_approval()  # still undecided, or approved and not committed
        return Next.PARK
    # A commit was asked for (or one was cut short): exactly the approved call runs.
    try:
        return await run_call(batch, call, side_effect=True)
    except VersionConflict as conflict:
        return await _supersede(batch, conflict.call, preview, tool)


async def _stopped(batch: Round, call: Call, tool: Tool) -> bool:
    """Whether the gates refuse the call now (its tool switched off, or out of the run
    creator's scopes): then it fails with their code, fed back to the model, and its
    preview, if any, expires."""
    refused = await refusal_now(batch.lease.rt, batch.state.run, tool.spec, fresh=True)
    if refused is None:
        return False
    await batch.failed(call, ToolError(refused.code, refused.message))  # the model hears it
    return True


async def _preview_and_park(batch: Round, call: Call, tool: Tool) -> Next:
    body = await _ask(batch, call, tool)
    if isinstance(body, ToolError):
        return await batch.failed(call, body)
    batch.park(call, _new_preview(batch, call, tool, body))
    await batch.wait_for_approval()
    return Next.PARK


async def _supersede(batch: Round, call: Call, old: Preview, tool: Tool) -> Next:
    """The commit changed nothing (the resource moved on): a new preview, read now,
    replaces the approved one and awaits a new decision."""
    body = await _ask(batch, call, tool)
    if isinstance(body, ToolError):
        # No new preview (the resource is gone, or already as asked): the approved one is
        # superseded all the same, and the call fails with the tool's word on why.
        batch.supersede_only(old)
        return await batch.failed(call, body)
    batch.supersede(call, old, _new_preview(batch, call, tool, body, supersedes=old.id))
    await batch.wait_for_approval()
    return Next.PARK


def _new_preview(
    batch: Round, call: Call, tool: Tool, body: PreviewBody, supersedes: str | None = None
) -> Preview:
    rt = batch.lease.rt
    run = batch.state.run
    asked = Asked(
        requested_by=run.created_by,
        deadline=run.deadline_at,
        approvals_required=tool.spec.approvals_required,
        ttl_s=rt.config.approvals.preview_ttl_s,
    )
    return new_preview(call, body, asked, now=rt.clock.now(), supersedes=supersedes)


async def _ask(batch: Round, call: Call, tool: Tool) -> PreviewBody | ToolError:
    """The tool's preview, asked again on retryable errors (a preview changes nothing),
    within the tool's timeout and the run's deadline."""
    lease, state = batch.lease, batch.state
    spec = tool.spec
    if not isinstance(tool, Previewer):
        return ToolError("no_preview", "the tool cannot preview its calls")
    attempt = 0
    while True:
        attempt += 1
        left = seconds_left(lease.rt.clock.now(), state.run.deadline_at)
        if left <= 0:
            raise DeadlineReached()
        timeout = min(spec.timeout_s, left)
        context = replace(context_of(state, call, timeout), preview=None, approved_by=None)
        try:
            return await lease.guarded(tool.preview(call.arguments, context), timeout)
        except TimeoutError:
            if timeout >= left:
                raise DeadlineReached() from None
            error = ToolError("timeout", "the tool did not make a preview in time", True)
        except ToolError as exc:
            error = exc
        except Interrupted:
            raise
        except Exception as exc:
            if is_database_outage(exc):  # asked again after backoff, as a transient failure
                log.warning("tool %s met a database outage making a preview", spec.name)
                error = DATABASE_UNAVAILABLE
            else:
                log.exception("tool %s failed to make a preview", spec.name)
                error = ToolError("internal", "the tool failed to make a preview")
        left = seconds_left(lease.rt.clock.now(), state.run.deadline_at)
        pause = backoff_s(attempt)
        if not error.retryable or attempt >= spec.max_attempts or pause >= left:
            return error
        await lease.guarded(asyncio.sleep(pause), pause + 1)
