"""Idempotency-Key records: claimed with an atomic insert, then bound and completed with
writes conditional on the claim token."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.clock import DbTime
from app.db.tables import idempotency_key as table


async def try_claim(session: AsyncSession, values: Mapping[str, Any]) -> bool:
    result = await session.execute(
        pg_insert(table)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["tenant_id", "key"])
        .returning(table.c.key)
    )
    return result.first() is not None


async def get(
    session: AsyncSession, tenant_id: str, key: str, *, db_time: DbTime
) -> Mapping[str, Any] | None:
    """The record, with the database's `now` to judge its lock and expiry by."""
    result = await session.execute(
        select(table, db_time.now().label("db_now")).where(
            table.c.tenant_id == tenant_id, table.c.key == key
        )
    )
    return result.mappings().one_or_none()


async def take_over(
    session: AsyncSession,
    *,
    tenant_id: str,
    key: str,
    old_token: str,
    values: Mapping[str, Any],
) -> bool:
    """Takes an abandoned (or expired) record over; only one of several racers wins."""
    result = await session.execute(
        update(table)
        .where(table.c.tenant_id == tenant_id, table.c.key == key, table.c.claim_token == old_token)
        .values(**values)
    )
    return result.rowcount == 1


async def update_claimed(
    session: AsyncSession, *, tenant_id: str, key: str, token: str, values: Mapping[str, Any]
) -> bool:
    result = await session.execute(
        update(table)
        .where(table.c.tenant_id == tenant_id, table.c.key == key, table.c.claim_token == token)
        .values(**values)
    )
    return result.rowcount == 1


async def release(session: AsyncSession, *, tenant_id: str, key: str, token: str) -> None:
    """Forgets a claim whose request was refused before it changed anything."""
    await session.execute(
        delete(table).where(
            table.c.tenant_id == tenant_id,
            table.c.key == key,
            table.c.claim_token == token,
            table.c.resource_id.is_(None),
        )
    )


async def purge_expired(session: AsyncSession, *, db_time: DbTime, limit: int = 1000) -> int:
    doomed = (
        select(table.c.tenant_id, table.c.key)
        .where(table.c.expires_at < db_time.now())
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    result = await session.execute(
        delete(table).where(tuple_(table.c.tenant_id, table.c.key).in_(doomed))
    )
    return result.rowcount
