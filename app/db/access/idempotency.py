"""Idempotency-Key records: claimed with an atomic insert, then bound and completed with
writes conditional on the claim token."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, String, Text, bindparam, cast, delete, func, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.clock import DbTime
from app.db.tables import idempotency_key as table


@dataclass(frozen=True)
class NewClaim:
    """A key's record as a claim writes it: in flight, no answer yet. `locked_until` and
    `expires_at` are on the database's clock (expressions of `DbTime`)."""

    tenant_id: str
    key: str
    fingerprint: str | None
    claim_token: str
    locked_until: Any
    created_at: datetime
    expires_at: Any
    resource_id: str | None = None

    def values(self) -> dict[str, Any]:
        return {
            **{f.name: getattr(self, f.name) for f in fields(self)},
            "state": "in_flight",
            "response_status": None,
            "response_headers": None,
            "response_body": None,
        }


@dataclass(frozen=True)
class KeyRecord:
    """A key's record as read, with the database's `now` to judge its lock and expiry."""

    fingerprint: str | None
    done: bool
    claim_token: str
    locked_until: datetime
    expires_at: datetime
    resource_id: str | None
    response_status: int | None
    response_headers: dict[str, str] | None
    response_body: Any
    db_now: datetime


async def try_claim(session: AsyncSession, claim: NewClaim) -> bool:
    result = await session.execute(
        pg_insert(table)
        .values(**claim.values())
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


async def bind(
    session: AsyncSession, binding: Binding, resource_id: str, *, db_time: DbTime
) -> bool:
    """The binding on its own, for a creating transaction of several statements: False
    when it did not take hold (the transaction must then make nothing)."""
    bound = binding_cte(binding.kind, bindparam("b_resource", type_=String()))
    params = {**binding_params(binding, db_time), "b_resource": resource_id}
    return (await session.execute(select(bound.c.key), params)).first() is not None


@dataclass(frozen=True)
class Answered:
    """A request's answer as a key's record keeps it: `body` is JSON text, as sent."""

    status: int
    headers: dict[str, str]
    body: str


async def answer(
    session: AsyncSession,
    *,
    tenant_id: str,
    key: str,
    token: str,
    answered: Answered,
    kept_s: float,
    db_time: DbTime,
) -> bool:
    """Stores the answer in the transaction that makes the request's change, so that the
    change is never committed without it; the record is kept `kept_s` from now at least.
    False when the request no longer holds the key's claim (the transaction must then
    make nothing)."""
    result = await session.execute(
        update(table)
        .where(table.c.tenant_id == tenant_id, table.c.key == key, table.c.claim_token == token)
        .values(
            state="done",
            response_status=answered.status,
            response_headers=answered.headers,
            response_body=cast(bindparam("b_body", answered.body, type_=Text()), JSON()),
            expires_at=func.greatest(table.c.expires_at, db_time.after(kept_s)),
        )
        .returning(table.c.key)
    )
    return result.first() is not None


async def get(
    session: AsyncSession, tenant_id: str, key: str, *, db_time: DbTime
) -> KeyRecord | None:
    """The record, with the database's `now` to judge its lock and expiry by."""
    result = await session.execute(
        select(table, db_time.now().label("db_now")).where(
            table.c.tenant_id == tenant_id, table.c.key == key
        )
    )
    row = result.mappings().one_or_none()
    if row is None:
        return None
    names = [f.name for f in fields(KeyRecord) if f.name != "done"]
    return KeyRecord(done=row["state"] == "done", **{n: row[n] for n in names})


async def take_over(
    session: AsyncSession,
    *,
    tenant_id: str,
    key: str,
    old_token: str,
    claim: NewClaim,
    fresh: bool,
) -> bool:
    """Takes an abandoned record over (its lock lapsed: the new token and lock only), or
    an expired one afresh (`fresh`: the whole new claim); only one of several racers
    wins."""
    values = (
        claim.values()
        if fresh
        else {"claim_token": claim.claim_token, "locked_until": claim.locked_until}
    )
    result = await session.execute(
        update(table)
        .where(table.c.tenant_id == tenant_id, table.c.key == key, table.c.claim_token == old_token)
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
