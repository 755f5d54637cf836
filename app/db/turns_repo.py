"""Turns (model requests and their answers) and tool calls of a run, as typed records.

Writes here run inside a transaction whose first statement is the run's lease-conditional
update (`runs_repo.apply`): a holder that lost the lease never reaches them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from sqlalchemy import bindparam, insert, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tables import tool_call, turn
from app.domain.errors import ErrorValue
from app.domain.records import Call, Turn
from app.domain.status import CallStatus

_TURN_FIELDS = tuple(f.name for f in fields(Turn))
_CALL_FIELDS = tuple(f.name for f in fields(Call))
#: What an outcome changes on a call row.
_OUTCOME = (
    "status",
    "attempts",
    "error",
    "ends_run",
    "output",
    "source_id",
    "observed_at",
    "source_version",
    "updated_at",
)


def _error(value: ErrorValue | None) -> dict[str, Any] | None:
    return None if value is None else value.as_dict()


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


def _call_row(call: Call) -> dict[str, Any]:
    data = {name: getattr(call, name) for name in _CALL_FIELDS}
    data["error"] = _error(call.error)
    return data


async def insert_turn(session: AsyncSession, record: Turn) -> None:
    data = {name: getattr(record, name) for name in _TURN_FIELDS}
    data["rejection"] = _error(record.rejection)
    data["extra_rejections"] = list(record.extra_rejections)
    await session.execute(_INSERT_TURN, data)


async def insert_calls(session: AsyncSession, calls: Sequence[Call]) -> None:
    if calls:
        await session.execute(_INSERT_CALL, [_call_row(c) for c in calls])


# Built once: their compiled forms are cached, and many rows go in one execution.
_INSERT_TURN = insert(turn)
_INSERT_CALL = insert(tool_call)


_UPDATE_OUTCOME = (
    update(tool_call)
    .where(tool_call.c.tenant_id == bindparam("t_tenant"), tool_call.c.id == bindparam("t_id"))
    .values(
        {**{name: bindparam(f"v_{name}") for name in _OUTCOME}, "version": tool_call.c.version + 1}
    )
)


async def update_calls(session: AsyncSession, calls: Sequence[Call]) -> None:
    """Writes the outcome of each call (one statement, executed for every call)."""
    if not calls:
        return
    params = []
    for c in calls:
        row = _call_row(c)
        params.append(
            {"t_tenant": c.tenant_id, "t_id": c.id, **{f"v_{k}": row[k] for k in _OUTCOME}}
        )
    await session.execute(_UPDATE_OUTCOME, params)


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
