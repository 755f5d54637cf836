"""Runs: create, read, list, timeline, calls, diagnosis, advance, cancel."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import JSONResponse

from app.api.deps import (
    CallerDep,
    DriverDep,
    KeyRecheckDep,
    ReaderDep,
    RuntimeDep,
    StreamsDep,
)
from app.api.event_stream import LastEventId, frame, open_stream, streamed, wants_stream
from app.api.fast_json import FastJSONResponse
from app.api.idempotency import IdempotencyKey, RequiredIdempotencyKey, run_idempotent
from app.api.responses import problems
from app.api.schemas.runs import (
    AdvanceIn,
    CallPage,
    CreateRunIn,
    DiagnosisOut,
    EventOut,
    EventPage,
    RunOut,
    RunPage,
)
from app.api.views import call_view, run_view
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.lifecycle.records import Preview, Run
from app.domain.lifecycle.status import ACTIVE_RUN_STATUSES, RunStatus
from app.domain.tools.specs import Principal
from app.engine.access.idempotency import Claim
from app.engine.approvals import decisions
from app.engine.driver import Driver
from app.engine.events.event_feeds import RunFeed
from app.engine.forensics.diagnosis import diagnose_run
from app.engine.lifecycle import runs
from app.engine.process.runtime import Runtime

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1/runs", tags=["runs"])
_NO_ADVANCE_BODY = AdvanceIn()  # the body is optional: its defaults when none is sent

Limit = Annotated[int, Query(ge=1, le=200, description="Items per page (default 50).")]

MAX_SEQ = 2**31 - 1


def run_json(record: Run, pending: Sequence[Preview] = ()) -> dict[str, Any]:
    return RunOut.model_validate(run_view(record, pending)).model_dump(mode="json")


async def run_answer(rt: Runtime, record: Run) -> dict[str, Any]:
    """The run as answered, with its pending approvals when it is parked."""
    pending = await decisions.pending_of(rt, [record])
    return run_json(record, pending.get(record.id, []))


@router.post(
    "",
    status_code=201,
    response_model=RunOut,
    responses=problems(400, 401, 403, 404, 409, 413, 415, 422, 429),
)
async def create_run(
    body: CreateRunIn,
    principal: CallerDep,
    rt: RuntimeDep,
    driver: DriverDep,
    request: Request,
    idempotency_key: RequiredIdempotencyKey,
) -> Any:
    """Creates a run and advances it for up to `wait_s`; the answer is the run as it
    stands then, while its step goes on under its lease. `Idempotency-Key` is required:
    a retry with the same key and body answers the same run, never a second one."""
    create = runs.CreateRun(
        agent=body.agent,
        input=body.input,
        tools=body.tools,
        limits=body.limits.model_dump(exclude_none=True) if body.limits else None,
        metadata=body.metadata,
        data_policy=tuple(body.data_policy or ()),
        consistency=body.consistency or "latest",
        parent_run_id=body.parent_run_id,
        continue_from=body.continue_from,
        script=[item.model_dump(exclude_none=True) for item in body.script]
        if body.script is not None
        else None,
    )

    async def operation(claim: Claim | None) -> JSONResponse:
        if claim is not None and claim.resource_id is not None:
            # An earlier holder of this key created the run, then stopped: answer it.
            record = await runs.get_run(rt, principal=principal, run_id=claim.resource_id)
            record = await _advance(driver, record, body.wait_s)
        else:
            record = await _start(rt, driver, principal, create, claim, body.wait_s)
        return FastJSONResponse(
            await run_answer(rt, record),
            status_code=201,
            headers={"Location": f"/v1/runs/{record.id}"},
        )

    # Under quotas the key is claimed before anything else (one more statement): a replay
    # or a retry in flight is answered from it and takes no slot of the tenant's quota.
    return await run_idempotent(
        request,
        rt,
        principal,
        operation,
        required=True,
        creates=rt.config.quotas is None,
        validated=body,
    )


async def _start(
    rt: Runtime,
    driver: Driver,
    principal: Principal,
    create: runs.CreateRun,
    claim: Claim | None,
    wait_s: float,
) -> Run:
    """Creates the run already leased to this process when it has room to advance it (no
    claim of its own needed), else queued for any driver; then waits up to `wait_s`."""
    lease = driver.reserve()
    try:
        started = await runs.start_run(
            rt, principal=principal, request=create, claim=claim, lease=lease
        )
    finally:
        if lease:
            driver.unreserve()
    record = started.run
    if started.lease is not None and started.state is not None:
        driver.adopt(started.lease, started.state)
    return await _wait(driver, record, wait_s)


async def _advance(driver: Driver, record: Run, wait_s: float) -> Run:
    """Advances for up to `wait_s`."""
    driver.kick(record.tenant_id, record.id)
    return await _wait(driver, record, wait_s)


async def _wait(driver: Driver, record: Run, wait_s: float) -> Run:
    """Once the run exists, a failure here is the run's business (it is recorded there),
    never a 5xx that would invite a second run."""
    try:
        return await driver.wait(record.tenant_id, record.id, wait_s, known=record)
    except Exception:
        log.warning("waiting on a run failed; answering it as it was", exc_info=True)
        return record


@router.get("", response_model=RunPage, responses=problems(400, 401, 403, 422))
async def list_runs(
    principal: ReaderDep,
    rt: RuntimeDep,
    status: Annotated[RunStatus | None, Query()] = None,
    agent: Annotated[str | None, Query(max_length=64)] = None,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    parent_run_id: Annotated[
        str | None, Query(max_length=64, description="Only this run's children.")
    ] = None,
) -> Any:
    rows, next_cursor = await runs.list_runs(
        rt,
        principal=principal,
        status=status,
        agent=agent,
        limit=limit,
        cursor=cursor,
        parent_run_id=parent_run_id,
    )
    pending = await decisions.pending_of(rt, rows)
    return {"items": [run_view(r, pending.get(r.id, [])) for r in rows], "next_cursor": next_cursor}


@router.get("/{run_id}", response_model=RunOut, responses=problems(401, 403, 404))
async def get_run(run_id: str, principal: ReaderDep, rt: RuntimeDep) -> Any:
    return await run_answer(rt, await runs.get_run(rt, principal=principal, run_id=run_id))


@router.get(
    "/{run_id}/events",
    response_model=EventPage,
    responses={
        **problems(400, 401, 403, 404, 422, 429),
        **streamed(
            "The timeline: a page of JSON, or with `Accept: text/event-stream` Server-Sent "
            "Events (`id:` the seq, `event:` the type, `data:` the event), history first, "
            "then new events as they are committed; a `: ping` every 15 s; the stream ends "
            "after `run.finished`."
        ),
        204: {
            "description": "A stream of a finished run asked for what comes after its "
            "last event: there is nothing more (SSE clients stop reconnecting)."
        },
    },
)
async def list_run_events(
    run_id: str,
    principal: ReaderDep,
    rt: RuntimeDep,
    streams: StreamsDep,
    still_valid: KeyRecheckDep,
    request: Request,
    after: Annotated[
        int, Query(ge=0, le=MAX_SEQ, description="Only events with a greater seq.")
    ] = 0,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    last_event_id: LastEventId = None,  # type: ignore[assignment]
) -> Any:
    if wants_stream(request):
        resume = _seq_of(last_event_id) if last_event_id else 0
        if cursor:
            resume = max(resume, runs.seq_of_cursor(cursor))
        feed = RunFeed(rt, principal, run_id, max(after, resume))
        return await open_stream(
            streams,
            feed,
            (principal.tenant_id, run_id),
            framed=functools.partial(frame, EventOut, "seq"),
            still_valid=still_valid,
        )
    rows, next_cursor = await runs.list_events(
        rt, principal=principal, run_id=run_id, after=after, limit=limit, cursor=cursor
    )
    return {"items": [r.as_item() for r in rows], "next_cursor": next_cursor}


@router.get("/{run_id}/calls", response_model=CallPage, responses=problems(400, 401, 403, 404, 422))
async def list_run_calls(
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


@router.get("/{run_id}/diagnosis", response_model=DiagnosisOut, responses=problems(401, 403, 404))
async def get_run_diagnosis(run_id: str, principal: ReaderDep, rt: RuntimeDep) -> Any:
    """Why the run went as it did, from its own events: the first deviation (even one it
    recovered from), the root cause (the earliest anomaly never recovered from) and the
    terminal cause (its termination reason, at `run.finished`). Each is an event's `seq`,
    a category of a fixed taxonomy and a one-line explanation, or null."""
    found = await diagnose_run(rt, principal=principal, run_id=run_id)
    return asdict(found)


@router.post(
    "/{run_id}/advance",
    response_model=RunOut,
    responses=problems(400, 401, 403, 404, 409, 413, 415, 422),
)
async def advance_run(
    run_id: str,
    principal: CallerDep,
    rt: RuntimeDep,
    driver: DriverDep,
    request: Request,
    body: AdvanceIn = _NO_ADVANCE_BODY,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Advances a queued or running run for up to `wait_s`."""

    async def operation(_claim: Claim | None) -> JSONResponse:
        record = await runs.get_run(rt, principal=principal, run_id=run_id)
        if record.status not in ACTIVE_RUN_STATUSES:
            raise DomainError(ErrorCode.INVALID_STATE, f"a {record.status} run cannot be advanced")
        record = await _advance(driver, record, body.wait_s)
        return JSONResponse(await run_answer(rt, record))

    return await run_idempotent(request, rt, principal, operation, required=False, validated=body)


