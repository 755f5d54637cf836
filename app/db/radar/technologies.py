"""The per-tenant technology radar behind the built-in demo tools."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import column, select, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

from app.db.radar.radar_tables import technology, technology_operation
from app.db.session import alone

#: What a move of a ring did, as its ledger keeps it: {id, name, ring, version}.
MoveResult = dict[str, Any]


@dataclass(frozen=True)
class Technology:
    """One technology of a tenant's radar."""

    id: str
    name: str
    category: str
    ring: str
    description: str
    version: int
    updated_at: datetime


_COLUMNS = [technology.c[f.name] for f in fields(Technology)]


def _search_sql(with_ring: bool) -> str:
    """The search as plain SQL, sent as it is: it goes out on every call of the search
    tool, and SQLAlchemy would otherwise build a cache key of a statement each time.
    strpos, not LIKE: a query with % or _ must match literally."""
    matches = " OR ".join(
        f"strpos(lower({c}), lower($2)) > 0" for c in ("name", "category", "description")
    )
    ring = " AND ring = $4" if with_ring else ""
    columns = ", ".join(f.name for f in fields(Technology))
    return (
        f"SELECT {columns}, count(*) OVER () AS total FROM technology "
        f"WHERE tenant_id = $1 AND ({matches}){ring} ORDER BY name LIMIT $3"
    )


_SEARCH = {with_ring: _search_sql(with_ring) for with_ring in (False, True)}


async def search(
    session: AsyncSession | AsyncConnection | AsyncEngine,
    *,
    tenant_id: str,
    query: str,
    ring: str | None,
    limit: int,
) -> tuple[list[Technology], int]:
    params = (tenant_id, query, limit, *((ring,) if ring else ()))
    rows = await alone(session, _SEARCH[bool(ring)], params)
    return [Technology(*row[:-1]) for row in rows], int(rows[0][-1]) if rows else 0


async def get(session: AsyncSession, *, tenant_id: str, tech_id: str) -> Technology | None:
    result = await session.execute(
        select(*_COLUMNS).where(technology.c.tenant_id == tenant_id, technology.c.id == tech_id)
    )
    row = result.one_or_none()
    return None if row is None else Technology(*row)


async def insert_missing(session: AsyncSession, rows: list[dict[str, Any]]) -> int:
    """Inserts rows whose (tenant, name) is new; returns how many were added."""
    result = await session.execute(
        pg_insert(technology)
        .values(rows)
        .on_conflict_do_nothing(index_elements=["tenant_id", "name"])
        .returning(technology.c.id)
    )
    return len(result.all())


def _move_statement() -> Any:
    """One statement: the conditional update of the row (on its version) and the ledger
    entry of the operation, written together; nothing when the operation is already in
    the ledger or the version moved on. The ledger's answer for the operation comes back
    either way, so a repeated operation is told what it did the first time."""
    return text(
        """
        WITH moved AS (
            UPDATE technology
            SET ring = :ring, version = version + 1, updated_at = :now
            WHERE tenant_id = :tenant_id AND id = :tech_id AND version = :expected
              AND NOT EXISTS (
                  SELECT 1 FROM technology_operation
                  WHERE tenant_id = :tenant_id AND operation_id = :operation_id)
            RETURNING id, name, ring, version
        ), ledger AS (
            INSERT INTO technology_operation (tenant_id, operation_id, technology_id, result,
                                              created_at)
            SELECT :tenant_id, :operation_id, id,
                   jsonb_build_object('id', id, 'name', name, 'ring', ring, 'version', version),
                   :now
            FROM moved
            RETURNING result
        )
        SELECT (SELECT result FROM ledger) AS moved,
               (SELECT result FROM technology_operation
                WHERE tenant_id = :tenant_id AND operation_id = :operation_id) AS earlier
        """
    ).columns(column("moved", JSONB), column("earlier", JSONB))


_MOVE = _move_statement()


async def move(
    session: AsyncSession,
    *,
    tenant_id: str,
    tech_id: str,
    ring: str,
    expected_version: int,
    operation_id: str,
    now: Any,
) -> tuple[MoveResult | None, bool]:
    """(result, done now): the operation's result and whether this call made it; (None,
    False) when the row is absent or its version is not `expected_version` anymore."""
    row = (
        await session.execute(
            _MOVE,
            {
                "tenant_id": tenant_id,
                "tech_id": tech_id,
                "ring": ring,
                "expected": expected_version,
                "operation_id": operation_id,
                "now": now,
            },
        )
    ).one()
    if row.moved is not None:
        return row.moved, True
    return row.earlier, False


async def operation(
    session: AsyncSession, *, tenant_id: str, operation_id: str
) -> MoveResult | None:
    """What an operation did, from the ledger; None when it never took effect."""
    result = await session.execute(
        select(technology_operation.c.result).where(
            technology_operation.c.tenant_id == tenant_id,
            technology_operation.c.operation_id == operation_id,
        )
    )
    return result.scalar_one_or_none()
