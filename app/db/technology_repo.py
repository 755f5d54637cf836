"""The per-tenant technology radar behind the built-in demo tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Integer, String, bindparam, func, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tables import technology


def _contains(column: Any, needle: Any) -> Any:
    # strpos, not LIKE: a query with % or _ must match literally.
    return func.strpos(func.lower(column), func.lower(needle)) > 0


def _search_statement(with_ring: bool) -> Any:
    needle = bindparam("needle", type_=String())
    condition = [
        technology.c.tenant_id == bindparam("tenant_id", type_=String()),
        or_(
            _contains(technology.c.name, needle),
            _contains(technology.c.category, needle),
            _contains(technology.c.description, needle),
        ),
    ]
    if with_ring:
        condition.append(technology.c.ring == bindparam("ring", type_=String()))
    # The total over all matches comes with the page: one statement, not two.
    return (
        select(technology, func.count().over().label("total"))
        .where(*condition)
        .order_by(technology.c.name)
        .limit(bindparam("limit", type_=Integer()))
    )


_SEARCH = {with_ring: _search_statement(with_ring) for with_ring in (False, True)}


async def search(
    session: AsyncSession, *, tenant_id: str, query: str, ring: str | None, limit: int
) -> tuple[list[Mapping[str, Any]], int]:
    params = {"tenant_id": tenant_id, "needle": query, "limit": limit}
    if ring:
        params["ring"] = ring
    rows = list((await session.execute(_SEARCH[bool(ring)], params)).mappings())
    return rows, int(rows[0]["total"]) if rows else 0


async def get(session: AsyncSession, *, tenant_id: str, tech_id: str) -> Mapping[str, Any] | None:
    result = await session.execute(
        select(technology).where(technology.c.tenant_id == tenant_id, technology.c.id == tech_id)
    )
    return result.mappings().one_or_none()


async def insert_missing(session: AsyncSession, rows: list[dict[str, Any]]) -> int:
    """Inserts rows whose (tenant, name) is new; returns how many were added."""
    result = await session.execute(
        pg_insert(technology)
        .values(rows)
        .on_conflict_do_nothing(index_elements=["tenant_id", "name"])
        .returning(technology.c.id)
    )
    return len(result.all())
