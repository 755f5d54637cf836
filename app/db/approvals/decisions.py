"""Decisions on a preview, made outside any lease — approve, reject, the claim (or the
refusal) of a commit — each a typed `domain.approvals.decisions.Decision` applied as conditional
writes on the run's, the preview's and the call's status, so that two deciders can never
both win; their guards and written statuses come from `domain.lifecycle.moves`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.approvals.previews import row_of, to_preview
from app.db.audit import entries as audit_entries
from app.db.guards import status_in
from app.db.lifecycle.runs import insert_events, to_run
from app.db.tables import preview, run, tool_call
from app.domain.approvals.decisions import CallChange, Decision, PreviewChange
from app.domain.errors import ToolgateError
from app.domain.lifecycle.events import Event
from app.domain.lifecycle.moves import RUN_PARKED, RUN_WAKE
from app.domain.lifecycle.records import Preview, Run


@dataclass(frozen=True)
class Lease:
    """The lease a decision gives the deciding process (its expiry on the database's
    clock)."""

    owner: str
    token: str
    expires_at: Any


# Every decision locks the run first, then the preview, then the call: the order a lease
# holder's step write takes them in, so the two never deadlock.


async def apply(
    session: AsyncSession,
    *,
    record: Preview,
    decision: Decision,
    now: datetime,
    lease: Lease | None = None,
) -> tuple[Preview, Run]:
    """The decision's conditional writes, in its transaction: DecisionLost (and nothing
    kept) when one of its conditions no longer holds — the run moved on, the preview was
    decided, expired or committed meanwhile, or its call moved."""
    run_values: dict[str, Any] = {}
    if decision.wake:
        run_values["status"] = RUN_WAKE.target
    if decision.leased:
        assert lease is not None, "a decision that leases the run needs the lease"
        run_values.update(
            lease_owner=lease.owner, lease_token=lease.token, lease_expires_at=lease.expires_at
        )
    woken = await _touch_run(session, record, decision.events, now, **run_values)
    decided = await _decide(session, record, decision.preview, now)
    if decision.new_preview is not None:
        await session.execute(insert(preview).values(row_of(decision.new_preview)))
    if decision.call is not None:
        await _move_call(session, record, decision.call, now)
    if decision.audit is not None:  # last: the chain's head is the last lock taken
        await audit_entries.append(session, record.tenant_id, [decision.audit])
    return decided, woken


async def _touch_run(
    session: AsyncSession,
    record: Preview,
    events: Sequence[Event],
    now: datetime,
    **values: Any,
) -> Run:
    """Appends the decision's events to a run still awaiting approval (and sets `values`
    on it); DecisionLost when the run moved on (it finished meanwhile)."""
    result = await session.execute(
        update(run)
        .where(
            run.c.tenant_id == record.tenant_id,
            run.c.id == record.run_id,
            status_in(run.c.status, RUN_PARKED),
        )
        .values(
            version=run.c.version + 1,
            event_seq=run.c.event_seq + len(events),
            updated_at=now,
            **values,
        )
        .returning(run)
    )
    row = result.mappings().one_or_none()
    if row is None:
        raise DecisionLost()
    await insert_events(
        session,
        tenant_id=record.tenant_id,
        run_id=record.run_id,
        last_seq=row["event_seq"],
        events=events,
        now=now,
    )
    return to_run(row)


async def _decide(
    session: AsyncSession, record: Preview, change: PreviewChange, now: datetime
) -> Preview:
    conditions = [status_in(preview.c.status, change.guard)]
    if change.content_hash is not None:
        conditions.append(preview.c.content_hash == change.content_hash)
    if change.uncommitted:
        conditions.append(preview.c.commit_key.is_(None))
    if change.version is not None:
        conditions.append(preview.c.version == change.version)
    # Expiry is judged on the service's clock, like the run's deadline it derives from.
    result = await session.execute(
        update(preview)
        .where(
            preview.c.tenant_id == record.tenant_id,
            preview.c.id == record.id,
            preview.c.expires_at > now,
            *conditions,
        )
        .values(version=preview.c.version + 1, **change.values)
        .returning(preview)
    )
    row = result.mappings().one_or_none()
    if row is None:
        raise DecisionLost()
    return to_preview(row)


async def _move_call(
    session: AsyncSession, record: Preview, change: CallChange, now: datetime
) -> None:
    """The preview's call, still where the decision found it (its move's sources),
    follows it."""
    values: dict[str, Any] = dict(change.values)
    guards = [status_in(tool_call.c.status, change.move.guard)]
    if change.preview_id is not None:
        guards.append(tool_call.c.preview_id == change.preview_id)
    if change.error is not None:
        values["error"] = change.error.as_dict()
    if change.ends_run is not None:
        values["ends_run"] = change.ends_run
    moved = await session.execute(
        update(tool_call)
        .where(
            tool_call.c.tenant_id == record.tenant_id,
            tool_call.c.id == record.call_row_id,
            *guards,
        )
        .values(
            status=change.move.target, updated_at=now, version=tool_call.c.version + 1, **values
        )
        .returning(tool_call.c.id)
    )
    if moved.first() is None:  # its events must not tell of a move that did not happen
        raise DecisionLost()


class DecisionLost(ToolgateError):
    """The decision's conditions no longer held (another decision, the run moved on): its
    transaction is rolled back; the caller reads the preview to say why."""
