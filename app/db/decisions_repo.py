"""Decisions on a preview, made outside any lease — approve, reject, the claim (or the
refusal) of a commit — each a conditional write on the preview's, the run's and the call's
status, so that two deciders can never both win; their guards and written statuses come
from `domain.moves`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.clock import DbTime
from app.db.previews_repo import to_preview
from app.db.runs_repo import Event, insert_events, to_run
from app.db.tables import preview, run, tool_call
from app.domain.events import EventType, preview_event
from app.domain.moves import (
    CALL_APPROVE,
    CALL_REFUSE_COMMIT,
    CALL_REJECT,
    PREVIEW_APPROVE,
    PREVIEW_COMMIT,
    PREVIEW_REFUSE_COMMIT,
    PREVIEW_REJECT,
    RUN_PARKED,
    RUN_WAKE,
)
from app.domain.records import Preview, Run
from app.domain.settle import Settlement
from app.domain.status import InvalidTransition, Move


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
            run.c.status.in_(sorted(RUN_PARKED)),
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


async def _move_call(
    session: AsyncSession, record: Preview, made: Move, now: datetime, **values: Any
) -> None:
    """The preview's call, still where the decision found it (`made`'s sources), follows
    it."""
    moved = await session.execute(
        update(tool_call)
        .where(
            tool_call.c.tenant_id == record.tenant_id,
            tool_call.c.id == record.call_row_id,
            tool_call.c.status.in_(made.guard),
        )
        .values(status=made.target, updated_at=now, version=tool_call.c.version + 1, **values)
        .returning(tool_call.c.id)
    )
    if moved.first() is None:  # its events must not tell of a move that did not happen
        raise DecisionLost()


async def _decide(
    session: AsyncSession, record: Preview, now: datetime, *conditions: Any, **values: Any
) -> Preview:
    # Expiry is judged on the service's clock, like the run's deadline it derives from.
    result = await session.execute(
        update(preview)
        .where(
            preview.c.tenant_id == record.tenant_id,
            preview.c.id == record.id,
            preview.c.expires_at > now,
            *conditions,
        )
        .values(version=preview.c.version + 1, **values)
        .returning(preview)
    )
    row = result.mappings().one_or_none()
    if row is None:
        raise DecisionLost()
    return to_preview(row)


def _made(made: Move, target: StrEnum) -> str:
    """`target`, which the settle rule chose, as the status `made` writes: a rule and a
    statement that disagree are a bug, refused before the statement is built."""
    if target not in made.targets:
        raise InvalidTransition(made.kind, "|".join(made.guard), target)
    return target.value


class DecisionLost(Exception):
    """The decision's conditions no longer held (another decision, the run moved on): its
    transaction is rolled back; the caller reads the preview to say why."""


# Every decision locks the run first, then the preview, then the call: the order a lease
# holder's step write takes them in, so the two never deadlock.


async def approve(
    session: AsyncSession, *, record: Preview, content_hash: str, by: str, now: datetime
) -> Preview:
    """Pending, unexpired, with this content hash → approved, its call too."""
    events = [
        _about(record, EventType.PREVIEW_APPROVED, by=by, content_hash=content_hash),
        _about(record, EventType.CALL_APPROVED, by=by),
    ]
    await _touch_run(session, record, events, now)
    approved = await _decide(
        session,
        record,
        now,
        preview.c.status.in_(PREVIEW_APPROVE.guard),
        preview.c.content_hash == content_hash,
        status=PREVIEW_APPROVE.target,
        decided_by=by,
        decided_at=now,
    )
    await _move_call(session, record, CALL_APPROVE, now)
    return approved


async def reject(
    session: AsyncSession,
    *,
    record: Preview,
    settled: Settlement,
    reason: str,
    by: str,
    now: datetime,
) -> Preview:
    """Pending and unexpired → rejected; its call settles as `settled` says (rejected
    `rejected_by_approver`, fed back to the model) and the run becomes runnable again,
    with no lease."""
    if settled.preview is None or settled.error is None:
        raise DecisionLost()  # the preview as read is no longer open
    events = [
        _about(record, preview_event(settled.preview), by=by, reason=settled.error.message),
        _about(record, settled.event, by=by, **settled.error.as_dict()),
    ]
    await _touch_run(session, record, events, now, status=RUN_WAKE.target)
    rejected = await _decide(
        session,
        record,
        now,
        preview.c.status.in_(PREVIEW_REJECT.guard),
        status=_made(PREVIEW_REJECT, settled.preview),
        decided_by=by,
        decided_at=now,
        reason=reason,
    )
    _made(CALL_REJECT, settled.status)
    await _move_call(session, record, CALL_REJECT, now, error=settled.error.as_dict())
    return rejected


async def _lease_run(
    session: AsyncSession,
    record: Preview,
    events: Sequence[Event],
    now: datetime,
    *,
    owner: str,
    token: str,
    expires_at: Any,
) -> Run:
    """The parked run, running again and leased to this process (which goes on with it)."""
    return await _touch_run(
        session,
        record,
        events,
        now,
        status=RUN_WAKE.target,
        lease_owner=owner,
        lease_token=token,
        lease_expires_at=expires_at,
    )


async def claim_commit(
    session: AsyncSession,
    *,
    record: Preview,
    key: str,
    by: str,
    owner: str,
    token: str,
    lease_s: float,
    now: datetime,
    db_time: DbTime,
) -> tuple[Preview, Run]:
    """An approved, unexpired preview nobody has committed yet: marks the commit (who, and
    under which Idempotency-Key) and takes the run's lease, so that this process executes
    the call."""
    claimed = await _lease_run(
        session,
        record,
        [_about(record, EventType.PREVIEW_COMMIT_REQUESTED, by=by)],
        now,
        owner=owner,
        token=token,
        expires_at=db_time.after(lease_s),
    )
    marked = await _decide(
        session,
        record,
        now,
        preview.c.status.in_(PREVIEW_COMMIT.guard),  # only what can be committed
        preview.c.commit_key.is_(None),
        commit_key=key,
        committed_by=by,
    )
    return marked, claimed


async def refuse_commit(
    session: AsyncSession,
    *,
    record: Preview,
    settled: Settlement,
    by: str,
    owner: str,
    token: str,
    lease_s: float,
    now: datetime,
    db_time: DbTime,
) -> Run:
    """A commit its gates refuse (the tool switched off, or no longer allowed): the
    approved preview and its call settle as `settled` says (the preview expires unused,
    the call fails with the gate's code, fed back to the model), and the run is leased
    to this process to go on."""
    if settled.preview is None or settled.error is None:
        raise DecisionLost()  # the preview as read is no longer open
    error = settled.error.as_dict()
    events = [
        _about(record, preview_event(settled.preview)),
        _about(record, settled.event, tool=record.tool, **error, ends_run=settled.ends_run, by=by),
    ]
    claimed = await _lease_run(
        session, record, events, now, owner=owner, token=token, expires_at=db_time.after(lease_s)
    )
    await _decide(
        session,
        record,
        now,
        preview.c.status.in_(PREVIEW_REFUSE_COMMIT.guard),
        preview.c.commit_key.is_(None),
        status=_made(PREVIEW_REFUSE_COMMIT, settled.preview),
    )
    _made(CALL_REFUSE_COMMIT, settled.status)
    await _move_call(
        session, record, CALL_REFUSE_COMMIT, now, error=error, ends_run=settled.ends_run
    )
    return claimed


def _about(record: Preview, kind: EventType, **data: Any) -> Event:
    return (
        kind,
        {
            "preview_id": record.id,
            "step": record.step,
            "call_id": record.call_id,
            "tool": record.tool,
            **data,
        },
    )
