"""What a tenant's quotas count: runs created per minute (a counter per minute on the
database's clock, shared by every replica) and the cost of the runs it created today (a
running total of the finished ones, which a trigger keeps, and the ones still going)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db.clock import DbTime
from app.db.limits.quota_tables import run_rate, tenant_day_cost
from app.db.tables import run
from app.domain.lifecycle.status import RunStatus

_GOING = [s for s in RunStatus if s != RunStatus.FINISHED]


async def take_run(
    session: AsyncSession | AsyncConnection, *, tenant_id: str, limit: int, db_time: DbTime
) -> float | None:
    """Counts one run in the current minute (the database's clock) if the minute has room
    under `limit`, in one statement, atomic across replicas: None when it had; else the
    seconds until the next minute, when it will."""
    now = db_time.now()
    window = func.date_trunc("minute", now)
    taken = (
        pg_insert(run_rate)
        .values(tenant_id=tenant_id, window_start=window, runs=1)
        .on_conflict_do_update(
            index_elements=["tenant_id", "window_start"],
            set_={"runs": run_rate.c.runs + 1},
            where=run_rate.c.runs < limit,
        )
        .returning(run_rate.c.runs)
        .cte("taken")
    )
    left = func.extract("epoch", window + func.make_interval(0, 0, 0, 0, 0, 1) - now)
    statement = select(select(taken.c.runs).scalar_subquery(), left)
    runs, seconds = (await session.execute(statement)).one()
    return None if runs is not None else float(seconds)


async def cost_of_day(
    session: AsyncSession | AsyncConnection, *, tenant_id: str, day: datetime
) -> float:
    """What the tenant's runs created on the UTC day starting at `day` cost so far: the
    finished ones' total (one row) and the runs still going (few), in one snapshot, so a
    run that finishes meanwhile is counted once."""
    finished = select(tenant_day_cost.c.cost_usd).where(
        tenant_day_cost.c.tenant_id == tenant_id, tenant_day_cost.c.day == day.date()
    )
    going = select(func.sum(run.c.cost_usd)).where(
        run.c.tenant_id == tenant_id,
        run.c.status.in_(_GOING),
        run.c.created_at >= day,
        run.c.created_at < day + timedelta(days=1),
    )
    statement = select(
        func.coalesce(finished.scalar_subquery(), 0) + func.coalesce(going.scalar_subquery(), 0)
    )
    return float((await session.execute(statement)).scalar_one())


async def purge(session: AsyncSession, *, db_time: DbTime, today: datetime) -> None:
    """Counters of minutes long gone, and totals of days before yesterday."""
    await session.execute(delete(run_rate).where(run_rate.c.window_start < db_time.after(-300)))
    before = (today - timedelta(days=1)).date()
    await session.execute(delete(tenant_day_cost).where(tenant_day_cost.c.day < before))
