"""The ExecuteCalls step: run a turn's accepted calls outside any transaction.

Read-only calls run concurrently (bounded by the process-wide and per-group limits) and
are recorded together, with their source ids, in one transaction at the end of the round:
after a crash they are simply run again. A side-effecting call is committed `executing`
before its request leaves and its outcome right after; side effects run one at a time in
proposal order, after the reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from opentelemetry.trace import Status, StatusCode

from app import telemetry
from app.db.runs_repo import Event
from app.domain.budget import seconds_left
from app.domain.citations import number_sources
from app.domain.errors import ErrorValue, ObservationCode
from app.domain.ports import OperationStatus, StatusLookup, Tool, ToolContext
from app.domain.records import Call, add_cost
from app.domain.retry import backoff_s, ends_run, may_retry
from app.domain.status import CallStatus, check_call_transition
from app.domain.tools import (
    SentUnanswered,
    ToolError,
    ToolResult,
    json_depth,
    nul_path,
    validator_for,
)
from app.engine.commit import Change, commit
from app.engine.lease import Interrupted, Lease, NotStarted
from app.engine.state import RunState

log = logging.getLogger(__name__)
MAX_OUTPUT_DEPTH = 64


OUTCOME_UNKNOWN = ToolError(
    "outcome_unknown", "the call's outcome is unknown and it may not be sent again", fatal=True
)


NEVER_RECEIVED = ToolError(
    "unavailable", "the tool's backend did not receive the call in its attempts", retryable=True
)
TOOL_UNAVAILABLE = ToolError(
    "tool_unavailable", "the call's tool is no longer configured", fatal=True
)


class DeadlineReached(Exception):
    pass


@dataclass
class Round:
    """The round's outcomes not yet committed: calls, counters and events."""

    lease: Lease
    state: RunState
    calls: dict[str, Call] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    tool_calls: int = 0
    cost_usd: float = 0.0

    def current(self, call: Call) -> Call:
        return self.calls.get(call.id, call)

    def move(
        self, call: Call, target: CallStatus, event: str, data: dict[str, Any], **values: Any
    ) -> Call:
        check_call_transition(call.status, target)
        moved = replace(call, status=target, updated_at=self.lease.rt.clock.now(), **values)
        self.calls[call.id] = moved
        about = {"step": call.step, "call_id": call.call_id, "tool": call.tool}
        self.events.append((event, {**about, **data}))
        return moved

    def start(self, call: Call, cost_usd: float) -> Call:
        attempt = call.attempts + 1
        if attempt == 1:
            # usage.tool_calls counts a call once, however many attempts it takes; its
            # cost is charged when it is first sent, like the count.
            self.tool_calls += 1
            self.cost_usd += cost_usd
        return self.move(
            call, CallStatus.EXECUTING, "call.started", {"attempt": attempt}, attempts=attempt
        )

    def affordable(self, cost_usd: float) -> bool:
        """Whether the run's cost budget can still pay for one more call of this cost
        (counting what the round has started but not yet recorded)."""
        run = self.state.run
        return add_cost(run.cost_usd, self.cost_usd + cost_usd) <= run.limits.max_cost_usd

    def refuse(self, call: Call, message: str) -> None:
        """A call refused before any attempt: neither counted nor charged; the run then
        ends `budget`."""
        error = ErrorValue(ObservationCode.BUDGET, message)
        self.move(call, CallStatus.CANCELLED, "call.cancelled", {"code": "budget"}, error=error)

    def change(self) -> Change:
        run = self.state.run
        values: dict[str, Any] = {}
        if self.tool_calls:
            values["tool_calls"] = run.tool_calls + self.tool_calls
        if self.cost_usd:
            values["cost_usd"] = add_cost(run.cost_usd, self.cost_usd)
        return Change(run=values, events=list(self.events), updated_calls=list(self.calls.values()))

    async def flush(self, **run_values: Any) -> None:
        """Commits what the round holds (with `run_values`, more of the run's columns)."""
        if not self.calls and not self.events and not run_values:
            return
        change = self.change()
        change.run = {**change.run, **run_values}
        await commit(self.lease, self.state, change)
        self.calls.clear()
        self.events.clear()
        self.tool_calls = 0
        self.cost_usd = 0.0

    async def close(self, step: int) -> None:
        """Source ids go to successes in proposal order, whatever order they finished in;
        then everything the round still holds is committed at once. A success whose
        `call.succeeded` is still to be written carries its source id there; one already
        written (a side effect) gets it in `sources.assigned`."""
        calls = [self.current(c) for c in self.state.calls]
        todo = [c for c in calls if c.status is CallStatus.SUCCEEDED and c.source_id is None]
        if not todo:
            await self.flush()
            return
        first = self.state.run.next_source
        pending = {data["call_id"]: data for kind, data in self.events if kind == "call.succeeded"}
        assigned: dict[str, str] = {}
        for call, sid in zip(todo, number_sources(first, len(todo)), strict=True):
            self.calls[call.id] = replace(call, source_id=sid)
            if call.call_id in pending:
                pending[call.call_id]["source_id"] = sid
            else:
                assigned[call.call_id] = sid
        if assigned:
            self.events.append(("sources.assigned", {"step": step, "sources": assigned}))
        await self.flush(next_source=first + len(todo))


