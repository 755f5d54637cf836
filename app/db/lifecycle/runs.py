"""Runs and their events. Every change of an existing run is conditional: on the lease
token while a stepper holds the run, on its state otherwise; a write that matches no row
raises (or answers None), so a lost race is never mistaken for success. Lease expiry is
always compared with the database's clock (`DbTime`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    and_,
    case,
    exists,
    func,
    literal,
    or_,
    select,
    text,
    update,
)
from sqlalchemy import insert as sa_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import String

from app.db.guards import status_in
from app.db.tables import event, run, run_script
from app.domain.errors import ToolgateError
from app.domain.lifecycle.events import Event
from app.domain.lifecycle.records import EventRecord, Run
from app.domain.lifecycle.run_changes import CancelRequest, ScriptItem
from app.domain.lifecycle.run_columns import COLUMNS, columns_of, run_of
from app.domain.lifecycle.status import RunStatus
from app.domain.limits.budget import Limits

#: The channel a cancel request is announced on; the payload is "tenant_id run_id".
CANCEL_CHANNEL = "toolgate_cancel"


class StaleWrite(ToolgateError):
    """The run changed under us: the lease was lost or the run left `running`."""


#: The run's money columns: NUMERIC in the table, float in a `Run`.
COSTS = ("cost_usd", "reserved_cost_usd", "children_cost_usd")


def to_run(row: Mapping[str, Any]) -> Run:
    data = {name: row[name] for name in COLUMNS}
    data["status"] = RunStatus(row["status"])
    data["tools"] = tuple(row["tools"])
    data["data_policy"] = tuple(row["data_policy"] or ())
    data["limits"] = Limits.from_dict(row["limits"])
    for name in COSTS:
        data[name] = float(row[name])
    scopes = row["creator_scopes"]
    data["creator_scopes"] = None if scopes is None else tuple(scopes)
    return run_of(data)


def run_row(record: Run) -> dict[str, Any]:
    data = columns_of(record)
    data["tools"] = list(record.tools)
    data["data_policy"] = list(record.data_policy) or None
    data["limits"] = record.limits.as_dict()
    data["creator_scopes"] = None if record.creator_scopes is None else list(record.creator_scopes)
    return data


def event_items(events: Sequence[Event]) -> list[list[Any]]:
    """One write's events as `event.events` holds them, and every writer sends them:
    `[[type, data], ...]`."""
    return [[kind, data] for kind, data in events]


def event_row(
    tenant_id: str, run_id: str, last_seq: int, events: Sequence[Event], now: datetime
) -> dict[str, Any]:
    """One write's events as their one row (`tables.event`), their seqs ending at
    `last_seq` (the run's counter after the write that reserved them)."""
    return {
        "tenant_id": tenant_id,
        "run_id": run_id,
        "seq": last_seq - len(events) + 1,
        "last_seq": last_seq,
        "at": now,
        "events": event_items(events),
    }


async def insert_events(
    session: AsyncSession,
    *,
    tenant_id: str,
    run_id: str,
    last_seq: int,
    events: Sequence[Event],
    now: datetime,
) -> None:
    """Appends events whose seqs end at `last_seq` (the run's counter after the write that
    reserved them), in one statement."""
    if events:
        await session.execute(INSERT_EVENT, event_row(tenant_id, run_id, last_seq, events, now))


async def script_of(session: AsyncSession, tenant_id: str, run_id: str) -> list[ScriptItem] | None:
    result = await session.execute(
        select(run_script.c.script).where(
            run_script.c.tenant_id == tenant_id, run_script.c.run_id == run_id
        )
    )
    return result.scalar_one_or_none()


INSERT_EVENT = sa_insert(event)


async def get(session: AsyncSession, tenant_id: str, run_id: str) -> Run | None:
    result = await session.execute(
        select(run).where(run.c.tenant_id == tenant_id, run.c.id == run_id)
    )
    row = result.mappings().one_or_none()
    return to_run(row) if row else None


async def exists_run(session: AsyncSession, tenant_id: str, run_id: str) -> bool:
    query = select(exists().where(run.c.tenant_id == tenant_id, run.c.id == run_id))
    return bool((await session.execute(query)).scalar_one())


async def mark_cancel_requested(session: AsyncSession, request: CancelRequest) -> Run | None:
    """Records a cancel request on a run in the request's guard not yet asked to cancel,
    and announces it (delivered on commit) so its holder, in any process, stops at once.
    None when the run is finished, already asked, or absent."""
    result = await session.execute(cancel_statement(request))
    row = result.mappings().one_or_none()
    if row is None:
        return None
    record = to_run(row)
    await insert_events(
        session,
        tenant_id=request.tenant_id,
        run_id=request.run_id,
        last_seq=record.event_seq,
        events=request.events,
        now=request.at,
    )
    announced = literal(f"{request.tenant_id} {request.run_id}", String())
    await session.execute(select(func.pg_notify(CANCEL_CHANNEL, announced)))
    return record


def cancel_statement(request: CancelRequest) -> Any:
    """UPDATE run ... RETURNING run: the request's mark, if the run is in its guard and was
    not asked before; a parked run is woken by the request's wake move."""
    wake = request.wake
    return (
        update(run)
        .where(
            run.c.tenant_id == request.tenant_id,
            run.c.id == request.run_id,
            status_in(run.c.status, request.guard),
            run.c.cancel_requested_at.is_(None),
        )
        .values(
            cancel_requested_at=request.at,
            status=case((status_in(run.c.status, wake.guard), wake.target), else_=run.c.status),
            version=run.c.version + 1,
            event_seq=run.c.event_seq + len(request.events),
            updated_at=request.at,
        )
        .returning(run)
    )


async def list_page(
    session: AsyncSession,
    *,
    tenant_id: str,
    status: str | None,
    agent: str | None,
    after: tuple[datetime, str] | None,
    limit: int,
    parent_run_id: str | None = None,
) -> list[Run]:
    query = select(run).where(run.c.tenant_id == tenant_id)
    if parent_run_id:  # served by ix_run_tenant_parent
        query = query.where(run.c.parent_run_id == parent_run_id)
    if status:
        query = query.where(run.c.status == status)
    if agent:
        query = query.where(run.c.agent == agent)
    if after:
        created, run_id = after
        query = query.where(
            or_(run.c.created_at < created, and_(run.c.created_at == created, run.c.id < run_id))
        )
    query = query.order_by(run.c.created_at.desc(), run.c.id.desc()).limit(limit)
    return [to_run(r) for r in (await session.execute(query)).mappings()]


#: A run's events after a seq, one per row: the rows holding them (each holds at least
#: one, so `limit` rows are enough), unpacked in order.
_EVENTS_AFTER = text(
    """
    SELECT e.seq + i.ord - 1 AS seq, i.item ->> 0 AS type, e.at, i.item -> 1 AS data
    FROM (SELECT seq, at, last_seq, events FROM event
          WHERE tenant_id = :tenant AND run_id = :run AND last_seq > :after
          ORDER BY last_seq
          LIMIT :limit) e
    CROSS JOIN LATERAL json_array_elements(e.events) WITH ORDINALITY AS i(item, ord)
    WHERE e.seq + i.ord - 1 > :after
    ORDER BY e.last_seq, i.ord
    LIMIT :limit
    """
)


async def events_page(
    session: AsyncSession, *, tenant_id: str, run_id: str, after: int, limit: int | None
) -> list[EventRecord]:
    """The run's events after seq `after`, in order; all of them when `limit` is None."""
    result = await session.execute(
        _EVENTS_AFTER, {"tenant": tenant_id, "run": run_id, "after": after, "limit": limit}
    )
    return [EventRecord(*row) for row in result]
