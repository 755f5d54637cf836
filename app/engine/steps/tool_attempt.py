"""One attempt of one tool call: its context, its deadline, its `execute_tool` span, and
the checks its output passes before anything keeps it."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import Status, StatusCode

from app.db.errors import is_database_outage
from app.domain.approvals.previews import PreviewRef
from app.domain.errors import ToolgateError
from app.domain.lifecycle import settle
from app.domain.lifecycle.records import Call
from app.domain.lifecycle.status import CallStatus
from app.domain.limits.budget import seconds_left
from app.domain.ports import StatusLookup, Tool, ToolContext
from app.domain.tools import schema_validator
from app.domain.tools.specs import (
    OutputRefused,
    Principal,
    SentUnanswered,
    ToolError,
    ToolResult,
    scan,
)
from app.engine import off_loop
from app.engine.process.lease import Interrupted, Lease
from app.engine.steps.state import RunState
from app.observability import telemetry

log = logging.getLogger(__name__)
MAX_OUTPUT_DEPTH = 64

OUTCOME_UNKNOWN = ToolError(settle.OUTCOME_UNKNOWN, settle.UNKNOWN_MESSAGE, fatal=True)


class DeadlineReached(ToolgateError):
    pass


@dataclass(frozen=True)
class Unanswered(ToolError):
    """The request may have arrived and no answer came (a timeout, a connection lost),
    for a call that may simply be sent again (read-only, or idempotent without a lookup).
    A side effect's earlier attempt that ended so may have taken effect."""


def context_of(
    state: RunState, call: Call, timeout_s: float | None = None, *, reads: bool = False
) -> ToolContext:
    """The call's context; an approved call's carries the preview approved and its
    approver (the run's creator stays the principal). A read (`reads`: a read-only tool's
    execution) of a snapshot run carries its `as_of` and snapshot; nothing else does: a
    side effect, its preview and its lookup act on the data as it is now, never on what
    the model saw."""
    run = state.run
    pinned = reads and run.as_of is not None
    preview = state.preview_of(call)
    approved = (
        preview is not None
        and preview.decided_by is not None
        and call.status
        in (
            CallStatus.APPROVED,
            CallStatus.EXECUTING,
        )
    )
    return ToolContext(
        tenant_id=run.tenant_id,
        run_id=run.id,
        step=call.step,
        call_id=call.call_id,
        operation_id=call.operation_id,
        principal=run.creator,
        timeout_s=timeout_s,
        preview=PreviewRef(preview.id, preview.resource_version) if approved else None,
        approved_by=Principal(run.tenant_id, preview.decided_by) if approved else None,
        as_of=run.as_of if pinned else None,
        snapshot=run.read_snapshot if pinned else None,
        child_script=_child_script(state, call),
    )


def _child_script(state: RunState, call: Call) -> tuple[Mapping[str, Any], ...] | None:
    """The script a scripted turn gave this call for the child it delegates to: the turn
    is the run's last recorded model outcome (calls run before the next model call)."""
    script, at = state.script, state.run.model_calls - 1
    if not script or not 0 <= at < len(script):
        return None
    for proposed in script[at].get("calls") or ():
        if proposed.get("id") == call.call_id and proposed.get("name") == call.tool:
            child = proposed.get("script")
            return None if child is None else tuple(child)
    return None


async def invoke(lease: Lease, state: RunState, tool: Tool, call: Call) -> ToolResult:
    """One attempt, in its own `execute_tool` span (arguments and result as hashes)."""
    capture = lease.rt.capture
    attributes: dict[str, Any] = {
        telemetry.OPERATION: "execute_tool",
        telemetry.TOOL: tool.spec.name,
        telemetry.TOOL_CALL: call.call_id,
        telemetry.STEP: call.step,
        telemetry.ATTEMPT: call.attempts,
    }
    preview = state.preview_of(call)
    if preview is not None:  # an approved call: how long it waited for its approval
        waited = lease.rt.clock.now() - preview.created_at
        attributes[telemetry.APPROVAL_WAIT] = max(0.0, waited.total_seconds())
    with lease.rt.tracer.start_as_current_span(
        f"execute_tool {tool.spec.name}", kind=telemetry.INTERNAL, attributes=attributes
    ) as span:
        # Hashing and sizing the content is for spans that are kept: none by default.
        recording = span.is_recording()
        if recording:
            args_hash, args_size = telemetry.digest(call.arguments)
            span.set_attributes({telemetry.ARGS_HASH: args_hash, telemetry.ARGS_SIZE: args_size})
            if capture.enabled:
                span.set_attribute(telemetry.TOOL_ARGUMENTS, capture.text(call.arguments))
        # Errors leave the span's block as values: the domain's frozen exceptions cannot
        # pass through a context manager's re-raise.
        stopped: BaseException | None = None
        try:
            result = await _attempt(lease, state, tool, call)
        except ToolError as error:
            span.set_attributes(
                {telemetry.ERROR_TYPE: error.code, telemetry.RETRYABLE: error.retryable}
            )
            span.set_status(Status(StatusCode.ERROR))
            stopped = error
        except (DeadlineReached, Interrupted) as stop:
            span.set_attribute(telemetry.ERROR_TYPE, type(stop).__name__)
            stopped = stop
        else:
            if recording:
                result_hash, result_size = telemetry.digest(result.output)
                span.set_attributes(
                    {telemetry.RESULT_HASH: result_hash, telemetry.RESULT_SIZE: result_size}
                )
                if capture.enabled:  # the checked output: the raw answer is never kept
                    span.set_attribute(telemetry.TOOL_RESULT, capture.text(result.output))
    if stopped is not None:
        raise stopped
    return result


