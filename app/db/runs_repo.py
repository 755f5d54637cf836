"""Runs and their events. Every change of an existing run is conditional: on the lease
token while a stepper holds the run, on the version otherwise; a write that matches no
row raises, so a lost race is never mistaken for success."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy import insert as sa_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tables import event, run
from app.domain.budget import Limits, Usage
from app.domain.status import RunStatus
from app.domain.tools import Principal


class StaleWrite(Exception):
    """The run changed under us: the lease was lost or the version moved on."""


@dataclass(frozen=True)
class RunRecord:
    row: Mapping[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.row[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    @property
    def creator(self) -> Principal:
        """Who created the run, as a principal (scopes kept on the run; roles not)."""
        scopes = self.row["creator_scopes"]
        return Principal(
            self.row["tenant_id"],
            self.row["created_by"],
            frozenset(),
            None if scopes is None else frozenset(scopes),
        )

    @property
    def limits_value(self) -> Limits:
        return Limits.from_dict(self.row["limits"])

    @property
    def usage_value(self) -> Usage:
        return Usage(
            steps=self.row["steps"],
            input_tokens=self.row["input_tokens"],
            output_tokens=self.row["output_tokens"],
            cost_usd=float(self.row["cost_usd"]),
            tool_calls=self.row["tool_calls"],
        )


Event = tuple[str, dict[str, Any]]


async def insert(session: AsyncSession, values: dict[str, Any]) -> RunRecord:
    result = await session.execute(run.insert().values(**values).returning(run))
    return RunRecord(result.mappings().one())


async def get(session: AsyncSession, tenant_id: str, run_id: str) -> RunRecord | None:
    result = await session.execute(
        select(run).where(run.c.tenant_id == tenant_id, run.c.id == run_id)
    )
    row = result.mappings().one_or_none()
    return RunRecord(row) if row else None


async def _append_events(
    session: AsyncSession,
    record: RunRecord,
    events: Sequence[Event],
    now: datetime,
) -> None:
    if not events:
        return
    first = record.event_seq - len(events) + 1
    await session.execute(
        sa_insert(event),
        [
            {
                "tenant_id": record.tenant_id,
                "run_id": record.id,
                "seq": first + i,
                "type": kind,
                "at": now,
                "data": data,
            }
            for i, (kind, data) in enumerate(events)
        ],
    )


async def write(
    session: AsyncSession,
    *,
    tenant_id: str,
    run_id: str,
    now: datetime,
    lease_token: str | None = None,
    version: int | None = None,
    values: Mapping[str, Any] | None = None,
    events: Sequence[Event] = (),
    only_if: Sequence[Any] = (),
    expect_status: RunStatus | None = None,
) -> RunRecord:
    """Changes the run and appends its events, each event's seq taken from the run's
    counter in the same statement; conditional on the lease token and/or version."""
    conditions = [run.c.tenant_id == tenant_id, run.c.id == run_id]
    if lease_token is not None:
        conditions.append(run.c.lease_token == lease_token)
    if version is not None:
        conditions.append(run.c.version == version)
    conditions.extend(only_if)
    if expect_status is not None:
        conditions.append(run.c.status == expect_status)
    if lease_token is None and version is None and not only_if:
        raise ValueError("an unconditional run write is a bug")
    result = await session.execute(
        update(run)
        .where(*conditions)
        .values(
            **dict(values or {}),
            version=run.c.version + 1,
            event_seq=run.c.event_seq + len(events),
            updated_at=now,
        )
        .returning(run)
    )
    row = result.mappings().one_or_none()
    if row is None:
        raise StaleWrite(run_id)
    record = RunRecord(row)
    await _append_events(session, record, events, now)
    return record


async def mark_cancel_requested(
    session: AsyncSession, *, tenant_id: str, run_id: str, now: datetime, by: str
) -> RunRecord | None:
    """Records a cancel request on an unfinished run not yet asked to cancel: conditional
    on that state (not on the version, which a busy stepper keeps moving). None when the
    run is finished, already asked, or absent."""
    try:
        return await write(
            session,
            tenant_id=tenant_id,
            run_id=run_id,
            now=now,
            values={"cancel_requested_at": now},
            events=[("run.cancel_requested", {"by": by})],
            only_if=[run.c.status != RunStatus.FINISHED, run.c.cancel_requested_at.is_(None)],
        )
    except StaleWrite:
        return None


async def claim(
    session: AsyncSession,
    *,
    tenant_id: str,
    run_id: str,
    owner: str,
    token: str,
    now: datetime,
    expires_at: datetime,
) -> RunRecord | None:
    """Takes the lease of an active run nobody holds (or whose holder's lease expired)."""
    result = await session.execute(
        update(run)
        .where(
            run.c.tenant_id == tenant_id,
            run.c.id == run_id,
            run.c.status.in_([RunStatus.QUEUED, RunStatus.RUNNING]),
            or_(run.c.lease_token.is_(None), run.c.lease_expires_at < now),
        )
        .values(
            lease_owner=owner,
            lease_token=token,
            lease_expires_at=expires_at,
            status=RunStatus.RUNNING,
            version=run.c.version + 1,
            event_seq=run.c.event_seq + 1,
            updated_at=now,
        )
        .returning(run)
    )
    row = result.mappings().one_or_none()
    if row is None:
        return None
    record = RunRecord(row)
    # A claim is a transition like any other: the timeline shows who picks a run up when
    # (the first time, or again after a holder stopped).
    await _append_events(session, record, [("run.claimed", {"after_step": record.steps})], now)
    return record


async def renew(
    session: AsyncSession,
    *,
    tenant_id: str,
    run_id: str,
    token: str,
    expires_at: datetime,
) -> RunRecord | None:
    """Extends the lease; None when it was lost. Leaves version alone: not a state change."""
    result = await session.execute(
        update(run)
        .where(run.c.tenant_id == tenant_id, run.c.id == run_id, run.c.lease_token == token)
        .values(lease_expires_at=expires_at)
        .returning(run)
    )
    row = result.mappings().one_or_none()
    return RunRecord(row) if row else None


async def peek(
    session: AsyncSession, *, tenant_id: str, run_id: str
) -> tuple[str | None, datetime | None]:
    """The run's lease token and cancel request: what a stepper polls for."""
    result = await session.execute(
        select(run.c.lease_token, run.c.cancel_requested_at).where(
            run.c.tenant_id == tenant_id, run.c.id == run_id
        )
    )
    row = result.one_or_none()
    return (row.lease_token, row.cancel_requested_at) if row else (None, None)


async def release(session: AsyncSession, *, tenant_id: str, run_id: str, token: str) -> None:
    await session.execute(
        update(run)
        .where(run.c.tenant_id == tenant_id, run.c.id == run_id, run.c.lease_token == token)
        .values(lease_owner=None, lease_token=None, lease_expires_at=None)
    )


async def runnable(session: AsyncSession, *, now: datetime, limit: int) -> list[tuple[str, str]]:
    """Active runs nobody advances: no lease, or an expired one. Rows another driver is
    looking at right now are skipped, not waited for."""
    result = await session.execute(
        select(run.c.tenant_id, run.c.id)
        .where(
            run.c.status.in_([RunStatus.QUEUED, RunStatus.RUNNING]),
            or_(run.c.lease_expires_at.is_(None), run.c.lease_expires_at < now),
        )
        .order_by(run.c.lease_expires_at.asc().nulls_first())
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return [(r.tenant_id, r.id) for r in result]


async def list_page(
    session: AsyncSession,
    *,
    tenant_id: str,
    status: str | None,
    agent: str | None,
    after: tuple[datetime, str] | None,
    limit: int,
) -> list[RunRecord]:
    query = select(run).where(run.c.tenant_id == tenant_id)
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
    return [RunRecord(r) for r in (await session.execute(query)).mappings()]


async def events_page(
    session: AsyncSession, *, tenant_id: str, run_id: str, after: int, limit: int
) -> list[Mapping[str, Any]]:
    result = await session.execute(
        select(event.c.seq, event.c.type, event.c.at, event.c.data)
        .where(event.c.tenant_id == tenant_id, event.c.run_id == run_id, event.c.seq > after)
        .order_by(event.c.seq)
        .limit(limit)
    )
    return list(result.mappings())


def run_column(name: str) -> Any:
    """A column of the run table, for relative updates such as `tool_calls + 1`."""
    return run.c[name]
