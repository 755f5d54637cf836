"""One step, one transaction: the run's lease-conditional update first, then the turn,
calls and events that hang off it. The holder's in-memory state follows only once the
transaction has committed, so it never holds what the database does not."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.db import runs_repo, turns_repo
from app.db.session import retrying
from app.domain.records import Call, Run, Turn
from app.domain.status import RunStatus, check_run_transition
from app.engine.lease import Lease
from app.engine.state import RunState


@dataclass
class Change:
    """What one transaction writes: new values of the run's columns, its events, and the
    turn and calls of the step."""

    run: Mapping[str, Any] = field(default_factory=dict)
    events: Sequence[runs_repo.Event] = ()
    turn: Turn | None = None
    new_calls: Sequence[Call] = ()
    updated_calls: Sequence[Call] = ()


async def commit(lease: Lease, state: RunState, change: Change) -> Run:
    rt = lease.rt
    values = dict(change.run)
    if state.run.step_failures and "step_failures" not in values:
        values["step_failures"] = 0  # a step went through: the failure streak is over
    target = values.get("status")
    if target is not None:
        check_run_transition(RunStatus.RUNNING, RunStatus(target))
    now = rt.clock.now()

    async def work(session):  # type: ignore[no-untyped-def]
        applied = await runs_repo.apply(
            session,
            tenant_id=lease.tenant_id,
            run_id=lease.run_id,
            lease_token=lease.token,
            values=values,
            events=change.events,
            now=now,
        )
        if change.turn is not None:
            await turns_repo.insert_turn(session, change.turn)
        await turns_repo.insert_calls(session, change.new_calls)
        await turns_repo.update_calls(session, change.updated_calls)
        return applied

    applied = await retrying(rt.sessions, work)
    run = replace(
        state.run,
        **values,
        version=applied.version,
        event_seq=applied.event_seq,
        cancel_requested_at=applied.cancel_requested_at,
        updated_at=now,
    )
    state.committed(
        run, turn=change.turn, new_calls=change.new_calls, updated_calls=change.updated_calls
    )
    if applied.cancel_requested_at is not None and not lease.cancel_seen:
        lease.interrupt()
    return run
