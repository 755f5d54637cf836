"""Turns (model requests and their answers) and tool calls of a run, read as typed
records. They are written by a step's one statement (`db.lifecycle.step_writes`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from sqlalchemy import select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tables import tool_call, turn
from app.domain.errors import ErrorValue
from app.domain.lifecycle.records import Call, Turn
from app.domain.lifecycle.status import CallStatus

_TURN_FIELDS = tuple(f.name for f in fields(Turn))
_CALL_FIELDS = tuple(f.name for f in fields(Call))


def to_turn(row: Mapping[str, Any]) -> Turn:
    data = {name: row[name] for name in _TURN_FIELDS}
    data["rejection"] = ErrorValue.from_dict(row["rejection"])
    data["extra_rejections"] = tuple(row["extra_rejections"] or ())
    data["cost_usd"] = float(row["cost_usd"])
    return Turn(**data)


def to_call(row: Mapping[str, Any]) -> Call:
    data = {name: row[name] for name in _CALL_FIELDS}
    data["status"] = CallStatus(row["status"])
    data["error"] = ErrorValue.from_dict(row["error"])
    return Call(**data)


async def turns(session: AsyncSession, *, tenant_id: str, run_id: str) -> list[Turn]:
    result = await session.execute(
        select(turn)
        .where(turn.c.tenant_id == tenant_id, turn.c.run_id == run_id)
        .order_by(turn.c.step)
    )
    return [to_turn(r) for r in result.mappings()]


async def calls(
    session: AsyncSession, *, tenant_id: str, run_id: str, step: int | None = None
) -> list[Call]:
    query = select(tool_call).where(
        tool_call.c.tenant_id == tenant_id, tool_call.c.run_id == run_id
    )
    if step is not None:
        query = query.where(tool_call.c.step == step)
    result = await session.execute(query.order_by(tool_call.c.step, tool_call.c.position))
    return [to_call(r) for r in result.mappings()]


async def calls_page(
    session: AsyncSession, *, tenant_id: str, run_id: str, after: tuple[int, int] | None, limit: int
) -> list[Call]:
    query = select(tool_call).where(
        tool_call.c.tenant_id == tenant_id, tool_call.c.run_id == run_id
    )
    if after is not None:
        query = query.where(tuple_(tool_call.c.step, tool_call.c.position) > tuple_(*after))
    result = await session.execute(
        query.order_by(tool_call.c.step, tool_call.c.position).limit(limit)
    )
    return [to_call(r) for r in result.mappings()]
