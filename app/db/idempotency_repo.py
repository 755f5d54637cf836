"""Idempotency-Key records: claimed with an atomic insert, then bound and completed with
writes conditional on the claim token."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import bindparam, delete, select, tuple_, update
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


def binding_params(binding: Binding, db_time: DbTime) -> dict[str, Any]:
    params: dict[str, Any] = {"b_tenant": binding.tenant_id, "b_key": binding.key}
    params["b_token"] = binding.token
    if binding.kind == "insert":
        params.update(
            b_fingerprint=binding.fingerprint,
            b_lock=db_time.interval(binding.lock_s),
            b_created=binding.created_at,
            b_ttl=db_time.interval(binding.ttl_s),
        )
    return params


def binding_cte(kind: str, resource_id: Any) -> Any:
    """The binding as a data-modifying CTE that returns one row when it took hold (its
    parameters: `binding_params`); built into the creating statement, which is cached."""
    if kind == "bind":
        return (
            update(table)
            .where(
                table.c.tenant_id == bindparam("b_tenant"),
                table.c.key == bindparam("b_key"),
                table.c.claim_token == bindparam("b_token"),
            )
            .values(resource_id=resource_id)
            .returning(table.c.key)
            .cte("bound")
        )
    return (
        pg_insert(table)
        .values(
            tenant_id=bindparam("b_tenant"),
            key=bindparam("b_key"),
            fingerprint=bindparam("b_fingerprint"),
            state="in_flight",
            claim_token=bindparam("b_token"),
            locked_until=DbTime.after_param("b_lock"),
            created_at=bindparam("b_created", type_=table.c.created_at.type),
            expires_at=DbTime.after_param("b_ttl"),
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
    params = {f"v_{name}": value for name, value in values.items()}
    params.update(w_tenant=tenant_id, w_key=key, w_token=token)
    result = await session.execute(_update_claimed(tuple(sorted(values))), params)
    return result.rowcount == 1


@functools.lru_cache(maxsize=16)
def _update_claimed(names: tuple[str, ...]) -> Any:
    return (
        update(table)
        .where(
            table.c.tenant_id == bindparam("w_tenant"),
            table.c.key == bindparam("w_key"),
            table.c.claim_token == bindparam("w_token"),
        )
        .values({name: bindparam(f"v_{name}", type_=table.c[name].type) for name in names})
    )


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
