"""Turns (model requests and their answers) and tool calls of a run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.runs_repo import StaleWrite
from app.db.tables import tool_call, turn


async def insert_turn(session: AsyncSession, values: Mapping[str, Any]) -> None:
    await session.execute(insert(turn).values(**values))


async def insert_calls(session: AsyncSession, rows: Sequence[Mapping[str, Any]]) -> None:
    if rows:
        await session.execute(insert(tool_call), [dict(r) for r in rows])


async def turns(session: AsyncSession, *, tenant_id: str, run_id: str) -> list[Mapping[str, Any]]:
    result = await session.execute(
        select(turn)
        .where(turn.c.tenant_id == tenant_id, turn.c.run_id == run_id)
        .order_by(turn.c.step)
    )
    return list(result.mappings())


async def calls(
    session: AsyncSession, *, tenant_id: str, run_id: str, step: int | None = None
) -> list[Mapping[str, Any]]:
    query = select(tool_call).where(
        tool_call.c.tenant_id == tenant_id, tool_call.c.run_id == run_id
    )
    if step is not None:
        query = query.where(tool_call.c.step == step)
    result = await session.execute(query.order_by(tool_call.c.step, tool_call.c.position))
    return list(result.mappings())


async def calls_page(
    session: AsyncSession, *, tenant_id: str, run_id: str, after: tuple[int, int] | None, limit: int
) -> list[Mapping[str, Any]]:
    query = select(tool_call).where(
        tool_call.c.tenant_id == tenant_id, tool_call.c.run_id == run_id
    )
    if after is not None:
        query = query.where(tuple_(tool_call.c.step, tool_call.c.position) > tuple_(*after))
    result = await session.execute(
        query.order_by(tool_call.c.step, tool_call.c.position).limit(limit)
    )
    return list(result.mappings())


async def update_call(
    session: AsyncSession,
    *,
    tenant_id: str,
    call_pk: str,
    version: int,
    now: datetime,
    values: Mapping[str, Any],
) -> Mapping[str, Any]:
    """Conditional on the call's version; raises StaleWrite when another writer won."""
    result = await session.execute(
        update(tool_call)
        .where(
            tool_call.c.tenant_id == tenant_id,
            tool_call.c.id == call_pk,
            tool_call.c.version == version,
        )
        .values(**dict(values), version=tool_call.c.version + 1, updated_at=now)
        .returning(tool_call)
    )
    row = result.mappings().one_or_none()
    if row is None:
        raise StaleWrite(call_pk)
    return row
