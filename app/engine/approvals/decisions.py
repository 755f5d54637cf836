"""The approver's use cases (SPEC §3.3): read previews, approve, reject, commit.

Decisions are conditional writes on the preview's and the run's status, made outside
any lease: a parked run has none. A commit takes the run's lease in the same transaction
that marks the preview as being committed, then executes exactly the approved call in
this process, and lets the run go on for up to `wait_s`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.access import idempotency as idempotency_repo
from app.db.approvals import decisions as decisions_repo
from app.db.approvals import previews
from app.db.lifecycle import turns
from app.db.session import retrying
from app.domain.approvals import decisions
from app.domain.approvals.previews import self_approval
from app.domain.errors import DomainError, ErrorCode, ErrorValue, ObservationCode
from app.domain.lifecycle.records import Call, Preview, Run
from app.domain.lifecycle.settle import Found, Outcome, settle
from app.domain.lifecycle.status import CallStatus, PreviewStatus, RunStatus
from app.domain.limits.budget import seconds_left
from app.domain.tools.specs import Principal
from app.engine.access import idempotency
from app.engine.access.idempotency import Claim
from app.engine.lifecycle.runs import by_created, created_position, page_of
from app.engine.runner import (
    Runtime,
    adopt,
    handed_back_if_unanswered,
    new_lease_token,
)
from app.engine.tools import offered
from app.engine.tools.gates import refusal_in

if TYPE_CHECKING:
    from app.engine.runner import Driver


@dataclass(frozen=True)
class Committed:
    preview: Preview
    call: Call
    run: Run


async def get_preview(rt: Runtime, *, principal: Principal, preview_id: str) -> Preview:
    found = await retrying(
        rt.reads, previews.get, tenant_id=principal.tenant_id, preview_id=preview_id
    )
    if found is None:  # another tenant's preview too: it does not exist for this key
        raise DomainError(ErrorCode.NOT_FOUND, "no such preview")
    return found


async def list_previews(
    rt: Runtime, *, principal: Principal, status: PreviewStatus, limit: int, cursor: str | None
) -> tuple[list[Preview], str | None]:
    rows = await retrying(
        rt.reads,
        previews.page,
        tenant_id=principal.tenant_id,
        status=status,
        now=rt.clock.now(),
        before=created_position(cursor) if cursor is not None else None,
        limit=limit + 1,
    )
    return page_of(rows, limit, by_created)


async def pending_of(rt: Runtime, runs: Sequence[Run]) -> Mapping[str, list[Preview]]:
    """The open previews of the parked runs among `runs` (no read when none is parked)."""
    parked = [r for r in runs if r.status is RunStatus.AWAITING_APPROVAL]
    if not parked:
        return {}
    found = await retrying(
        rt.reads,
        previews.pending_of_runs,
        tenant_id=parked[0].tenant_id,
        run_ids=[r.id for r in parked],
        now=rt.clock.now(),
    )
    by_run: dict[str, list[Preview]] = {}
    for item in found:
        by_run.setdefault(item.run_id, []).append(item)
    return by_run


def refusal(record: Preview, now: datetime, *, wanted: PreviewStatus) -> DomainError:
    """Why a decision on `record` cannot be taken now."""
    status = record.status_at(now)
    if status is PreviewStatus.EXPIRED:
        return DomainError(ErrorCode.PREVIEW_EXPIRED, "the preview expired")
    if wanted is PreviewStatus.PENDING and status is PreviewStatus.PENDING:
        return DomainError(  # still open, but another decision on it came first
            ErrorCode.INVALID_STATE, "the preview changed meanwhile; read it again"
        )
    if wanted is PreviewStatus.APPROVED and status is PreviewStatus.PENDING:
        if record.approvals_required > 1:  # a quorum short of its approvers
            return DomainError(
                ErrorCode.INVALID_STATE,
                f"the preview has {len(record.approvals)} of {record.approvals_required} approvals",
            )
        return DomainError(ErrorCode.PREVIEW_NOT_APPROVED, "the preview is not approved yet")
    extra = {"new_preview_id": record.superseded_by} if record.superseded_by else {}
    return DomainError(ErrorCode.INVALID_STATE, f"the preview is {status.value}", extra=extra)


#: Tries of a decision on a preview that other approvals keep changing (a quorum's).
_TRIES = 5

Decide = Callable[[Preview, datetime], decisions.Decision]


async def approve(
    rt: Runtime,
    *,
    principal: Principal,
    preview_id: str,
    content_hash: str,
    claim: Claim | None = None,
) -> Preview:
    """Approves the preview, bound to the request's Idempotency-Key claim (if any) in the
    same transaction: a retry whose first request was committed but never answered gets
    the preview as it stands, not `409 invalid-state` for approving it twice. Under a
    quorum the preview stays pending until its last approver."""
    record = await get_preview(rt, principal=principal, preview_id=preview_id)
    if claim is not None and claim.resource_id == record.id:
        return record
    allowed = rt.config.approvals.allow_self_approval
    quorum = record.approvals_required
    if self_approval(principal.subject, record.requested_by, allowed=allowed, quorum=quorum):
        raise DomainError(ErrorCode.FORBIDDEN, "the run's creator may not approve its calls")
    pending = record.status_at(rt.clock.now()) is PreviewStatus.PENDING
    if pending and record.content_hash != content_hash:
        raise DomainError(
            ErrorCode.PREVIEW_MISMATCH, "the content hash is not the preview's as stored"
        )

    def decide(latest: Preview, now: datetime) -> decisions.Decision:
        try:
            return decisions.approval(
                latest, content_hash=content_hash, by=principal.subject, now=now
            )
        except decisions.AlreadyApproved:
            raise DomainError(
                ErrorCode.INVALID_STATE, "this approver has approved the preview already"
            ) from None

    return await _decide_pending(rt, principal, record, decide, claim)


async def reject(
    rt: Runtime, *, principal: Principal, preview_id: str, reason: str, claim: Claim | None = None
) -> Preview:
    """Rejects the preview, bound to the request's Idempotency-Key claim as `approve` is.
    One rejection rejects, whatever approvals a quorum has."""
    record = await get_preview(rt, principal=principal, preview_id=preview_id)
    if claim is not None and claim.resource_id == record.id:
        return record
    if record.status is not PreviewStatus.PENDING:  # decided already: say how it stands
        raise refusal(record, rt.clock.now(), wanted=PreviewStatus.PENDING)
    error = ErrorValue(ObservationCode.REJECTED_BY_APPROVER, reason)

    def decide(latest: Preview, now: datetime) -> decisions.Decision:
        settled = settle(
            Found(CallStatus.AWAITING_APPROVAL), Outcome.REJECTED, preview=latest, error=error
        )
        try:
            return decisions.rejection(
                latest, settled, reason=reason, by=principal.subject, now=now
            )
        except decisions.NotOpen:
            raise refusal(latest, now, wanted=PreviewStatus.PENDING) from None

    return await _decide_pending(rt, principal, record, decide, claim)


async def _decide_pending(
    rt: Runtime, principal: Principal, record: Preview, decide: Decide, claim: Claim | None
) -> Preview:
    """A decision on a pending preview, in one transaction with the Idempotency-Key's
    binding. When its conditions no longer held, the preview as it is now says why — or,
    still pending but changed (another approver of its quorum was first), the decision is
    made again on it."""
    for attempt in range(1, _TRIES + 1):
        now = rt.clock.now()
        decision = decide(record, now)
        try:
            async with rt.sessions.begin() as session:
                if claim is not None:
                    binding = idempotency.binding(rt, claim)
                    if not await idempotency_repo.bind(
                        session, binding, record.id, db_time=rt.db_time
                    ):
                        raise idempotency.binding_failed(claim)
                decided, _ = await decisions_repo.apply(
                    session, record=record, decision=decision, now=now
                )
        except decisions_repo.DecisionLost:
            latest = await get_preview(rt, principal=principal, preview_id=record.id)
            now = rt.clock.now()
            outpaced = latest.version != record.version and attempt < _TRIES
            if outpaced and latest.status_at(now) is PreviewStatus.PENDING:
                record = latest
                continue
            raise refusal(latest, now, wanted=PreviewStatus.PENDING) from None
        rt.events.committed(decided.tenant_id, decided.run_id)
        return decided
    raise AssertionError("unreachable: the last try answers or raises")


async def commit(
    rt: Runtime,
    driver: Driver,
    *,
    principal: Principal,
    preview_id: str,
    key: str,
    wait_s: float,
) -> Committed:
    """Executes the approved call (once, whoever else tries), then advances the run for up
    to `wait_s`. A commit whose resource changed since the preview answers
    `version_conflict` with the new preview's id."""
    record = await get_preview(rt, principal=principal, preview_id=preview_id)
    if record.commit_key == key:
        # This very commit was taken before (its answer was lost with its process): it
        # is not made twice; its outcome is answered.
        return await _outcome(rt, driver, record, wait_s)
    sent = asyncio.get_running_loop().time()
    try:
        claimed, refused = await _claim(rt, record, key, principal.subject)
    except decisions_repo.DecisionLost:
        latest = await get_preview(rt, principal=principal, preview_id=preview_id)
        if latest.commit_key == key:
            return await _outcome(rt, driver, latest, wait_s)
        if latest.status is PreviewStatus.APPROVED and latest.commit_key is not None:
            raise DomainError(ErrorCode.INVALID_STATE, "the preview is being committed") from None
        raise refusal(latest, rt.clock.now(), wanted=PreviewStatus.APPROVED) from None
    _adopt(rt, driver, claimed.run, sent)
    if refused is not None:  # the run goes on here: its model hears why the call did not run
        raise DomainError(
            ErrorCode.INVALID_STATE,
            f"the call may not run now ({refused.message}); it failed {refused.code} and "
            "its preview expired",
            extra={"call_error": refused.as_dict()},
            settled=True,
        )
    return await _outcome(rt, driver, claimed.preview, wait_s)