async def _attempt(lease: Lease, state: RunState, tool: Tool, call: Call) -> ToolResult:
    rt = lease.rt
    run = state.run
    left = seconds_left(rt.clock.now(), run.deadline_at)
    timeout = min(tool.spec.timeout_s, left)
    try:
        context = context_of(state, call, timeout, reads=tool.spec.read_only)
        result = await lease.guarded(tool.execute(call.arguments, context), timeout)
        await check_output(tool, result.output)
    except OutputRefused as refused:
        if tool.spec.read_only:
            raise
        return ToolResult.withholding(refused)  # it took effect: never sent again
    except TimeoutError:
        if timeout >= left:
            raise DeadlineReached() from None
        raise _unanswered(
            tool, Unanswered("timeout", "the tool did not answer in time", retryable=True)
        ) from None
    except SentUnanswered:
        raise _unanswered(
            tool, Unanswered("connection_lost", "the tool's answer was lost on the way", True)
        ) from None
    except (ToolError, Interrupted):
        raise
    except Exception as exc:
        if tool.spec.may_retry and is_database_outage(exc):
            # A built-in tool met an outage (a failover, its connection ended): not the
            # tool's fault, so tried again after backoff like any transient failure, and
            # within `max_attempts` (a statement that always fails so ends, told).
            log.warning("tool %s met a database outage; it may be tried again", tool.spec.name)
            raise DATABASE_UNAVAILABLE from None
        log.exception("tool %s raised unexpectedly", tool.spec.name)
        if not tool.spec.may_retry:
            raise OUTCOME_UNKNOWN from None  # it may have taken effect before it failed
        raise ToolError("internal", "the tool failed unexpectedly") from None
    return result


#: What a built-in tool's call, or its preview, hears of an outage it met.
DATABASE_UNAVAILABLE = ToolError(
    "unavailable", "the database did not answer; the call may be tried again", retryable=True
)


def has_lookup(tool: Tool) -> bool:
    return isinstance(tool, StatusLookup) and bool(getattr(tool, "looks_up", False))


def _unanswered(tool: Tool, error: ToolError) -> ToolError:
    """A request that may have arrived and got no answer. A side effect's outcome is
    unknown: it is looked up before anything is sent again (an idempotent one too, when
    its backend can be asked); only an idempotent one without a lookup is simply re-sent,
    under the same operation id, which its backend dedupes."""
    spec = tool.spec
    if spec.read_only or (spec.idempotent and not has_lookup(tool)):
        return error
    return OUTCOME_UNKNOWN


async def check_output(tool: Tool, output: Any) -> None:
    """Whether the output may be kept (storable, within its size bound, valid against its
    schema): off the loop when it is large (`engine.off_loop`)."""
    try:
        text: str | None = json.dumps(output, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        text = None  # too deep: the walk off the loop says so
    size = off_loop.THRESHOLD if text is None else len(text)
    await off_loop.run(size, _check_output, tool, output, text)


def _check_output(tool: Tool, output: Any, text: str | None) -> None:
    depth, nan, unstorable = scan(output)  # one walk for both checks
    if nan or unstorable or depth > MAX_OUTPUT_DEPTH or text is None:
        raise OutputRefused("invalid_output", "the tool's output is not storable JSON")
    size = len(text.encode())
    if size > tool.spec.max_output_bytes:
        raise OutputRefused(
            "output_too_large",
            f"the tool's output is larger than {tool.spec.max_output_bytes} bytes",
        )
    schema = tool.spec.output_schema
    if schema is not None and not schema_validator.fits(schema, output):
        raise OutputRefused("invalid_output", "the tool's output does not match its output schema")
