"""Ending a run: one transaction sets the terminal state, settles open calls, records
`run.finished` and hands the lease back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from app.db.runs_repo import Event
from app.domain.approvals import preview_when_settled
from app.domain.errors import ErrorValue
from app.domain.records import Call, Preview, Turn
from app.domain.status import (
    OPEN_PREVIEW_STATUSES,
    SETTLED_CALL_STATUSES,
    CallStatus,
    PreviewStatus,
    RunStatus,
    check_call_transition,
)
from app.domain.steps import Finish
from app.engine.commit import Change, commit
from app.engine.lease import Lease
from app.engine.state import RunState


def finish_change(
    decision: Finish,
    *,
    now: Any,
    output: dict[str, Any] | None,
    calls: list[Call],
    side_effects: Callable[[Call], bool],
) -> tuple[list[Call], list[Event], dict[str, Any]]:
    """The calls it settles, its events and the run's new values. `calls`: the step's
    calls as the caller has them (they may be newer than the state's). A side effect
    left `executing` may have been sent: it ends `outcome_unknown`, never `cancelled`."""
    settled: list[Call] = []
    events: list[Event] = []
    for call in calls:
        if call.status in SETTLED_CALL_STATUSES:
            continue
        if call.status is CallStatus.EXECUTING and side_effects(call):
            settled.append(
                replace(
                    call, status=CallStatus.FAILED, error=UNKNOWN, ends_run=True, updated_at=now
                )
            )
            data = {"step": call.step, "call_id": call.call_id, "tool": call.tool}
            events.append(("call.failed", {**data, **UNKNOWN.as_dict(), "ends_run": True}))
            continue
        check_call_transition(call.status, CallStatus.CANCELLED)
        error = ErrorValue(decision.error_code or decision.reason.value, decision.message or "")
        settled.append(replace(call, status=CallStatus.CANCELLED, error=error, updated_at=now))
        events.append(
            (
                "call.cancelled",
                {"step": call.step, "call_id": call.call_id, "code": decision.reason.value},
            )
        )
    final = decision.reason.value == "final"
    error = None if final else {"code": decision.error_code, "message": decision.message}
    events.append(("run.finished", {"termination_reason": decision.reason.value, "error": error}))
    values = {
        "status": RunStatus.FINISHED,
        "termination_reason": decision.reason.value,
        "error": error,
        "output": output,
        "finished_at": now,
        "lease_owner": None,
        "lease_token": None,
        "lease_expires_at": None,
    }
    return settled, events, values


def _closed(preview: Preview, call: Call | None, now: Any) -> Preview:
    sent = call is not None and call.attempts > 0
    target = preview_when_settled(commit_claimed=preview.commit_key is not None, sent=sent)
    if target is PreviewStatus.COMMITTED:
        return replace(preview, status=target, committed_at=now)
    return replace(preview, status=target)


UNKNOWN = ErrorValue(
    "outcome_unknown", "the call's outcome is unknown and it may not be sent again"
)


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
    tools = lease.rt.tools

    def side_effect(call: Call) -> bool:
        # A tool gone from the config counts as one: it may have had effects.
        return call.tool not in tools or not tools[call.tool].spec.read_only

    now = lease.rt.clock.now()
    settled, events, values = finish_change(
        decision,
        now=now,
        output=output,
        calls=calls,
        side_effects=side_effect,
    )
    merged = {c.id: c for c in before.updated_calls}
    merged.update({c.id: c for c in settled})
    # A finished run's open previews can never be decided on now: they expire with it,
    # but one whose commit was claimed and whose call may have been sent stands committed.
    # Only the latest turn's calls can have open previews, and the state holds those.
    by_row = {c.id: c for c in calls}
    closed = [
        _closed(p, by_row.get(p.call_row_id), now)
        for p in state.previews.values()
        if p.status in OPEN_PREVIEW_STATUSES
    ]
    events.extend(
        (f"preview.{p.status.value}", {"preview_id": p.id, "call_id": p.call_id}) for p in closed
    )
    await commit(
        lease,
        state,
        Change(
            run={**before.run, **values},
            events=[*before.events, *events],
            turn=turn or before.turn,
            new_calls=before.new_calls,
            updated_calls=list(merged.values()),
            updated_previews=closed,
        ),
    )
