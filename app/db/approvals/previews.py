"""Previews: reads (one, a run's, the approvers' queue, the run creator's scopes) and the
sweep the driver's claim poll carries. The decisions on them are `db.approvals.decisions`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.guards import status_in
from app.db.tables import preview, run
from app.domain.lifecycle.records import Approval, Preview
from app.domain.lifecycle.run_changes import Due, Sweep
from app.domain.lifecycle.status import OPEN_PREVIEW_STATUSES, PreviewStatus

_FIELDS = tuple(f.name for f in fields(Preview))
_OPEN = tuple(sorted(s.value for s in OPEN_PREVIEW_STATUSES))


#: A new preview's columns: it has no approvals yet (the column's default).
NEW_FIELDS = tuple(name for name in _FIELDS if name != "approvals")


def row_of(record: Preview) -> dict[str, Any]:
    """A new preview as its row's values."""
    return {name: getattr(record, name) for name in NEW_FIELDS}


def to_preview(row: Mapping[str, Any]) -> Preview:
    data = {name: row[name] for name in _FIELDS}
    data["status"] = PreviewStatus(row["status"])
    data["cost_usd"] = float(row["cost_usd"])
    data["approvals"] = tuple(Approval.of(a) for a in row["approvals"])
    return Preview(**data)


async def get(session: AsyncSession, *, tenant_id: str, preview_id: str) -> Preview | None:
    result = await session.execute(
        select(preview).where(preview.c.tenant_id == tenant_id, preview.c.id == preview_id)
    )
    row = result.mappings().one_or_none()
    return to_preview(row) if row else None


async def get_many(session: AsyncSession, *, tenant_id: str, ids: Sequence[str]) -> list[Preview]:
    result = await session.execute(
        select(preview).where(preview.c.tenant_id == tenant_id, preview.c.id.in_(list(ids)))
    )
    return [to_preview(r) for r in result.mappings()]


async def pending_of_runs(
    session: AsyncSession, *, tenant_id: str, run_ids: Sequence[str], now: datetime
) -> list[Preview]:
    """The previews of these runs pending at `now` (what their views list)."""
    result = await session.execute(
        select(preview)
        .where(
            preview.c.tenant_id == tenant_id,
            preview.c.run_id.in_(list(run_ids)),
            _status_is(PreviewStatus.PENDING, now),
        )
        .order_by(preview.c.created_at)
    )
    return [to_preview(r) for r in result.mappings()]


def _status_is(status: PreviewStatus, now: datetime) -> Any:
    """A status as it reads at `now`: an open preview past its expiry counts as expired,
    unless its commit was claimed in time (`Preview.status_at`)."""
    if status is PreviewStatus.EXPIRED:
        return or_(preview.c.status == status.value, _lapsed(now))
    if status.value in _OPEN:
        return and_(preview.c.status == status.value, ~_lapsed(now))
    return preview.c.status == status.value


def _lapsed(now: datetime) -> Any:
    return and_(
        preview.c.status.in_(_OPEN), preview.c.expires_at <= now, preview.c.commit_key.is_(None)
    )


async def page(
    session: AsyncSession,
    *,
    tenant_id: str,
    status: PreviewStatus,
    now: datetime,
    before: tuple[datetime, str] | None,
    limit: int,
) -> list[Preview]:
    """The approvers' queue: newest first, after the cursor `before` (created_at, id)."""
    query = select(preview).where(preview.c.tenant_id == tenant_id, _status_is(status, now))
    if before is not None:
        query = query.where(tuple_(preview.c.created_at, preview.c.id) < tuple_(*before))
    result = await session.execute(
        query.order_by(preview.c.created_at.desc(), preview.c.id.desc()).limit(limit)
    )
    return [to_preview(r) for r in result.mappings()]


async def creator_scopes(session: AsyncSession, *, record: Preview) -> frozenset[str] | None:
    """The scopes of the run's creator (None: every scope), whom the tool acts for."""
    result = await session.execute(
        select(run.c.creator_scopes).where(
            run.c.tenant_id == record.tenant_id, run.c.id == record.run_id
        )
    )
    scopes = result.scalar_one_or_none()
    return None if scopes is None else frozenset(scopes)


def sweep(change: Sweep) -> Any:
    """A CTE (for the driver's claim poll, which it rides along with) making the parked
    runs that are due runnable, as `change` says: the poll after next claims them; the run
    then ends `deadline` or `cancelled`, or tells its model `approval_expired`."""
    now = change.at
    expired = select(preview.c.tenant_id, preview.c.run_id).where(_lapsed(now))
    due = {
        Due.DEADLINE: run.c.deadline_at <= now,
        Due.CANCEL: run.c.cancel_requested_at.is_not(None),
        Due.PREVIEW_LAPSED: tuple_(run.c.tenant_id, run.c.id).in_(expired.limit(change.limit)),
    }
    return (
        update(run)
        .where(status_in(run.c.status, change.move.guard), or_(*(due[d] for d in change.due)))
        .values(status=change.move.target, version=run.c.version + 1, updated_at=now)
        .returning(run.c.id)
        .cte("swept")
    )
