"""Runs: create, read, list, timeline, calls, advance, cancel."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Response

from app.api.deps import CallerDep, DriverDep, ReaderDep, RuntimeDep
from app.api.responses import problems
from app.api.schemas import (
    AdvanceIn,
    CallPage,
    CreateRunIn,
    EventPage,
    RunOut,
    RunPage,
)
from app.api.views import call_view, run_view
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.status import ACTIVE_RUN_STATUSES, RunStatus
from app.engine import runs

router = APIRouter(prefix="/v1/runs", tags=["runs"])

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="1–255 visible ASCII characters; a retry with the same key is safe.",
        max_length=257,
    ),
]
Limit = Annotated[int, Query(ge=1, le=200, description="Items per page (default 50).")]

_UNSUPPORTED = ("parent_run_id", "continue_from")


def _refuse_unsupported(body: CreateRunIn) -> None:
    errors = [
        FieldError(name, "not supported by this build yet")
        for name in _UNSUPPORTED
        if getattr(body, name) is not None
    ]
    if body.data_policy:
        errors.append(FieldError("data_policy", "not supported by this build yet"))
    if body.consistency == "snapshot":
        errors.append(
            FieldError("consistency", "snapshot reads are not supported by this build yet")
        )
    if errors:
        raise DomainError(ErrorCode.VALIDATION, "some fields are not supported yet", errors)


@router.post("", status_code=201, response_model=RunOut, responses=problems(400, 401, 403, 422))
async def create_run(
    body: CreateRunIn,
    principal: CallerDep,
    rt: RuntimeDep,
    driver: DriverDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Creates a run and advances it for up to `wait_s`; the answer is the run as it
    stands then, while its step goes on under its lease."""
    _refuse_unsupported(body)
    request = runs.CreateRun(
        agent=body.agent,
        input=body.input,
        tools=body.tools,
        limits=body.limits.model_dump(exclude_none=True) if body.limits else None,
        metadata=body.metadata,
        script=[item.model_dump(exclude_none=True) for item in body.script]
        if body.script is not None
        else None,
    )
    record = await runs.start_run(rt, principal=principal, request=request)
    driver.kick(principal.tenant_id, record.id)
    record = await driver.wait(principal.tenant_id, record.id, body.wait_s)
    response.headers["Location"] = f"/v1/runs/{record.id}"
    return run_view(record)


@router.get("", response_model=RunPage, responses=problems(400, 401, 403, 422))
async def list_runs(
    principal: ReaderDep,
    rt: RuntimeDep,
    status: Annotated[RunStatus | None, Query()] = None,
    agent: Annotated[str | None, Query(max_length=64)] = None,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> Any:
    rows, next_cursor = await runs.list_runs(
        rt, principal=principal, status=status, agent=agent, limit=limit, cursor=cursor
    )
    return {"items": [run_view(r) for r in rows], "next_cursor": next_cursor}


@router.get("/{run_id}", response_model=RunOut, responses=problems(401, 403, 404))
async def get_run(run_id: str, principal: ReaderDep, rt: RuntimeDep) -> Any:
    return run_view(await runs.get_run(rt, principal=principal, run_id=run_id))


@router.get(
    "/{run_id}/events", response_model=EventPage, responses=problems(400, 401, 403, 404, 422)
)
async def list_events(
    run_id: str,
    principal: ReaderDep,
    rt: RuntimeDep,
    after: Annotated[int, Query(ge=0, description="Only events with a greater seq.")] = 0,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> Any:
    rows, next_cursor = await runs.list_events(
        rt, principal=principal, run_id=run_id, after=after, limit=limit, cursor=cursor
    )
    return {"items": [dict(r) for r in rows], "next_cursor": next_cursor}


@router.get("/{run_id}/calls", response_model=CallPage, responses=problems(400, 401, 403, 404, 422))
async def list_calls(
    run_id: str,
    principal: ReaderDep,
    rt: RuntimeDep,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> Any:
    rows, next_cursor = await runs.list_calls(
        rt, principal=principal, run_id=run_id, limit=limit, cursor=cursor
    )
    return {"items": [call_view(r) for r in rows], "next_cursor": next_cursor}


@router.post(
    "/{run_id}/advance", response_model=RunOut, responses=problems(400, 401, 403, 404, 409, 422)
)
async def advance_run(
    run_id: str,
    principal: CallerDep,
    rt: RuntimeDep,
    driver: DriverDep,
    body: AdvanceIn | None = None,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Advances a queued or running run for up to `wait_s`."""
    record = await runs.get_run(rt, principal=principal, run_id=run_id)
    if record.status not in ACTIVE_RUN_STATUSES:
        raise DomainError(ErrorCode.INVALID_STATE, f"a {record.status} run cannot be advanced")
    driver.kick(principal.tenant_id, run_id)
    record = await driver.wait(principal.tenant_id, run_id, (body or AdvanceIn()).wait_s)
    return run_view(record)


@router.post("/{run_id}/cancel", response_model=RunOut, responses=problems(400, 401, 403, 404, 409))
async def cancel_run(
    run_id: str,
    principal: CallerDep,
    rt: RuntimeDep,
    driver: DriverDep,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Cancels the run: it ends `cancelled` as soon as in-flight work can stop."""
    await runs.request_cancel(rt, principal=principal, run_id=run_id)
    driver.interrupt(principal.tenant_id, run_id)
    driver.kick(principal.tenant_id, run_id)
    record = await driver.wait(principal.tenant_id, run_id, CANCEL_WAIT_S)
    return run_view(record)


CANCEL_WAIT_S = 5.0
