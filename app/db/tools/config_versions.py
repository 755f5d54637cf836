"""Config versions by hash (`config_version`): written once, never changed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tables import config_version


async def save(session: AsyncSession, documents: Mapping[str, Mapping[str, Any]]) -> None:
    """Keeps each version not kept yet, in one statement."""
    if not documents:
        return
    rows = [
        {"hash": version, "document": dict(doc), "created_at": func.now()}
        for version, doc in documents.items()
    ]
    await session.execute(
        pg_insert(config_version).values(rows).on_conflict_do_nothing(index_elements=["hash"])
    )


async def document(session: AsyncSession, version: str) -> dict[str, Any] | None:
    found = await session.execute(
        select(config_version.c.document).where(config_version.c.hash == version)
    )
    return found.scalar_one_or_none()
