"""The kill switch's rows: which tools a tenant's admins disabled."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, literal, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import String

from app.db.tables import tool_switch

#: Announced on every change (payload: the tenant), so every process drops its cache.
CHANNEL = "toolgate_tools"


async def disabled(session: AsyncSession, tenant_id: str) -> frozenset[str]:
    result = await session.execute(
        select(tool_switch.c.tool).where(tool_switch.c.tenant_id == tenant_id)
    )
    return frozenset(result.scalars())


async def set_disabled(
    session: AsyncSession, *, tenant_id: str, tool: str, by: str, now: datetime, off: bool
) -> None:
    if off:
        await session.execute(
            pg_insert(tool_switch)
            .values(tenant_id=tenant_id, tool=tool, disabled_by=by, disabled_at=now)
            .on_conflict_do_nothing(index_elements=["tenant_id", "tool"])
        )
    else:
        await session.execute(
            delete(tool_switch).where(
                tool_switch.c.tenant_id == tenant_id, tool_switch.c.tool == tool
            )
        )
    await session.execute(select(func.pg_notify(CHANNEL, literal(tenant_id, String()))))