@router.post(
    "/{run_id}/cancel",
    response_model=RunOut,
    responses=problems(400, 401, 403, 404, 409, 413, 415),
)
async def cancel_run(
    run_id: str,
    principal: CallerDep,
    rt: RuntimeDep,
    driver: DriverDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Cancels the run (a finished run: `409 invalid-state`); it ends `cancelled` as soon
    as in-flight work can stop. The answer is the run after up to 5 s."""

    async def operation(_claim: Claim | None) -> JSONResponse:
        record = await runs.request_cancel(rt, principal=principal, run_id=run_id)
        driver.interrupt(principal.tenant_id, run_id)
        record = await _advance(driver, record, CANCEL_WAIT_S)
        return JSONResponse(await run_answer(rt, record))

    return await run_idempotent(request, rt, principal, operation, required=False)


CANCEL_WAIT_S = 5.0


# An id this stream gave out: plain ASCII digits. `str.isdigit` would take `²` (which
# int() refuses) and `١٢` (which it reads as 12).
_SEQ = re.compile(r"[0-9]{1,10}")


def _seq_of(last_event_id: str) -> int:
    if not _SEQ.fullmatch(last_event_id) or int(last_event_id) > MAX_SEQ:
        raise DomainError(
            ErrorCode.VALIDATION,
            "some fields are invalid",
            [FieldError("Last-Event-ID", "not an event id of this run's stream")],
        )
    return int(last_event_id)
