"""Ending a run: one transaction sets the terminal state, settles open calls and records
`run.finished`."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import runs_repo, turns_repo
from app.db.runs_repo import RunRecord
from app.domain.status import SETTLED_CALL_STATUSES, CallStatus, RunStatus, check_call_transition
from app.domain.steps import Finish
from app.engine.lease import Lease


async def finish_run(
    session: AsyncSession,
    lease: Lease,
    decision: Finish,
    *,
    output: dict[str, Any] | None = None,
) -> RunRecord:
    now = lease.rt.clock.now()
    events: list[runs_repo.Event] = []
    for call in await turns_repo.calls(session, tenant_id=lease.tenant_id, run_id=lease.run_id):
        if CallStatus(call["status"]) in SETTLED_CALL_STATUSES:
            continue
        check_call_transition(CallStatus(call["status"]), CallStatus.CANCELLED)
        await turns_repo.update_call(
            session,
            tenant_id=lease.tenant_id,
            call_pk=call["id"],
            version=call["version"],
            now=now,
            values={
                "status": CallStatus.CANCELLED,
                "error": {
                    "code": decision.error_code or decision.reason.value,
                    "retryable": False,
                    "message": decision.message,
                },
            },
        )
        events.append(
            (
                "call.cancelled",
                {"step": call["step"], "call_id": call["call_id"], "code": decision.reason.value},
            )
        )
    final = decision.reason.value == "final"
    error = None if final else {"code": decision.error_code, "message": decision.message}
    events.append(("run.finished", {"termination_reason": decision.reason.value, "error": error}))
    return await lease.write(
        session,
        values={
            "status": RunStatus.FINISHED,
            "termination_reason": decision.reason.value,
            "error": error,
            "output": output,
            "finished_at": now,
            "lease_owner": None,
            "lease_token": None,
            "lease_expires_at": None,
        },
        events=events,
    )
