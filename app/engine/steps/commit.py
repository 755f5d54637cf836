"""One step, one transaction — one statement (`db.step_writes`): the run's
lease-conditional update, and the turn, calls and events that hang off it. The holder's
in-memory state follows only once the statement has committed, so it never holds what the
database does not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.db.step_writes import StepWrite
from app.domain.budget import Spend
from app.domain.events import Event
from app.domain.moves import RUN_STEP
from app.domain.records import Call, Preview, Run, Turn, add_cost
from app.domain.run_patch import RunPatch
from app.domain.status import RunStatus
from app.engine.process.lease import Lease
from app.engine.steps.state import RunState


@dataclass
class Change:
    """What one transaction writes: the run's new values, its events, and the turn,
    calls and previews of the step."""

    run: RunPatch = field(default_factory=RunPatch)
    events: Sequence[Event] = ()
    turn: Turn | None = None
    new_calls: Sequence[Call] = ()
    updated_calls: Sequence[Call] = ()
    new_previews: Sequence[Preview] = ()
    updated_previews: Sequence[Preview] = ()


def _charged(patch: RunPatch, run: Run, spend: Spend) -> RunPatch:
    """The run's usage columns with `spend` added to what this write sets (or to the
    run's, when it sets none of them)."""

    def now(name: str) -> Any:
        return getattr(patch, name) if patch.sets(name) else getattr(run, name)

    return replace(
        patch,
        input_tokens=now("input_tokens") + spend.input_tokens,
        output_tokens=now("output_tokens") + spend.output_tokens,
        cost_usd=add_cost(now("cost_usd"), spend.cost_usd),
    )


def _with_owed(patch: RunPatch, state: RunState) -> RunPatch:
    """The patch with what every write of the holder owes: the trace context the next
    segment links to, the end of a failure streak, a classifier call's charge."""
    if state.trace_context_owed:
        patch = replace(patch, trace_context=state.trace_context_owed)
    if state.run.step_failures and not patch.sets("step_failures"):
        patch = replace(patch, step_failures=0)  # a step went through: the streak is over
    if state.owed is not None:
        patch = _charged(patch, state.run, state.owed[1])
    return patch


async def commit(lease: Lease, state: RunState, change: Change) -> Run:
    rt = lease.rt
    patch = _with_owed(change.run, state)
    target = patch.status if patch.sets("status") else None
    if target is not None:
        RUN_STEP.check(RunStatus.RUNNING, RunStatus(target))
    now = rt.clock.now()

    # One statement, atomic on its own, perhaps with other runs' steps: no BEGIN/COMMIT
    # round trips. Not retried: a failure may come after it took effect; the stepper then
    # hands the run back and a claim reads the truth.
    applied = await rt.commits.write(
        StepWrite(
            tenant_id=lease.tenant_id,
            run_id=lease.run_id,
            lease_token=lease.token,
            patch=patch,
            events=change.events,
            now=now,
            clock_s=rt.db_time.offset_s,
            turn=change.turn,
            new_calls=change.new_calls,
            updated_calls=change.updated_calls,
            new_previews=change.new_previews,
            updated_previews=change.updated_previews,
        )
    )
    if change.events:
        rt.events.committed(lease.tenant_id, lease.run_id)
    before = state.calls
    run = replace(
        state.run,
        **patch.values(),
        version=applied.version,
        event_seq=applied.event_seq,
        cancel_requested_at=applied.cancel_requested_at,
        updated_at=now,
        **applied.shared,
    )
    state.committed(
        run, turn=change.turn, new_calls=change.new_calls, updated_calls=change.updated_calls
    )
    for item in [*change.new_previews, *change.updated_previews]:
        state.previews[item.id] = item
    state.trace_context_owed = None
    state.owed = None
    finished = target == RunStatus.FINISHED
    rt.metrics.committed(
        run.agent,
        patch.termination_reason if finished else None,
        [*change.new_calls, *change.updated_calls],
        before,
    )
    if applied.cancel_requested_at is not None and not lease.cancel_seen:
        lease.interrupt()
    return run
