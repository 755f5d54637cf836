"""Approvals (SPEC §3.3): the approvers' queue, one preview, and the decisions on it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import JSONResponse

from app.api.deps import DriverDep, RuntimeDep, require
from app.api.idempotency import IdempotencyKey, RequiredIdempotencyKey, run_idempotent
from app.api.responses import problems
from app.api.routes.runs import run_answer
from app.api.schemas.approvals import (
    ApproveIn,
    CommitIn,
    CommitOut,
    PreviewOut,
    PreviewPage,
    RejectIn,
    ReviseIn,
    ReviseOut,
)
from app.api.schemas.runs import CallOut
from app.api.views import call_view, preview_view
from app.domain.lifecycle.status import PreviewStatus
from app.domain.tools.specs import Principal
from app.engine.access.idempotency import Claim
from app.engine.approvals import decisions, revisions
from app.engine.process.runtime import Runtime

router = APIRouter(tags=["approvals"])
_NO_COMMIT_BODY = CommitIn()  # the body is optional: its defaults when none is sent

ApproverDep = Annotated[Principal, Depends(require("approver"))]
CommitterDep = Annotated[Principal, Depends(require("approver", "caller"))]
Limit = Annotated[int, Query(ge=1, le=200, description="Items per page (default 50).")]


def _json(rt: Runtime, record: Any) -> dict[str, Any]:
    return PreviewOut.model_validate(preview_view(record, rt.clock.now())).model_dump(mode="json")


@router.get("/v1/approvals", response_model=PreviewPage, responses=problems(400, 401, 403, 422))
async def list_approvals(
    principal: ApproverDep,
    rt: RuntimeDep,
    status: PreviewStatus = PreviewStatus.PENDING,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> Any:
    """The approvers' queue: previews of the tenant with this status (default `pending`),
    newest first. A preview past its expiry is listed as `expired`."""
    rows, next_cursor = await decisions.list_previews(
        rt, principal=principal, status=status, limit=limit, cursor=cursor
    )
    return {"items": [_json(rt, r) for r in rows], "next_cursor": next_cursor}


@router.get(
    "/v1/previews/{preview_id}", response_model=PreviewOut, responses=problems(401, 403, 404)
)
async def get_preview(preview_id: str, principal: CommitterDep, rt: RuntimeDep) -> Any:
    """One preview: the normalized arguments, what would change, and the `content_hash`
    an approval must send back."""
    return _json(rt, await decisions.get_preview(rt, principal=principal, preview_id=preview_id))


@router.post(
    "/v1/previews/{preview_id}/approve",
    response_model=PreviewOut,
    responses=problems(400, 401, 403, 404, 409, 410, 413, 415, 422),
)
async def approve_preview(
    preview_id: str,
    body: ApproveIn,
    principal: ApproverDep,
    rt: RuntimeDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Approves the preview as reviewed: `content_hash` must be the stored one (`409
    preview-mismatch`); the run's creator may not approve its own run's calls (`403`);
    an expired preview cannot be approved (`410 preview-expired`). Nothing runs yet: a
    commit executes the call."""

    async def operation(claim: Claim | None) -> JSONResponse:
        record = await decisions.approve(
            rt,
            principal=principal,
            preview_id=preview_id,
            content_hash=body.content_hash,
            claim=claim,
        )
        return JSONResponse(_json(rt, record))

    return await run_idempotent(request, rt, principal, operation, required=False, validated=body)


@router.post(
    "/v1/previews/{preview_id}/reject",
    response_model=PreviewOut,
    responses=problems(400, 401, 403, 404, 409, 410, 413, 415, 422),
)
async def reject_preview(
    preview_id: str,
    body: RejectIn,
    principal: ApproverDep,
    rt: RuntimeDep,
    driver: DriverDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Rejects the preview: its call ends `rejected` with code `rejected_by_approver` and
    the reason as its message, which the model sees; the run goes on."""

    async def operation(claim: Claim | None) -> JSONResponse:
        record = await decisions.reject(
            rt, principal=principal, preview_id=preview_id, reason=body.reason, claim=claim
        )
        driver.kick(record.tenant_id, record.run_id)
        return JSONResponse(_json(rt, record))

    return await run_idempotent(request, rt, principal, operation, required=False, validated=body)


@router.post(
    "/v1/previews/{preview_id}/revise",
    response_model=ReviseOut,
    responses=problems(400, 401, 403, 404, 409, 410, 413, 415, 422),
)
async def revise_preview(
    preview_id: str,
    body: ReviseIn,
    principal: ApproverDep,
    rt: RuntimeDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Revises the pending preview's call: its new `arguments` go through a proposal's
    checks (schema, the tool's semantic check, the run creator's scopes, the switches,
    the guardrails) and the tool previews them. The pending preview becomes `superseded`
    and the answer is the new one, with its own `content_hash`, needing its own approvals;
    the model is told what the approver changed and why. A failed check, or a tool that
    cannot preview them, is `422` and nothing changes."""

    async def operation(claim: Claim | None) -> JSONResponse:
        made = await revisions.revise(
            rt,
            principal=principal,
            preview_id=preview_id,
            arguments=body.arguments,
            reason=body.reason,
            claim=claim,
        )
        return JSONResponse({"preview": _json(rt, made)})

    return await run_idempotent(request, rt, principal, operation, required=False, validated=body)


@router.post(
    "/v1/previews/{preview_id}/commit",
    response_model=CommitOut,
    responses=problems(400, 401, 403, 404, 409, 410, 413, 415, 422),
)
async def commit_preview(
    preview_id: str,
    principal: CommitterDep,
    rt: RuntimeDep,
    driver: DriverDep,
    request: Request,
    idempotency_key: RequiredIdempotencyKey,
    body: CommitIn = _NO_COMMIT_BODY,
) -> Any:
    """Executes the approved call — exactly the approved arguments, once, whoever else
    tries — then advances the run for up to `wait_s`. Only an approved, unexpired preview
    can be committed (`409 preview-not-approved`, `410 preview-expired`); a resource that
    changed since the preview answers `409 version-conflict` with `new_preview_id`, a new
    preview to review. `Idempotency-Key` is required."""
    wait_s = body.wait_s

    async def operation(claim: Claim | None) -> JSONResponse:
        assert claim is not None  # the key is required
        done = await decisions.commit(
            rt, driver, principal=principal, preview_id=preview_id, key=claim.key, wait_s=wait_s
        )
        return JSONResponse(
            {
                "preview": _json(rt, done.preview),
                "call": CallOut.model_validate(call_view(done.call)).model_dump(mode="json"),
                "run": await run_answer(rt, done.run),
            }
        )

    return await run_idempotent(request, rt, principal, operation, required=True, validated=body)
