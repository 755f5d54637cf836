"""The per-tenant technology radar behind the built-in demo tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tables import technology


def _contains(column: Any, needle: str) -> Any:
    # strpos, not LIKE: a query with % or _ must match literally.
    return func.strpos(func.lower(column), needle.lower()) > 0


async def search(
    session: AsyncSession, *, tenant_id: str, query: str, ring: str | None, limit: int
) -> tuple[list[Mapping[str, Any]], int]:
    condition = [
        technology.c.tenant_id == tenant_id,
        or_(
            _contains(technology.c.name, query),
            _contains(technology.c.category, query),
            _contains(technology.c.description, query),
        ),
    ]
    if ring:
        condition.append(technology.c.ring == ring)
    total = (await session.execute(select(func.count()).where(*condition))).scalar_one()
    rows = await session.execute(
        select(technology).where(*condition).order_by(technology.c.name).limit(limit)
    )
    return list(rows.mappings()), int(total)


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