async def execute_calls(lease: Lease, state: RunState, step: int) -> None:
    rt = lease.rt
    todo = state.open_calls()
    batch = Round(lease, state)
    gone = [c for c in todo if c.tool not in rt.tools]
    if gone:
        # The config changed under the run: the call cannot run here, and saying so ends
        # the run with a clear code instead of a step failing over and over.
        for call in gone:
            await _fail(batch, call, TOOL_UNAVAILABLE)
        await batch.flush()
        return
    reads = [c for c in todo if rt.tools[c.tool].spec.read_only]
    writes = [c for c in todo if not rt.tools[c.tool].spec.read_only]
    # Every read runs to its own outcome; an interruption (cancel, lost lease) stops the
    # others through the lease's stop signal. What settled is recorded either way.
    outcomes = await asyncio.gather(*(_bounded(batch, c) for c in reads), return_exceptions=True)
    stopped = next((o for o in outcomes if isinstance(o, BaseException) and not _deadline(o)), None)
    # A read that ends the run (False) or met the deadline: the side effects never start.
    if stopped is not None or not all(o is True for o in outcomes):
        await batch.flush()
        if stopped is not None:
            raise stopped
        return
    try:
        for call in writes:
            if not await _run_call(batch, call, side_effect=True):
                await batch.flush()
                return
    except DeadlineReached:
        await batch.flush()
        return  # the next decision ends the run `deadline`
    except Interrupted:
        await batch.flush()  # the reads that settled are recorded all the same
        raise
    await batch.close(step)


def _deadline(outcome: object) -> bool:
    return isinstance(outcome, DeadlineReached)


async def _bounded(batch: Round, call: Call) -> bool:
    rt = batch.lease.rt
    spec = rt.tools[call.tool].spec
    group = rt.group_slots(spec.concurrency_group or spec.name, spec.max_concurrency)
    async with rt.tool_slots, group:
        return await _run_call(batch, call, side_effect=False)


async def _fail(batch: Round, call: Call, error: ToolError, *, ends: bool = True) -> None:
    value = ErrorValue(error.code, error.message, error.retryable)
    batch.move(
        call,
        CallStatus.FAILED,
        "call.failed",
        {**value.as_dict(), "ends_run": ends},
        error=value,
        ends_run=ends,
    )


