"""The stepper: holds a run's lease and advances it, one committed transaction a step.

Each step is decided from the run's state (`domain.lifecycle.steps.decide`), which the holder read
once when it claimed the run and keeps in step with what it commits; one function
handles each step type. Any process can pick a run up where another stopped, because
the state is read back from the same records.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable

from app.db.errors import is_unavailable
from app.db.lifecycle import leases, runs
from app.db.lifecycle.runs import StaleWrite
from app.db.session import retrying
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.records import Run
from app.domain.lifecycle.run_patch import RunPatch
from app.domain.lifecycle.status import RunStatus, TerminationReason
from app.domain.lifecycle.steps import CallModel, ExecuteCalls, Finish, NextStep, finish
from app.engine.process.lease import Interrupted, Lease
from app.engine.process.outage import outage
from app.engine.process.runtime import Runtime
from app.engine.steps.commit import Change, commit
from app.engine.steps.executor import execute_calls
from app.engine.steps.finish import finish_run
from app.engine.steps.model_step import call_model
from app.engine.steps.state import RunState
from app.observability import logs, telemetry

log = logging.getLogger(__name__)
#: Unexpected failures of one step in a row before the run ends.
MAX_STEP_FAILURES = 3
Progress = Callable[[Run], None]
_LET_GO = frozenset({RunStatus.FINISHED, RunStatus.AWAITING_APPROVAL})


def new_lease_token() -> str:
    return secrets.token_hex(16)


def lease_for(rt: Runtime, run: Run, sent_at: float, queued_s: float = 0.0) -> Lease:
    """The lease a claim (sent at loop time `sent_at`) gave this process."""
    assert run.lease is not None
    valid_until = sent_at + rt.settings.lease_s
    return Lease(rt, run.tenant_id, run.id, run.lease.token, valid_until, queued_s)


async def load_state(rt: Runtime, run: Run) -> RunState:
    """A claimed run's history, read once."""
    config = await rt.versions.of_run(rt.reads, run)
    route = rt.config.models.get(run.route)  # gone from the config: the model step says so
    scripted = route is not None and route.provider == "scripted"
    if run.usage.steps == 0 and not scripted:
        return RunState.fresh(run, config)

    return await retrying(rt.sessions, RunState.load, run, config, scripted=scripted)


async def claim(rt: Runtime, tenant_id: str, run_id: str) -> tuple[Lease, Run] | None:
    sent = asyncio.get_running_loop().time()

    claimed = await retrying(
        rt.sessions,
        leases.claim,
        tenant_id=tenant_id,
        run_id=run_id,
        owner=rt.owner,
        token=new_lease_token(),
        lease_s=rt.settings.lease_s,
        db_time=rt.db_time,
        now=rt.clock.now(),
    )
    if claimed is None:
        return None
    run, queued_s = claimed
    rt.events.committed(run.tenant_id, run.id)
    return lease_for(rt, run, sent, queued_s), run


async def _loop(lease: Lease, state: RunState) -> None:
    rt = lease.rt
    while state.run.status is RunStatus.RUNNING:
        step = state.next_step(now=rt.clock.now(), cancel_seen=lease.cancel_seen)
        try:
            lease.check()
            await _handle(lease, state, step)
        except Interrupted:
            if lease.lapsed:
                return
            if lease.fenced:  # until this process holds its liveness lock again
                await lease.until_unfenced()
                if lease.lapsed:
                    return
            lease.rearm()  # a cancel seen meanwhile is the next step's
        except (StaleWrite, asyncio.CancelledError):
            raise
        except Exception as exc:
            if is_unavailable(exc):
                # An outage, not a failing step: hold on while the lease lasts and read
                # the run afresh once the database answers; else hand it back untouched.
                outage.seen(exc)
                log.info("run %s waits for the database", state.run.id)
                if await _outlast_outage(lease, state):
                    continue
                return
            log.exception("a step failed unexpectedly (run %s)", state.run.id)
            await _step_failed(lease, state, step)
            return  # hand the run back: the driver tries again shortly
        lease.progress(state.durable())  # a waiter is never answered with a held turn