@dataclass(frozen=True)
class _Claimed:
    preview: Preview
    run: Run


async def _claim(
    rt: Runtime, record: Preview, key: str, by: str
) -> tuple[_Claimed, ErrorValue | None]:
    """In one transaction: the gates again — a switch thrown after the approval stops the
    commit, whatever the approver saw — then the claim of the commit, or its refusal
    (the call failed with the gates' code, the preview expired). Either way the run is
    leased to this process. DecisionLost when the preview is no longer approved."""
    lease = decisions_repo.Lease(rt.owner, new_lease_token(), rt.db_time.after(rt.settings.lease_s))
    # An MCP tool's server list, read before the transaction, never inside it.
    await offered.ready(t for t in (rt.tools.get(record.tool),) if t is not None)
    # Unanswered, the claim may have committed: a driver then executes the call at once.
    with handed_back_if_unanswered(rt, record.tenant_id, record.run_id, lease.token):
        return await _claimed(rt, record, key, by, lease)


async def _claimed(
    rt: Runtime, record: Preview, key: str, by: str, lease: decisions_repo.Lease
) -> tuple[_Claimed, ErrorValue | None]:
    async with rt.sessions.begin() as session:
        refused = await _gate_refusal(rt, session, record)
        if refused is None:
            decision = decisions.commit_claim(record, key=key, by=by, now=rt.clock.now())
        else:
            found = Found(CallStatus.APPROVED)
            settled = settle(found, Outcome.FAILED, preview=record, error=refused)
            try:
                decision = decisions.commit_refusal(record, settled, by=by, now=rt.clock.now())
            except decisions.NotOpen:
                raise decisions_repo.DecisionLost() from None
        decided, run = await decisions_repo.apply(
            session, record=record, decision=decision, now=rt.clock.now(), lease=lease
        )
        return _Claimed(decided, run), refused