async def _run_call(batch: Round, call: Call, *, side_effect: bool) -> bool:
    """Runs one call to an outcome; False when the run must not go on with later calls."""
    lease = batch.lease
    rt = lease.rt
    run = batch.state.run
    tool = rt.tools[call.tool]
    if call.status is CallStatus.EXECUTING and not tool.spec.may_retry:
        # The earlier holder may have sent it: never re-send a side effect blindly. Its
        # backend may say what became of it; only "never received" allows sending.
        settled = await _settle_unknown(batch, tool, call)
        if settled is not None:
            return settled
    if call.status is CallStatus.EXECUTING and call.attempts >= tool.spec.max_attempts:
        # Interrupted on every attempt (e.g. it takes its process down): stop retrying.
        await _fail(
            batch, call, ToolError("interrupted", "the call was interrupted on every attempt")
        )
        return False
    while True:
        lease.check()  # nothing new starts once the run is stopping
        if seconds_left(rt.clock.now(), run.deadline_at) <= 0:
            raise DeadlineReached()  # nor past the deadline
        if call.attempts == 0 and not batch.affordable(tool.spec.cost_usd):
            batch.refuse(call, "the run's cost budget cannot pay for this call")
            if side_effect:
                await batch.flush()
            return False
        call = batch.start(call, tool.spec.cost_usd)
        if side_effect:
            await batch.flush()  # persisted as started before the request leaves
            if lease.stopping:  # that write may have brought a cancel: it never leaves
                await _never_sent(batch, call)
                raise Interrupted()
        try:
            result = await _invoke(lease, batch.state, tool, call)
        except NotStarted:
            if side_effect:
                await _never_sent(batch, call)
            raise
        except (Interrupted, DeadlineReached):
            if side_effect:
                # Cut in flight by a cancel, the deadline or a lost lease: it may have
                # taken effect, so it is an unknown outcome, never `cancelled`.
                await _fail(batch, call, OUTCOME_UNKNOWN)
                await batch.flush()
            raise
        except ToolError as error:
            if error is OUTCOME_UNKNOWN:
                settled = await _settle_unknown(batch, tool, call)
                if settled is not None:
                    return settled
                if call.attempts < tool.spec.max_attempts:
                    continue  # the backend never received it: sent again, same operation id
                error = NEVER_RECEIVED
            left = seconds_left(rt.clock.now(), run.deadline_at)
            if may_retry(tool.spec, error, attempts=call.attempts, seconds_left=left):
                await lease.guarded(asyncio.sleep(backoff_s(call.attempts)), left)
                continue
            ends = ends_run(tool.spec, error)
            await _fail(batch, call, error, ends=ends)
            if side_effect:
                await batch.flush()
            return not ends
        _succeed(batch, call, result)
        if side_effect:
            await batch.flush()
        return True


async def _never_sent(batch: Round, call: Call) -> None:
    """A side effect recorded as started whose request provably never left: `cancelled`."""
    error = ErrorValue(ObservationCode.CANCELLED, "the run stopped before the call was sent")
    batch.move(call, CallStatus.CANCELLED, "call.cancelled", {"code": "cancelled"}, error=error)
    await batch.flush()


def _succeed(batch: Round, call: Call, result: ToolResult) -> None:
    batch.move(
        call,
        CallStatus.SUCCEEDED,
        "call.succeeded",
        {"attempts": call.attempts},
        output=result.output,
        error=None,
        observed_at=result.observed_at,
        source_version=result.source_version,
    )


async def _settle_unknown(batch: Round, tool: Tool, call: Call) -> bool | None:
    """A side effect whose outcome is unknown, settled from its backend's status lookup:
    True/False once its success/failure is recorded (as `_run_call` answers), None when
    the backend never received it (safe to send again). Without a lookup, or when the
    backend cannot tell in time, it fails `outcome_unknown`."""
    try:
        status = await _look_up(batch, tool, call)
    except Interrupted:
        await _fail(batch, call, OUTCOME_UNKNOWN)  # still unknown, never `cancelled`
        await batch.flush()
        raise
    if status is None or status.state not in ("succeeded", "failed", "unknown"):
        await _fail(batch, call, OUTCOME_UNKNOWN)
        await batch.flush()
        return False
    if status.state == "unknown":
        return None
    outcome: ToolResult | ToolError | None = status.result or status.error
    if isinstance(outcome, ToolResult):
        try:
            _check_output(tool, outcome.output)
        except ToolError as error:
            outcome = error
    if isinstance(outcome, ToolResult):
        _succeed(batch, call, outcome)
        await batch.flush()
        return True
    error = outcome or OUTCOME_UNKNOWN
    ends = ends_run(tool.spec, error)
    await _fail(batch, call, error, ends=ends)
    await batch.flush()
    return not ends


