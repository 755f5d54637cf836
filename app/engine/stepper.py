"""The stepper: holds a run's lease and advances it one committed step at a time.

Each step is decided from the persisted records alone (`domain.steps.decide`) and handled
by one function per step type, so any process can pick a run up where another stopped.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from datetime import timedelta

from app.db import runs_repo, turns_repo
from app.db.runs_repo import RunRecord, StaleWrite
from app.domain.status import RunStatus, TerminationReason
from app.domain.steps import CallModel, ExecuteCalls, Finish, NextStep, decide, finish
from app.engine import history
from app.engine.executor import execute_calls
from app.engine.finish import finish_run
from app.engine.lease import Interrupted, Lease
from app.engine.model_step import call_model
from app.engine.runtime import Runtime

log = logging.getLogger(__name__)
#: Unexpected failures of one step in a row before the run ends.
MAX_STEP_FAILURES = 3


def new_lease_token() -> str:
    return secrets.token_hex(16)


async def claim(rt: Runtime, tenant_id: str, run_id: str) -> Lease | None:
    token = new_lease_token()
    now = rt.clock.now()
    expires_at = now + timedelta(seconds=rt.settings.lease_s)
    async with rt.sessions.begin() as session:
        record = await runs_repo.claim(
            session,
            tenant_id=tenant_id,
            run_id=run_id,
            owner=rt.settings.instance_id,
            token=token,
            now=now,
            expires_at=expires_at,
        )
    return Lease(rt, tenant_id, run_id, token, expires_at) if record else None


async def _next(lease: Lease) -> tuple[RunRecord, NextStep]:
    rt = lease.rt
    async with rt.sessions() as session:
        run = await runs_repo.get(session, lease.tenant_id, lease.run_id)
        if run is None or (run.status == RunStatus.RUNNING and run.lease_token != lease.token):
            raise StaleWrite(lease.run_id)
        last_calls = (
            await turns_repo.calls(session, tenant_id=run.tenant_id, run_id=run.id, step=run.steps)
            if run.steps
            else []
        )
    return run, decide(
        limits=run.limits_value,
        usage=run.usage_value,
        now=rt.clock.now(),
        deadline=run.deadline_at,
        cancel_requested=run.cancel_requested_at is not None or lease.cancel_seen,
        last_step=run.steps,
        last_calls=history.call_states(last_calls),
    )


async def _finish(lease: Lease, run: RunRecord, decision: Finish) -> None:
    async with lease.rt.sessions.begin() as session:
        await finish_run(session, lease, decision)


async def _loop(lease: Lease, on_progress: Callable[[], None]) -> None:
    while True:
        run, step = await _next(lease)
        if run.status != RunStatus.RUNNING:
            return
        try:
            lease.check()
            await _handle(lease, run, step)
        except Interrupted:
            if lease.lost or lease.rt.clock.now() >= lease.expires_at:
                return
            lease.rearm()
        except (StaleWrite, asyncio.CancelledError):
            raise
        except Exception:
            log.exception("a step failed unexpectedly (run %s)", run.id)
            await _step_failed(lease, run, step)
            return  # hand the run back: the driver tries again shortly
        else:
            if run.step_failures:
                async with lease.rt.sessions.begin() as session:
                    await lease.write(session, values={"step_failures": 0})
        on_progress()


async def _handle(lease: Lease, run: RunRecord, step: NextStep) -> None:
    match step:
        case Finish():
            await _finish(lease, run, step)
        case CallModel(step=number):
            decision = await call_model(lease, run, number)
            if decision is not None:
                await _finish(lease, run, decision)
        case ExecuteCalls(step=number):
            await execute_calls(lease, run, number)


async def _step_failed(lease: Lease, run: RunRecord, step: NextStep) -> None:
    """Counts an unexpected failure (a bug, or the database failing mid-step). A step that
    keeps failing ends the run, blaming the side that failed, rather than looping until
    its deadline with the cause unrecorded."""
    failures = run.step_failures + 1
    async with lease.rt.sessions.begin() as session:
        if failures >= MAX_STEP_FAILURES and not isinstance(step, Finish):
            reason = (
                TerminationReason.MODEL_FAILED
                if isinstance(step, CallModel)
                else TerminationReason.TOOL_FAILED
            )
            message = "the step failed unexpectedly several times; the failure is logged"
            await finish_run(session, lease, finish(reason, "internal", message))
            return
        await lease.write(
            session,
            values={"step_failures": failures},
            events=[("step.failed", {"decision": type(step).__name__, "failures": failures})],
        )


async def drive(lease: Lease, on_progress: Callable[[], None] = lambda: None) -> None:
    """Advances the run while this lease holds, until it finishes or parks. A cancelled
    task (process shutdown, a crash in tests) writes nothing more: the lease expires and
    another process recovers the run from its records."""
    lease.start()
    try:
        await _loop(lease, on_progress)
    except StaleWrite:
        log.info("a run's lease moved to another stepper; stopping here")
    finally:
        await lease.close()
    try:
        async with lease.rt.sessions.begin() as session:
            await runs_repo.release(
                session, tenant_id=lease.tenant_id, run_id=lease.run_id, token=lease.token
            )
    except Exception:  # the lease then simply expires
        log.warning("could not hand a run's lease back", exc_info=True)
