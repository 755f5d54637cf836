"""The ExecuteCalls step: run a turn's accepted calls, outside any transaction, with each
start and outcome committed on its own. Read-only calls run concurrently (bounded by the
process-wide and per-group limits); side-effecting ones one at a time in proposal order."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from app.db import runs_repo, turns_repo
from app.db.runs_repo import RunRecord
from app.domain.budget import seconds_left
from app.domain.citations import number_sources
from app.domain.ports import Tool, ToolContext
from app.domain.retry import backoff_s, ends_run, may_retry
from app.domain.status import CallStatus, check_call_transition
from app.domain.tools import ToolError, ToolResult, json_depth, nul_path
from app.engine.lease import Interrupted, Lease

log = logging.getLogger(__name__)
MAX_MESSAGE = 500
MAX_OUTPUT_DEPTH = 64


OUTCOME_UNKNOWN = ToolError(
    "outcome_unknown", "the call's outcome is unknown and it may not be sent again", fatal=True
)


class DeadlineReached(Exception):
    pass


async def execute_calls(lease: Lease, run: RunRecord, step: int) -> None:
    rt = lease.rt
    async with rt.sessions() as session:
        calls = await turns_repo.calls(session, tenant_id=run.tenant_id, run_id=run.id, step=step)
    todo = [c for c in calls if c["status"] in (CallStatus.PENDING, CallStatus.EXECUTING)]
    reads = [c for c in todo if rt.tools[c["tool"]].spec.read_only]
    writes = [c for c in todo if not rt.tools[c["tool"]].spec.read_only]
    # Every call runs to its own outcome; an interruption (cancel, lost lease) stops the
    # others through the lease's stop signal, and is raised once all have settled.
    outcomes = await asyncio.gather(
        *(_bounded(lease, run, c) for c in reads), return_exceptions=True
    )
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    for call in writes:
        if not await _run_call(lease, run, call):
            break
    await _number_sources(lease, run, step)


async def _bounded(lease: Lease, run: RunRecord, call: Mapping[str, Any]) -> bool:
    spec = lease.rt.tools[call["tool"]].spec
    group = lease.rt.group_slots(spec.concurrency_group or spec.name, spec.max_concurrency)
    async with lease.rt.tool_slots, group:
        return await _run_call(lease, run, call)


async def _run_call(lease: Lease, run: RunRecord, call: Mapping[str, Any]) -> bool:
    """Runs one call to an outcome; False when the run must not go on with later calls."""
    rt = lease.rt
    tool = rt.tools[call["tool"]]
    if call["status"] == CallStatus.EXECUTING and not tool.spec.may_retry:
        # The earlier holder may have sent it: never re-send a side effect blindly.
        await _record_failure(lease, call, OUTCOME_UNKNOWN)
        return False
    if call["status"] == CallStatus.EXECUTING and call["attempts"] >= tool.spec.max_attempts:
        # Interrupted on every attempt (e.g. it takes its process down): stop retrying.
        await _record_failure(
            lease, call, ToolError("interrupted", "the call was interrupted on every attempt")
        )
        return False
    while True:
        lease.check()  # nothing new starts once the run is stopping
        call = await _record_start(lease, call)
        try:
            result = await _invoke(lease, run, tool, call)
        except ToolError as error:
            left = seconds_left(rt.clock.now(), run.deadline_at)
            if may_retry(tool.spec, error, attempts=call["attempts"], seconds_left=left):
                await lease.guarded(asyncio.sleep(backoff_s(call["attempts"])), left)
                continue
            await _record_failure(lease, call, error, ends=ends_run(tool.spec, error))
            return not ends_run(tool.spec, error)
        except DeadlineReached:
            return False
        await _record_success(lease, call, result)
        return True


async def _invoke(lease: Lease, run: RunRecord, tool: Tool, call: Mapping[str, Any]) -> ToolResult:
    rt = lease.rt
    left = seconds_left(rt.clock.now(), run.deadline_at)
    timeout = min(tool.spec.timeout_s, left)
    context = ToolContext(
        tenant_id=run.tenant_id,
        run_id=run.id,
        step=call["step"],
        call_id=call["call_id"],
        operation_id=call["operation_id"],
        principal=run.creator,
    )
    try:
        result = await lease.guarded(tool.execute(call["arguments"], context), timeout)
    except TimeoutError:
        if timeout >= left:
            raise DeadlineReached() from None
        if not tool.spec.may_retry:
            raise OUTCOME_UNKNOWN from None  # it may have happened: never sent twice
        raise ToolError("timeout", "the tool did not answer in time", retryable=True) from None
    except (ToolError, Interrupted):
        raise
    except Exception:
        log.exception("tool %s raised unexpectedly", tool.spec.name)
        raise ToolError("internal", "the tool failed unexpectedly") from None
    _check_output(tool, result.output)
    return result


def _check_output(tool: Tool, output: Any) -> None:
    if nul_path(output) is not None or json_depth(output) > MAX_OUTPUT_DEPTH:
        raise ToolError("invalid_output", "the tool's output is not storable JSON")
    size = len(json.dumps(output, separators=(",", ":")).encode())
    if size > tool.spec.max_output_bytes:
        raise ToolError(
            "invalid_output", f"the tool's output is larger than {tool.spec.max_output_bytes} bytes"
        )
    if tool.spec.output_schema is not None:
        error = next(iter(Draft202012Validator(tool.spec.output_schema).iter_errors(output)), None)
        if error is not None:
            raise ToolError("invalid_output", "the tool's output does not match its output schema")


async def _settle(
    lease: Lease,
    call: Mapping[str, Any],
    target: CallStatus,
    values: Mapping[str, Any],
    event: str,
    data: Mapping[str, Any],
    run_values: Mapping[str, Any] | None = None,
) -> Mapping[str, Any]:
    """One transition of a call with its event, in one transaction under the lease."""
    check_call_transition(CallStatus(call["status"]), target)
    async with lease.rt.sessions.begin() as session:
        updated = await turns_repo.update_call(
            session,
            tenant_id=lease.tenant_id,
            call_pk=call["id"],
            version=call["version"],
            now=lease.rt.clock.now(),
            values={"status": target, **values},
        )
        about = {"step": call["step"], "call_id": call["call_id"], "tool": call["tool"]}
        await lease.write(session, values=run_values, events=[(event, {**about, **data})])
    return updated


async def _record_start(lease: Lease, call: Mapping[str, Any]) -> Mapping[str, Any]:
    attempt = call["attempts"] + 1
    # usage.tool_calls counts a call once, however many attempts it takes.
    # A tool's cost is charged when it is first sent, like the count.
    spec = lease.rt.tools[call["tool"]].spec
    counted = (
        {
            "tool_calls": runs_repo.run_column("tool_calls") + 1,
            "cost_usd": runs_repo.run_column("cost_usd") + spec.cost_usd,
        }
        if attempt == 1
        else None
    )
    return await _settle(
        lease,
        call,
        CallStatus.EXECUTING,
        {"attempts": attempt},
        "call.started",
        {"attempt": attempt},
        counted,
    )


async def _record_success(lease: Lease, call: Mapping[str, Any], result: ToolResult) -> None:
    values = {
        "output": result.output,
        "error": None,
        "observed_at": result.observed_at,
        "source_version": result.source_version,
    }
    await _settle(
        lease, call, CallStatus.SUCCEEDED, values, "call.succeeded", {"attempts": call["attempts"]}
    )


async def _record_failure(
    lease: Lease, call: Mapping[str, Any], error: ToolError, *, ends: bool = True
) -> None:
    body = {
        "code": error.code,
        "retryable": error.retryable,
        "message": error.message.replace("\x00", "")[:MAX_MESSAGE],
    }
    await _settle(
        lease,
        call,
        CallStatus.FAILED,
        {"error": body, "ends_run": ends},
        "call.failed",
        {**body, "ends_run": ends},
    )


async def _number_sources(lease: Lease, run: RunRecord, step: int) -> None:
    """Source ids go to successes in proposal order, whatever order they finished in."""
    async with lease.rt.sessions.begin() as session:
        calls = await turns_repo.calls(session, tenant_id=run.tenant_id, run_id=run.id, step=step)
        todo = [c for c in calls if c["status"] == CallStatus.SUCCEEDED and c["source_id"] is None]
        if not todo:
            return
        record = await runs_repo.get(session, run.tenant_id, run.id)
        assert record is not None
        ids = number_sources(record.next_source, len(todo))
        now = lease.rt.clock.now()
        for call, sid in zip(todo, ids, strict=True):
            await turns_repo.update_call(
                session,
                tenant_id=run.tenant_id,
                call_pk=call["id"],
                version=call["version"],
                now=now,
                values={"source_id": sid},
            )
        await lease.write(
            session,
            values={"next_source": record.next_source + len(todo)},
            events=[
                (
                    "sources.assigned",
                    {
                        "step": step,
                        "sources": {c["call_id"]: sid for c, sid in zip(todo, ids, strict=True)},
                    },
                )
            ],
        )
