"""API keys, stored only as hashes: a key as written and as it authenticates."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tables import api_key


@dataclass(frozen=True)
class NewKey:
    tenant_id: str
    id: str
    key_hash: str
    subject: str
    roles: list[str]
    scopes: list[str] | None
    created_at: datetime


@dataclass(frozen=True)
class KeyOwner:
    """Whom a key that is not revoked stands for."""

    tenant_id: str
    subject: str
    roles: list[str]
    scopes: list[str] | None


async def insert_key(session: AsyncSession, key: NewKey) -> None:
    await session.execute(insert(api_key).values(**asdict(key)))


async def get_by_hash(session: AsyncSession, key_hash: str) -> KeyOwner | None:
    result = await session.execute(
        select(api_key.c.tenant_id, api_key.c.subject, api_key.c.roles, api_key.c.scopes).where(
            api_key.c.key_hash == key_hash, api_key.c.revoked_at.is_(None)
        )
    )
    row = result.mappings().one_or_none()
    return None if row is None else KeyOwner(**row)
