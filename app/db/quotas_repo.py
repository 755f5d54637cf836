"""What a tenant's quotas count: runs created per minute (a counter per minute on the
database's clock, shared by every replica) and the cost of the runs it created today."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db.clock import DbTime
from app.db.tables import run, run_rate


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


async def cost_since(
    session: AsyncSession | AsyncConnection, *, tenant_id: str, since: datetime
) -> float:
    """The cost of the tenant's runs created at or after `since` (what they spent so far)."""
    statement = select(func.coalesce(func.sum(run.c.cost_usd), 0)).where(
        run.c.tenant_id == tenant_id, run.c.created_at >= since
    )
    return float((await session.execute(statement)).scalar_one())


async def purge(session: AsyncSession, *, db_time: DbTime) -> None:
    """Counters of minutes long gone."""
    await session.execute(delete(run_rate).where(run_rate.c.window_start < db_time.after(-300)))
