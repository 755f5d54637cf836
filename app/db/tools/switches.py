"""The kill switch's rows (which tools a tenant's admins disabled) and the rate limits'
counters (calls of a tool per tenant and minute)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, literal, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import String

from app.db.clock import DbTime
from app.db.tables import tool_rate, tool_switch

#: Announced on every change (payload: the tenant), so every process drops its cache.
CHANNEL = "toolgate_tools"


async def disabled(session: AsyncSession, tenant_id: str) -> frozenset[str]:
    result = await session.execute(
        select(tool_switch.c.tool).where(tool_switch.c.tenant_id == tenant_id)
    )
    return frozenset(result.scalars())


async def is_disabled(session: AsyncSession, *, tenant_id: str, tool: str) -> bool:
    result = await session.execute(
        select(tool_switch.c.tool).where(
            tool_switch.c.tenant_id == tenant_id, tool_switch.c.tool == tool
        )
    )
    return result.first() is not None


async def set_disabled(
    session: AsyncSession, *, tenant_id: str, tool: str, by: str, now: datetime, off: bool
) -> bool:
    """Whether the switch moved (off a tool already off, or on one already on: no)."""
    if off:
        changed = await session.execute(
            pg_insert(tool_switch)
            .values(tenant_id=tenant_id, tool=tool, disabled_by=by, disabled_at=now)
            .on_conflict_do_nothing(index_elements=["tenant_id", "tool"])
        )
    else:
        changed = await session.execute(
            delete(tool_switch).where(
                tool_switch.c.tenant_id == tenant_id, tool_switch.c.tool == tool
            )
        )
    await session.execute(select(func.pg_notify(CHANNEL, literal(tenant_id, String()))))
    return bool(changed.rowcount)


async def take_call(
    session: AsyncSession, *, tenant_id: str, tool: str, limit: int, db_time: DbTime
) -> bool:
    """Counts one call of `tool` in the current minute (the database's clock) if the
    minute has room under `limit`; False when it has not. One statement, atomic across
    replicas."""
    window = func.date_trunc("minute", db_time.now())
    statement = (
        pg_insert(tool_rate)
        .values(tenant_id=tenant_id, tool=tool, window_start=window, calls=1)
        .on_conflict_do_update(
            index_elements=["tenant_id", "tool", "window_start"],
            set_={"calls": tool_rate.c.calls + 1},
            where=tool_rate.c.calls < limit,
        )
        .returning(tool_rate.c.calls)
    )
    return (await session.execute(statement)).first() is not None


async def purge_rates(session: AsyncSession, *, db_time: DbTime) -> None:
    """Counters of minutes long gone."""
    await session.execute(delete(tool_rate).where(tool_rate.c.window_start < db_time.after(-300)))
