"""The ExecuteCalls step: run a turn's accepted calls outside any transaction.

Read-only calls run concurrently (bounded by the process-wide and per-group limits) and
are recorded together, with their source ids, in one transaction at the end of the round:
after a crash they are simply run again. A side-effecting call is committed `executing`
before its request leaves and its outcome right after; side effects run one at a time in
proposal order, after the reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from enum import Enum

from app.domain.lifecycle.records import Call
from app.domain.lifecycle.status import CallStatus
from app.domain.lifecycle.steps import Next
from app.domain.limits.budget import seconds_left
from app.domain.ports import OperationStatus, Tool
from app.domain.tools.retry import backoff_s, may_retry
from app.domain.tools.specs import OutputRefused, ToolError, ToolResult, ToolSpec
from app.engine.process.lease import Interrupted, Lease, NotStarted
from app.engine.steps import approval_step
from app.engine.steps.approval_step import VersionConflict
from app.engine.steps.commit import send_held
from app.engine.steps.round import Round
from app.engine.steps.state import RunState
from app.engine.steps.tool_attempt import (
    OUTCOME_UNKNOWN,
    DeadlineReached,
    Unanswered,
    check_output,
    context_of,
    has_lookup,
    invoke,
)
from app.engine.tools import offered
from app.engine.tools.gates import refusal_now

NEVER_RECEIVED = ToolError(
    "unavailable", "the tool's backend did not receive the call in its attempts", retryable=True
)
VERSION_CONFLICT = "version_conflict"
TOOL_UNAVAILABLE = ToolError(
    "tool_unavailable", "the call's tool is no longer configured", fatal=True
)


async def execute_calls(lease: Lease, state: RunState, step: int) -> None:
    todo = state.open_calls()
    batch = Round(lease, state)
    tools = state.tools  # the run's version of them
    await offered.ready(tools[c.tool] for c in todo if c.tool in tools)
    gone = [c for c in todo if offered.serving(tools, c.tool) is None]
    if gone:
        # The config changed under the run (or the tool's server no longer lists it): the
        # call cannot run here, and saying so ends the run with a clear code instead of a
        # step failing over and over.
        for call in gone:
            batch.fail(call, TOOL_UNAVAILABLE)
        await batch.flush()
        return
    # A call that needs approval waits its turn with the side effects, whatever its tool.
    writes = [c for c in todo if tools[c.tool].spec.sequential]
    reads = [c for c in todo if not tools[c.tool].spec.sequential]
    # Every read runs to its own outcome; an interruption (cancel, lost lease) stops the
    # others through the lease's stop signal. What settled is recorded either way.
    outcomes = await _reads(batch, reads)
    stops = [o for o in outcomes if isinstance(o, BaseException)]
    stopped = next((o for o in stops if not isinstance(o, DeadlineReached)), None)
    # A read that ends the run (Next.STOP) or met the deadline: the side effects never start.
    if stopped is not None or not all(o is Next.GO_ON for o in outcomes):
        await batch.flush()
        if stopped is not None:
            raise stopped
        return
    try:
        for call in writes:
            spec = tools[call.tool].spec
            # A write takes its group's slots like a read: the bulkhead holds across runs.
            async with _slots(batch, spec):
                if spec.requires_approval:
                    went = await approval_step.handle(batch, call, run_call)
                else:
                    went = await run_call(batch, call, side_effect=True)
            if went is Next.PARK:
                return  # the later side effects wait behind this call
            if went is Next.STOP:
                await batch.flush()
                return
    except DeadlineReached:
        await batch.flush()
        return  # the next decision ends the run `deadline`
    except Interrupted:
        await batch.flush()  # the reads that settled are recorded all the same
        raise
    await batch.close(step)


async def _reads(batch: Round, reads: list[Call]) -> list[Next | BaseException]:
    """Every read's outcome (or what stopped it). A turn held back for them goes alone
    once its hold is over, while they go on (`commit.hold`)."""
    gathered = asyncio.gather(*(_bounded(batch, c) for c in reads), return_exceptions=True)
    try:
        held = batch.state.held
        if held is not None:
            left = held.until - asyncio.get_running_loop().time()
            done, _ = await asyncio.wait([gathered], timeout=max(0.0, left))
            if not done:
                await send_held(batch.lease, batch.state)
        return await gathered
    finally:
        if not gathered.done():  # stopped while waiting: nothing runs on unseen
            gathered.cancel()
            gathered.add_done_callback(_seen)


def _seen(future: asyncio.Future[object]) -> None:
    if not future.cancelled():
        future.exception()  # what stopped them is the stopper's business, not a leak


@contextlib.asynccontextmanager
async def _slots(batch: Round, spec: ToolSpec) -> AsyncIterator[None]:
    """A slot of the process-wide limit and one of the tool's concurrency group."""
    rt = batch.lease.rt
    group = rt.group_slots(spec.concurrency_group or spec.name, spec.max_concurrency)
    async with rt.tool_slots, group:
        yield