def _adopt(rt: Runtime, driver: Driver, run: Run, sent: float) -> None:
    """This process took the run's lease in the decision's transaction: it advances it."""
    rt.events.committed(run.tenant_id, run.id)
    adopt(rt, driver, run, sent)


async def _gate_refusal(rt: Runtime, session: AsyncSession, record: Preview) -> ErrorValue | None:
    """Why the approved call may not run now: the tool switched off (by the operator or
    the tenant's admins), or its permissions no longer covered by the run creator's
    scopes. A tool gone from the config, or from its MCP server's list, is left to the
    executor (it ends the run `tool_unavailable`)."""
    tool = offered.serving(rt.tools, record.tool)
    if tool is None:
        return None
    scopes = await previews.creator_scopes(session, record=record)
    creator = Principal(record.tenant_id, record.requested_by, frozenset(), scopes)
    return await refusal_in(session, tool.spec, principal=creator)


async def _outcome(rt: Runtime, driver: Driver, record: Preview, wait_s: float) -> Committed:
    """Waits until the committed call has an outcome — at most the tool's timeout (and
    never past the run's deadline) — then up to `wait_s` more for the run, and answers
    the state as it stands; a version conflict answers the new preview."""
    tenant = record.tenant_id
    loop = asyncio.get_running_loop()
    tool = rt.tools.get(record.tool)
    patience_ends = loop.time() + (tool.spec.timeout_s if tool is not None else 0.0)
    # Looked at again after each step this process commits (it executes the commit), and
    # at the driver's poll floor when another process does.
    with driver.watching(tenant, record.run_id) as stepped:
        while True:
            stepped.clear()
            # The run first: a run seen finished had its call settled in the same commit,
            # so the call read after it is never older than the run.
            run = await driver.wait(tenant, record.run_id, 0)
            call = await _call(rt, record)
            left = min(seconds_left(rt.clock.now(), run.deadline_at), patience_ends - loop.time())
            executing = call.status in (CallStatus.APPROVED, CallStatus.EXECUTING)
            if not executing or run.status is RunStatus.FINISHED or left <= 0:
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(left, driver.poll_floor_s)):
                    await stepped.wait()
    preview = await retrying(rt.reads, previews.get, tenant_id=tenant, preview_id=record.id)
    assert preview is not None
    if preview.status is PreviewStatus.SUPERSEDED:
        waiting = "a new preview awaits approval" if preview.superseded_by else "no new preview"
        raise DomainError(
            ErrorCode.VERSION_CONFLICT,
            f"the resource changed since the preview; {waiting}",
            extra={"new_preview_id": preview.superseded_by},
            settled=True,
        )
    if wait_s > 0 and run.status is not RunStatus.FINISHED:
        run = await driver.wait(tenant, record.run_id, wait_s, known=run)
    return Committed(preview, call, run)


async def _call(rt: Runtime, record: Preview) -> Call:
    calls = await retrying(
        rt.reads,
        turns.calls,
        tenant_id=record.tenant_id,
        run_id=record.run_id,
        step=record.step,
    )
    return next(c for c in calls if c.id == record.call_row_id)
