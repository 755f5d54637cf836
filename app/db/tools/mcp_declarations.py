"""Pinned MCP declarations (`mcp_declaration`) and their acceptances. Every change is a
conditional write: a first sight inserts only where no row is (`ON CONFLICT DO NOTHING`),
and a later change names the row's `version` it was decided on, so that replicas sharing
the database never overwrite each other's decision: the loser reads the row again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import String, func, literal, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tools.mcp_tables import mcp_declaration, mcp_declaration_acceptance
from app.domain.tools.mcp_declarations import Pin, Seen

#: Announced on every change (payload: the server's name and the announcing process's
#: origin, a line apart), so that every other process reads that server's list and pins
#: again.
CHANNEL = "toolgate_mcp_declarations"

_t = mcp_declaration.c
_COLUMNS = (
    _t.server,
    _t.tool,
    _t.pinned_hash,
    _t.pinned,
    _t.pending_hash,
    _t.pending,
    _t.held_for,
    _t.version,
    _t.pending_since,
)


def _pin(row: Any) -> Pin:
    return Pin(
        server=row.server,
        tool=row.tool,
        pinned_hash=row.pinned_hash,
        pinned=row.pinned,
        pending_hash=row.pending_hash,
        pending=row.pending,
        held_for=tuple(row.held_for or ()),
        version=row.version,
        pending_since=row.pending_since,
    )


async def pins(session: AsyncSession, server: str, tools: Sequence[str]) -> dict[str, Pin]:
    result = await session.execute(
        select(*_COLUMNS).where(_t.server == server, _t.tool.in_(list(tools)))
    )
    return {row.tool: _pin(row) for row in result}


async def pin(session: AsyncSession, server: str, tool: str) -> Pin | None:
    return (await pins(session, server, [tool])).get(tool)


def _change(seen: Seen, now: datetime) -> dict[str, Any]:
    if seen.declaration is None:
        return {"pending_hash": None, "pending": None, "held_for": [], "pending_since": None}
    if seen.pinned:
        return {"pinned_hash": seen.hash, "pinned": dict(seen.declaration)}
    return {
        "pending_hash": seen.hash,
        "pending": dict(seen.declaration),
        "held_for": list(seen.held_for),
        "pending_since": now,
    }


async def first_sight(
    session: AsyncSession, *, server: str, tool: str, seen: Seen, now: datetime
) -> Pin | None:
    """Inserts the tool's row; None when another process inserted one first."""
    statement = (
        pg_insert(mcp_declaration)
        .values(server=server, tool=tool, first_seen_at=now, changed_at=now, **_change(seen, now))
        .on_conflict_do_nothing(index_elements=["server", "tool"])
        .returning(*_COLUMNS)
    )
    row = (await session.execute(statement)).first()
    return None if row is None else _pin(row)


async def seen_again(session: AsyncSession, *, pin: Pin, seen: Seen, now: datetime) -> Pin | None:
    """Changes the row as `seen` says if it is still at `pin.version`; None when it is not."""
    statement = (
        update(mcp_declaration)
        .where(_t.server == pin.server, _t.tool == pin.tool, _t.version == pin.version)
        .values(version=_t.version + 1, changed_at=now, **_change(seen, now))
        .returning(*_COLUMNS)
    )
    row = (await session.execute(statement)).first()
    return None if row is None else _pin(row)


async def accept(session: AsyncSession, *, pin: Pin, now: datetime) -> Pin | None:
    """Makes the pending declaration the pinned one, if the row is still at `pin.version`
    with the same one pending; None when it is not."""
    statement = (
        update(mcp_declaration)
        .where(
            _t.server == pin.server,
            _t.tool == pin.tool,
            _t.version == pin.version,
            _t.pending_hash == pin.pending_hash,
        )
        .values(
            pinned_hash=_t.pending_hash,
            pinned=_t.pending,
            pending_hash=None,
            pending=None,
            held_for=[],
            pending_since=None,
            version=_t.version + 1,
            changed_at=now,
        )
        .returning(*_COLUMNS)
    )
    row = (await session.execute(statement)).first()
    return None if row is None else _pin(row)


async def record_acceptance(
    session: AsyncSession,
    *,
    tenant_id: str,
    id: str,
    pin: Pin,
    tool_name: str,
    declaration: Mapping[str, Any],
    accepted_by: str,
    now: datetime,
) -> None:
    await session.execute(
        mcp_declaration_acceptance.insert().values(
            tenant_id=tenant_id,
            id=id,
            server=pin.server,
            tool=pin.tool,
            tool_name=tool_name,
            declaration_hash=pin.pending_hash,
            previous_hash=pin.pinned_hash,
            declaration=dict(declaration),
            accepted_by=accepted_by,
            accepted_at=now,
        )
    )


async def announce(session: AsyncSession, server: str, origin: str) -> None:
    payload = literal(f"{server}\n{origin}", String())
    await session.execute(select(func.pg_notify(CHANNEL, payload)))
