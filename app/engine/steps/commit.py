"""One step, one transaction — one statement (`db.lifecycle.step_writes`): the run's
lease-conditional update, and the turn, calls and events that hang off it. The holder's
in-memory state follows only once the statement has committed, so it never holds what the
database does not — but for a turn held back for its read-only calls' outcomes (`hold`):
the state runs ahead of the database by that one write, which the next commit carries."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from app.db.lifecycle.step_writes import Applied, StepWrite
from app.domain.lifecycle.events import Event
from app.domain.lifecycle.moves import RUN_STEP
from app.domain.lifecycle.records import Call, Preview, Run, Turn, add_cost
from app.domain.lifecycle.run_columns import with_columns
from app.domain.lifecycle.run_patch import RunPatch
from app.domain.lifecycle.status import RunStatus
from app.domain.limits.budget import Spend
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


@dataclass(frozen=True)
class Held:
    """A turn's write not sent yet: its calls are all read-only, and their outcomes are
    to go in the same write (see `hold`)."""

    change: Change
    #: The run, turn and calls as committed before it: what the database holds until it
    #: goes, and what the state goes back to when its write fails.
    durable: Run
    turn: Turn | None
    calls: Sequence[Call]
    #: What the holder owed the run's next write, which it carries.
    trace_context_owed: str | None
    owed: tuple[str, Spend] | None
    #: The event loop's time by which it goes, alone if need be.
    until: float

    def undo(self, state: RunState) -> None:
        """The state as before the hold: its write failed (a step failure counts from
        the run as committed, and nobody waiting is told of a turn never written)."""
        state.run, state.turn, state.calls = self.durable, self.turn, list(self.calls)
        state.trace_context_owed = state.trace_context_owed or self.trace_context_owed
        state.owed = state.owed or self.owed


def _charged(patch: RunPatch, run: Run, spend: Spend) -> dict[str, Any]:
    """The run's usage columns with `spend` added to what this write sets (or to the
    run's, when it sets none of them)."""

    def now(name: str) -> Any:
        return getattr(patch, name) if patch.sets(name) else getattr(run.usage, name)

    return {
        "input_tokens": now("input_tokens") + spend.input_tokens,
        "output_tokens": now("output_tokens") + spend.output_tokens,
        "cost_usd": add_cost(now("cost_usd"), spend.cost_usd),
    }


def _with_owed(patch: RunPatch, state: RunState) -> RunPatch:
    """The patch with what every write of the holder owes: the trace context the next
    segment links to, the end of a failure streak, a classifier call's charge."""
    owed: dict[str, Any] = {}
    if state.trace_context_owed:
        owed["trace_context"] = state.trace_context_owed
    if state.run.step_failures and not patch.sets("step_failures"):
        owed["step_failures"] = 0  # a step went through: the streak is over
    if state.owed is not None:
        owed.update(_charged(patch, state.run, state.owed[1]))
    return replace(patch, **owed) if owed else patch


def hold(lease: Lease, state: RunState, change: Change) -> Run:
    """Keeps a turn's write back, so that its read-only calls' outcomes go with it: one
    write instead of two. The state moves on as if it had committed (its version and
    event count as the write will make them); the next commit carries it, and
    `execute_calls` sends it alone if the calls have not settled within
    `turn_hold_ms`. Lost with the process, it costs a model call asked again — never a
    side effect, since a held turn has none to run."""
    assert state.held is None and not change.updated_calls and not change.new_previews
    rt = lease.rt
    change = replace(change, run=_with_owed(change.run, state))
    assert not change.run.sets("status")
    now = rt.clock.now()
    until = asyncio.get_running_loop().time() + rt.settings.turn_hold_ms / 1000
    state.held = Held(
        change,
        state.run,
        state.turn,
        state.calls,
        state.trace_context_owed,
        state.owed,
        until,
    )
    # What the write will return: nothing another writer moves is learned before it.
    run = state.run
    expected = Applied(run.version + 1, run.event_seq + len(change.events), run.cancel_requested_at)
    return _follow(state, change, expected, now)


async def send_held(lease: Lease, state: RunState) -> None:
    """The held turn's write, alone (its calls still run); whoever waits on the run is
    told, as after any step."""
    if state.held is not None:
        lease.progress(await commit(lease, state, Change()))


def _joined(first: Change, then: Change) -> Change:
    """Two changes as one write: an outcome of a call `first` proposes goes in with its
    proposal (as the version the update would have made)."""
    outcomes = {c.id: c for c in then.updated_calls}
    proposed = [
        replace(outcomes.pop(c.id), version=c.version + 1) if c.id in outcomes else c
        for c in first.new_calls
    ]
    return Change(
        run=first.run.then(then.run),
        events=[*first.events, *then.events],
        turn=first.turn,
        new_calls=[*proposed, *then.new_calls],
        updated_calls=list(outcomes.values()),
        new_previews=[*first.new_previews, *then.new_previews],
        updated_previews=[*first.updated_previews, *then.updated_previews],
    )


def _step_write(lease: Lease, change: Change, now: datetime) -> StepWrite:
    return StepWrite(
        tenant_id=lease.tenant_id,
        run_id=lease.run_id,
        lease_token=lease.token,
        patch=change.run,
        events=change.events,
        now=now,
        clock_s=lease.rt.db_time.offset_s,
        turn=change.turn,
        new_calls=change.new_calls,
        updated_calls=change.updated_calls,
        new_previews=change.new_previews,
        updated_previews=change.updated_previews,
    )


async def commit(lease: Lease, state: RunState, change: Change) -> Run:
    rt = lease.rt
    held = state.held
    # A held turn is followed by its round or the run's end, never by another turn.
    assert held is None or change.turn is None
    change = replace(change, run=_with_owed(change.run, state))
    target = change.run.status if change.run.sets("status") else None
    if target is not None:
        RUN_STEP.check(RunStatus.RUNNING, RunStatus(target))
    now = rt.clock.now()
    before = state.calls
    if held is not None:
        # Sent now, whatever becomes of the write: the stepper hands a run whose write
        # failed back, and the next holder reads what the database has.
        state.held = None
        change, before = _joined(held.change, change), held.calls

    # One statement, atomic on its own, perhaps with other runs' steps: no BEGIN/COMMIT
    # round trips. Not retried: a failure may come after it took effect; the stepper then
    # hands the run back and a claim reads the truth.
    try:
        applied = await rt.commits.write(_step_write(lease, change, now))
    except BaseException:
        if held is not None:
            held.undo(state)
        raise
    if change.events:
        rt.events.committed(lease.tenant_id, lease.run_id)
    run = _follow(state, change, applied, now)
    finished = target == RunStatus.FINISHED
    rt.metrics.committed(
        run.agent,
        change.run.termination_reason if finished else None,
        [*change.new_calls, *change.updated_calls],
        before,
    )
    if applied.cancel_requested_at is not None and not lease.cancel_seen:
        lease.interrupt()
    return run


def _follow(state: RunState, change: Change, applied: Applied, now: datetime) -> Run:
    """The state after `change` (its patch complete), as `applied` says it went."""
    columns = change.run.values()
    columns.update(applied.shared)
    columns.update(
        version=applied.version,
        event_seq=applied.event_seq,
        cancel_requested_at=applied.cancel_requested_at,
        updated_at=now,
    )
    run = with_columns(state.run, columns)
    state.committed(
        run, turn=change.turn, new_calls=change.new_calls, updated_calls=change.updated_calls
    )
    for item in [*change.new_previews, *change.updated_previews]:
        state.previews[item.id] = item
    state.trace_context_owed = None
    state.owed = None
    return run
