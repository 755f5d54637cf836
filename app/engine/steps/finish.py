"""Ending a run: one transaction sets the terminal state, settles open calls, records
`run.finished` and hands the lease back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from app.domain.errors import ErrorValue
from app.domain.lifecycle.events import Event, EventType, preview_event
from app.domain.lifecycle.records import Call, Preview, Turn
from app.domain.lifecycle.run_patch import RunPatch
from app.domain.lifecycle.settle import UNKNOWN, Outcome, Settlement, settle
from app.domain.lifecycle.status import (
    OPEN_PREVIEW_STATUSES,
    SETTLED_CALL_STATUSES,
    CallStatus,
    PreviewStatus,
    RunStatus,
)
from app.domain.lifecycle.steps import Finish
from app.engine.process.lease import Lease
from app.engine.steps.commit import Change, commit
from app.engine.steps.state import RunState


def _ending(
    decision: Finish, call: Call, preview: Preview | None, side_effect: bool
) -> tuple[Settlement, dict[str, Any]]:
    """How an open call ends with its run, and its event's data."""
    about: dict[str, Any] = {"step": call.step, "call_id": call.call_id}
    if call.status is CallStatus.EXECUTING and side_effect:
        outcome = settle(call, Outcome.UNKNOWN, preview=preview)
        return outcome, {**about, "tool": call.tool, **UNKNOWN.as_dict(), "ends_run": True}
    error = ErrorValue(decision.error_code or decision.reason.value, decision.message or "")
    # A call in flight (read-only: cancelled) may have reached its backend.
    sent = call.status is CallStatus.EXECUTING
    outcome = settle(call, Outcome.CANCELLED, preview=preview, error=error, sent=sent)
    return outcome, {**about, "code": decision.reason.value}


def finish_change(
    decision: Finish,
    *,
    now: Any,
    output: dict[str, Any] | None,
    calls: list[Call],
    previews: Mapping[str, Preview],
    side_effects: Callable[[Call], bool],
) -> tuple[list[Call], list[Preview], list[Event], RunPatch]:
    """The calls and previews it settles, its events and the run's new values. `calls`:
    the step's calls as the caller has them (they may be newer than the state's). A side
    effect left `executing` may have been sent: it ends `outcome_unknown`, never
    `cancelled`. A finished run's open previews can never be decided on now: they expire
    with it, unless a commit was claimed and its call may have been sent (`settle`)."""
    settled: list[Call] = []
    closed: dict[str, Preview] = {}
    events: list[Event] = []
    for call in calls:
        if call.status in SETTLED_CALL_STATUSES:
            continue
        preview = previews.get(call.preview_id) if call.preview_id else None
        outcome, data = _ending(decision, call, preview, side_effects(call))
        settled.append(
            replace(
                call,
                status=outcome.status,
                error=outcome.error,
                ends_run=outcome.ends_run,
                updated_at=now,
            )
        )
        events.append((outcome.event, data))
        if preview is not None and outcome.preview is not None:
            committed = {"committed_at": now} if outcome.preview is PreviewStatus.COMMITTED else {}
            closed[preview.id] = replace(preview, status=outcome.preview, **committed)
    for orphan in previews.values():  # open, though its call settled: it cannot be decided
        if orphan.status in OPEN_PREVIEW_STATUSES and orphan.id not in closed:
            closed[orphan.id] = replace(orphan, status=PreviewStatus.EXPIRED)
    events.extend(
        (preview_event(p.status), {"preview_id": p.id, "call_id": p.call_id})
        for p in closed.values()
    )
    final = decision.reason.value == "final"
    error = None if final else {"code": decision.error_code, "message": decision.message}
    events.append(
        (EventType.RUN_FINISHED, {"termination_reason": decision.reason.value, "error": error})
    )
    values = RunPatch.released(
        status=RunStatus.FINISHED,
        termination_reason=decision.reason.value,
        error=error,
        output=output,
        finished_at=now,
    )
    return settled, list(closed.values()), events, values


async def finish_run(
    lease: Lease,
    state: RunState,
    decision: Finish,
    *,
    before: Change | None = None,
    turn: Turn | None = None,
    output: dict[str, Any] | None = None,
) -> None:
    """Ends the run, together with what the step still had to write (`before`: e.g. the
    final turn, or a round's results), in one transaction."""
    before = before or Change()
    calls = list(state.calls)
    if before.updated_calls:
        newer = {c.id: c for c in before.updated_calls}
        calls = [newer.get(c.id, c) for c in calls]
    tools = state.tools

    def side_effect(call: Call) -> bool:
        # A tool gone from the config counts as one: it may have had effects.
        return call.tool not in tools or not tools[call.tool].spec.read_only

    now = lease.rt.clock.now()
    settled, closed, events, values = finish_change(
        decision,
        now=now,
        output=output,
        calls=calls,
        previews=state.previews,
        side_effects=side_effect,
    )
    merged = {c.id: c for c in before.updated_calls}
    merged.update({c.id: c for c in settled})
    await commit(
        lease,
        state,
        Change(
            run=before.run.then(values),
            events=[*before.events, *events],
            turn=turn or before.turn,
            new_calls=before.new_calls,
            updated_calls=list(merged.values()),
            updated_previews=closed,
        ),
    )
