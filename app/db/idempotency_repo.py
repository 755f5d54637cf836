"""Idempotency-Key records: claimed with an atomic insert, then bound and completed with
writes conditional on the claim token."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

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


@dataclass(frozen=True)
class Binding:
    """How a creating statement binds its request's key to what it creates: `insert` a
    claim not written yet (nothing is created when the key already has a record), or
    `bind` a claim this request holds (nothing is created when the claim was lost)."""

    kind: Literal["insert", "bind"]
    tenant_id: str
    key: str
    token: str
    fingerprint: str | None = None
    lock_s: float = 0.0
    ttl_s: float = 0.0
    created_at: datetime | None = None


def binding_cte(binding: Binding, *, resource_id: Any, db_time: DbTime) -> Any:
    """The binding as a data-modifying CTE that returns one row when it took hold."""
    if binding.kind == "bind":
        return (
            update(table)
            .where(
                table.c.tenant_id == binding.tenant_id,
                table.c.key == binding.key,
                table.c.claim_token == binding.token,
            )
            .values(resource_id=resource_id)
            .returning(table.c.key)
            .cte("bound")
        )
    return (
        pg_insert(table)
        .values(
            tenant_id=binding.tenant_id,
            key=binding.key,
            fingerprint=binding.fingerprint,
            state="in_flight",
            claim_token=binding.token,
            locked_until=db_time.after(binding.lock_s),
            created_at=binding.created_at,
            expires_at=db_time.after(binding.ttl_s),
            resource_id=resource_id,
        )
        .on_conflict_do_nothing(index_elements=["tenant_id", "key"])
        .returning(table.c.key)
        .cte("bound")
    )


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
