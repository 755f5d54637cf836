"""API keys, stored only as hashes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tables import api_key


async def insert_key(session: AsyncSession, values: Mapping[str, Any]) -> None:
    await session.execute(insert(api_key).values(**values))


async def get_by_hash(session: AsyncSession, key_hash: str) -> Mapping[str, Any] | None:
    result = await session.execute(
        select(api_key).where(api_key.c.key_hash == key_hash, api_key.c.revoked_at.is_(None))
    )
    return result.mappings().one_or_none()