async def _look_up(batch: Round, tool: Tool, call: Call) -> OperationStatus | None:
    """The backend's word on the operation. A lookup that fails is tried again up to the
    tool's `max_attempts`; an operation still `in_progress` is asked about again, with
    backoff, for up to `timeout_s × max_attempts` — never past the run's deadline."""
    if not isinstance(tool, StatusLookup) or not getattr(tool, "looks_up", False):
        return None
    lease, run = batch.lease, batch.state.run
    loop = asyncio.get_running_loop()
    patience_ends = loop.time() + tool.spec.timeout_s * tool.spec.max_attempts
    failures, asked = 0, 0
    while failures < tool.spec.max_attempts and loop.time() < patience_ends:
        timeout = min(tool.spec.timeout_s, seconds_left(lease.rt.clock.now(), run.deadline_at))
        if timeout <= 0:
            return None
        asked += 1
        try:
            context = _context(batch.state, call, timeout)
            status = await lease.guarded(tool.status(context, timeout), timeout)
        except (ToolError, TimeoutError):
            status, failures = None, failures + 1
        if status is not None and status.state != "in_progress":
            return status
        pause = backoff_s(asked)
        if pause >= seconds_left(lease.rt.clock.now(), run.deadline_at):
            return None
        await lease.guarded(asyncio.sleep(pause), pause + 1)
    return None


def _context(state: RunState, call: Call, timeout_s: float | None = None) -> ToolContext:
    run = state.run
    return ToolContext(
        tenant_id=run.tenant_id,
        run_id=run.id,
        step=call.step,
        call_id=call.call_id,
        operation_id=call.operation_id,
        principal=run.creator,
        timeout_s=timeout_s,
    )


async def _invoke(lease: Lease, state: RunState, tool: Tool, call: Call) -> ToolResult:
    """One attempt, in its own `execute_tool` span (arguments and result as hashes)."""
    args_hash, args_size = telemetry.digest(call.arguments)
    with lease.rt.tracer.start_as_current_span(
        f"execute_tool {tool.spec.name}",
        kind=telemetry.INTERNAL,
        attributes={
            telemetry.OPERATION: "execute_tool",
            telemetry.TOOL: tool.spec.name,
            telemetry.TOOL_CALL: call.call_id,
            telemetry.STEP: call.step,
            telemetry.ATTEMPT: call.attempts,
            telemetry.ARGS_HASH: args_hash,
            telemetry.ARGS_SIZE: args_size,
        },
    ) as span:
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
            result_hash, result_size = telemetry.digest(result.output)
            span.set_attributes(
                {telemetry.RESULT_HASH: result_hash, telemetry.RESULT_SIZE: result_size}
            )
    if stopped is not None:
        raise stopped
    return result


async def _attempt(lease: Lease, state: RunState, tool: Tool, call: Call) -> ToolResult:
    rt = lease.rt
    run = state.run
    left = seconds_left(rt.clock.now(), run.deadline_at)
    timeout = min(tool.spec.timeout_s, left)
    try:
        context = _context(state, call, timeout)
        result = await lease.guarded(tool.execute(call.arguments, context), timeout)
    except TimeoutError:
        if timeout >= left:
            raise DeadlineReached() from None
        if not tool.spec.may_retry:
            raise OUTCOME_UNKNOWN from None  # it may have happened: never sent twice
        raise ToolError("timeout", "the tool did not answer in time", retryable=True) from None
    except SentUnanswered:
        if not tool.spec.may_retry:
            raise OUTCOME_UNKNOWN from None
        raise ToolError(
            "connection_lost", "the tool's answer was lost on the way", retryable=True
        ) from None
    except (ToolError, Interrupted):
        raise
    except Exception:
        log.exception("tool %s raised unexpectedly", tool.spec.name)
        if not tool.spec.may_retry:
            raise OUTCOME_UNKNOWN from None  # it may have taken effect before it failed
        raise ToolError("internal", "the tool failed unexpectedly") from None
    _check_output(tool, result.output)
    return result


def _check_output(tool: Tool, output: Any) -> None:
    if nul_path(output) is not None or json_depth(output) > MAX_OUTPUT_DEPTH:
        raise ToolError("invalid_output", "the tool's output is not storable JSON")
    size = len(json.dumps(output, separators=(",", ":")).encode())
    if size > tool.spec.max_output_bytes:
        raise ToolError(
            "output_too_large",
            f"the tool's output is larger than {tool.spec.max_output_bytes} bytes",
        )
    if tool.spec.output_schema is not None:
        error = next(iter(validator_for(tool.spec.output_schema).iter_errors(output)), None)
        if error is not None:
            raise ToolError("invalid_output", "the tool's output does not match its output schema")