async def _bounded(batch: Round, call: Call) -> Next:
    async with _slots(batch, batch.state.tools[call.tool].spec):
        return await run_call(batch, call, side_effect=False)


async def run_call(batch: Round, call: Call, *, side_effect: bool) -> Next:
    """Runs one call to an outcome, and says whether later calls may start.
    An approved call whose backend answers `version_conflict` raises VersionConflict,
    leaving its outcome to the approvals module."""
    tool = batch.state.tools[call.tool]
    # Whether an earlier attempt may have taken effect though nobody could tell (it went
    # unanswered, and is re-sent only on its backend's dedupe): then the call is never
    # reported as stopped or failed before sending, only as an unknown outcome.
    maybe_sent = False
    if call.status is CallStatus.EXECUTING and not tool.spec.read_only:
        # The earlier holder may have sent it: never re-send a side effect blindly. Its
        # backend may say what became of it; only "never received" allows sending (or,
        # with no one to ask, an idempotent backend's dedupe).
        settled = await _settle_unknown(batch, tool, call)
        if isinstance(settled, Next):
            return settled
        maybe_sent = settled is Resend.UNCLEAR
    if call.status is CallStatus.EXECUTING and call.attempts >= tool.spec.max_attempts:
        # Interrupted on every attempt (e.g. it takes its process down): stop retrying.
        # The run ends with it, so the model is never asked to make it again.
        batch.fail(call, ToolError("interrupted", "the call was interrupted on every attempt"))
        return Next.STOP
    while True:
        ended = await _may_start(batch, call, tool, side_effect, maybe_sent)
        if ended is not None:
            return ended
        call = batch.start(call, tool.spec.cost_usd)
        try:
            result = await _attempt(batch, call, tool, side_effect, maybe_sent)
        except ToolError as error:
            maybe_sent = maybe_sent or (isinstance(error, Unanswered) and not tool.spec.read_only)
            verdict = await _after(batch, call, tool, error, side_effect, maybe_sent)
            if isinstance(verdict, Next):
                return verdict
            maybe_sent = verdict  # tried again
            continue
        went = await batch.succeed(call, result)
        if side_effect:
            await batch.flush()
        return went


async def _may_start(
    batch: Round, call: Call, tool: Tool, side_effect: bool, maybe_sent: bool
) -> Next | None:
    """What ends the call before its next attempt starts, or None: a stopping run, the
    deadline, the gates as they are now (not as at the proposal), the cost budget."""
    lease, run = batch.lease, batch.state.run
    lease.check()  # nothing new starts once the run is stopping
    if seconds_left(lease.rt.clock.now(), run.deadline_at) <= 0:
        raise DeadlineReached()  # nor past the deadline
    refused = await refusal_now(lease.rt, run, tool.spec, fresh=side_effect)
    if refused is not None:
        stopped = ToolError(refused.code, refused.message)  # the model hears it
        return await batch.failed(
            call, OUTCOME_UNKNOWN if maybe_sent else stopped, flush=side_effect
        )
    if call.attempts == 0 and not batch.has_call_room():
        batch.refuse(call, "the run's tool-call budget has no room left for this call")
        if side_effect:
            await batch.flush()
        return Next.STOP
    if call.attempts == 0 and not batch.affordable(tool.spec.cost_usd):
        batch.refuse(call, "the run's cost budget cannot pay for this call")
        if side_effect:
            await batch.flush()
        return Next.STOP
    return None