async def _outlast_outage(lease: Lease, state: RunState) -> bool:
    """Waits for the database while the lease holds, then reads the run afresh into
    `state`: a write whose answer was lost may have taken effect, so the state in memory
    is not trusted past an outage. False when the lease lapsed or moved on first."""
    rt = lease.rt
    pause = 0.2
    while not lease.lapsed:
        # Ask the database on a backing-off schedule, but go at once when another part of
        # the process (the driver's poll, the lease keeper) has seen it answer again.
        await outage.wait_over(pause)
        pause = min(pause * 2, 5.0)

        try:
            run = await retrying(rt.sessions, runs.get, lease.tenant_id, lease.run_id)
            if run is None or run.lease is None or run.lease.token != lease.token:
                lease.lose()
                return False
            state.take(await load_state(rt, run))
        except Exception as exc:
            if is_unavailable(exc):
                outage.seen(exc)  # so that the next wait is not cut short
                continue
            raise
        outage.over()
        log.info("run %s goes on", run.id)
        return True
    return False


async def _handle(lease: Lease, state: RunState, step: NextStep) -> None:
    match step:
        case Finish():
            await finish_run(lease, state, step)
        case CallModel(step=number):
            decision = await call_model(lease, state, number)
            if decision is not None:
                await finish_run(lease, state, decision)
        case ExecuteCalls(step=number):
            await execute_calls(lease, state, number)


async def _step_failed(lease: Lease, state: RunState, step: NextStep) -> None:
    """Counts an unexpected failure (a bug, or the database failing mid-step). A step that
    keeps failing ends the run, blaming the side that failed, rather than looping until
    its deadline with the cause unrecorded."""
    failures = state.run.step_failures + 1
    if failures >= MAX_STEP_FAILURES and not isinstance(step, Finish):
        reason = (
            TerminationReason.MODEL_FAILED
            if isinstance(step, CallModel)
            else TerminationReason.TOOL_FAILED
        )
        message = "the step failed unexpectedly several times; the failure is logged"
        await finish_run(lease, state, finish(reason, "internal", message))
        return
    event = (EventType.STEP_FAILED, {"decision": type(step).__name__, "failures": failures})
    await commit(lease, state, Change(run=RunPatch(step_failures=failures), events=[event]))


async def drive(lease: Lease, state: RunState, on_progress: Progress = lambda run: None) -> None:
    """Advances the run while this lease holds, until it finishes or parks. A cancelled
    task (process shutdown, a crash in tests) writes nothing more: the lease expires and
    another process recovers the run from its records."""
    logs.run_id.set(lease.run_id)  # every line logged while advancing it names the run
    lease.progress = on_progress
    run = state.run
    with lease.rt.tracer.start_as_current_span(
        f"invoke_agent {run.agent}",
        kind=telemetry.INTERNAL,
        links=telemetry.link_to(run.trace_context),
        attributes={
            telemetry.OPERATION: "invoke_agent",
            telemetry.AGENT: run.agent,
            telemetry.CONVERSATION: run.id,
            telemetry.ROUTE: run.route,
            telemetry.STEP: run.usage.steps,
            telemetry.QUEUE_WAIT: lease.queued_s,
        },
    ) as segment:
        state.trace_context_owed = telemetry.context_of(segment)
        try:
            await _loop(lease, state)
        except StaleWrite:
            log.info("a run's lease moved to another stepper; stopping here")
            lease.lose()
        finally:
            lease.progress(state.durable())
            if state.run.termination_reason:
                segment.set_attribute(telemetry.TERMINATION, state.run.termination_reason)
    if state.run.status in _LET_GO or lease.lost:
        return  # the finishing (or parking) transaction handed the lease back
    try:
        async with lease.rt.sessions.begin() as session:
            await leases.release(
                session, tenant_id=lease.tenant_id, run_id=lease.run_id, token=lease.token
            )
    except Exception:  # the lease then simply lapses
        log.warning("could not hand a run's lease back", exc_info=True)