async def _attempt(
    batch: Round, call: Call, tool: Tool, side_effect: bool, maybe_sent: bool
) -> ToolResult:
    """One attempt of a started call; a side effect is committed as started before its
    request leaves, and one cut in flight is an unknown outcome, never `cancelled`."""
    lease = batch.lease
    if side_effect:
        await batch.flush()  # persisted as started before the request leaves
        if lease.fenced:  # not sent before this process holds its liveness lock again
            await lease.until_unfenced()
        if lease.stopping:  # that write may have brought a cancel: it never leaves
            await _held_back(batch, call, maybe_sent)
            raise Interrupted()
    try:
        return await invoke(lease, batch.state, tool, call)
    except NotStarted:
        if side_effect:
            await _held_back(batch, call, maybe_sent)
        raise
    except (Interrupted, DeadlineReached):
        if side_effect:
            # Cut in flight by a cancel, the deadline or a lost lease: it may have
            # taken effect, so it is an unknown outcome, never `cancelled`.
            batch.unknown(call)
            await batch.flush()
        raise


async def _after(
    batch: Round, call: Call, tool: Tool, error: ToolError, side_effect: bool, maybe_sent: bool
) -> Next | bool:
    """A failed attempt: the call's outcome (Next), or — when it is tried again, after
    backoff where it is a retry — whether an attempt of it may have been sent."""
    lease, run = batch.lease, batch.state.run
    if error is OUTCOME_UNKNOWN:
        settled = await _settle_unknown(batch, tool, call)
        if isinstance(settled, Next):
            return settled
        maybe_sent = maybe_sent or settled is Resend.UNCLEAR
        if call.attempts < tool.spec.max_attempts:
            return maybe_sent  # sent again, same operation id
        error = OUTCOME_UNKNOWN if maybe_sent else NEVER_RECEIVED
    left = seconds_left(lease.rt.clock.now(), run.deadline_at)
    if may_retry(tool.spec, error, attempts=call.attempts, seconds_left=left):
        await lease.guarded(asyncio.sleep(backoff_s(call.attempts)), left)
        return maybe_sent
    if error.code == VERSION_CONFLICT and batch.preview_of(call) is not None:
        raise VersionConflict(call) from None
    if maybe_sent and isinstance(error, Unanswered):
        error = OUTCOME_UNKNOWN  # its retries ran out unanswered: it may have happened
    return await batch.failed(call, error, flush=side_effect)


async def _held_back(batch: Round, call: Call, maybe_sent: bool) -> None:
    """An attempt recorded as started whose request provably never left: the call ends
    `cancelled` — unless an earlier attempt may have taken effect, which keeps it an
    unknown outcome."""
    if not maybe_sent:
        await batch.never_sent(call)
        return
    batch.unknown(call)
    await batch.flush()


class Resend(Enum):
    """Why an unknown outcome may be sent again under the same operation id."""

    NEVER_RECEIVED = "never_received"  # its backend said so
    UNCLEAR = "unclear"  # it has no lookup, and its backend dedupes (idempotent)


async def _settle_unknown(batch: Round, tool: Tool, call: Call) -> Next | Resend:
    """A side effect whose outcome is unknown, settled from its backend's status lookup
    (what `run_call` answers once its success or failure is recorded), or why it is safe
    to send again under the same operation id. A backend that can be asked but cannot
    tell in time leaves it `outcome_unknown`, idempotent or not: only "never received"
    sends it again."""
    try:
        status = await _look_up(batch, tool, call)
    except Interrupted:
        batch.unknown(call)  # still unknown, never `cancelled`
        await batch.flush()
        raise
    decided = status is not None and status.state in ("succeeded", "failed", "unknown")
    if not decided and tool.spec.idempotent and not has_lookup(tool):
        return Resend.UNCLEAR
    if status is None or not decided:
        batch.unknown(call)
        await batch.flush()
        return Next.STOP
    if status.state == "unknown":
        return Resend.NEVER_RECEIVED
    outcome: ToolResult | ToolError | None = status.result or status.error
    if isinstance(outcome, ToolResult) and outcome.withheld is None:
        try:
            await check_output(tool, outcome.output)
        except OutputRefused as refused:  # it took effect: its output is not kept
            outcome = ToolResult.withholding(refused)
    if isinstance(outcome, ToolResult):
        went = await batch.succeed(call, outcome)
        await batch.flush()
        return went
    return await batch.failed(call, outcome or OUTCOME_UNKNOWN)


async def _look_up(batch: Round, tool: Tool, call: Call) -> OperationStatus | None:
    """The backend's word on the operation. A lookup that fails is tried again up to the
    tool's `max_attempts`; an operation still `in_progress` is asked about again, with
    backoff, for up to `timeout_s × max_attempts` — never past the run's deadline."""
    if not has_lookup(tool):
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
            context = context_of(batch.state, call, timeout)
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
