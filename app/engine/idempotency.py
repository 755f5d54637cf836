"""Idempotency-Key use cases: claim a key, bind it to what the request created (in the
creating transaction), store the answer, or forget a claim whose request changed nothing."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import idempotency_repo
from app.domain.idempotency import StoredKey, Verdict, judge
from app.engine.runtime import Runtime


class ClaimLost(Exception):
    """Another request took the key over (this one outlived its lock); nothing was made."""


@dataclass(frozen=True)
class Claim:
    """This request holds the key. `resource_id` is set when an earlier holder (which then
    crashed) had already created the resource: the request must not create it again."""

    tenant_id: str
    key: str
    token: str
    resource_id: str | None = None


@dataclass(frozen=True)
class Replay:
    status: int
    headers: Mapping[str, str]
    body: Any


async def begin(
    rt: Runtime, *, tenant_id: str, key: str, fingerprint: str
) -> Claim | Replay | Verdict:
    settings = rt.settings
    for _ in range(3):
        now = rt.clock.now()
        token = secrets.token_hex(16)
        fresh = {
            "tenant_id": tenant_id,
            "key": key,
            "fingerprint": fingerprint,
            "state": "in_flight",
            "claim_token": token,
            "locked_until": now + timedelta(seconds=settings.idempotency_lock_s),
            "created_at": now,
            "expires_at": now + timedelta(seconds=settings.idempotency_ttl_s),
            "resource_id": None,
            "response_status": None,
            "response_headers": None,
            "response_body": None,
        }
        async with rt.sessions.begin() as session:
            if await idempotency_repo.try_claim(session, fresh):
                return Claim(tenant_id, key, token)
            row = await idempotency_repo.get(session, tenant_id, key)
            if row is None:
                continue  # purged between our insert and our read: try again
            stored = StoredKey(
                row["fingerprint"], row["state"] == "done", row["locked_until"], row["expires_at"]
            )
            verdict = judge(stored, fingerprint=fingerprint, now=now)
            if verdict is Verdict.REPLAY:
                return Replay(
                    row["response_status"], row["response_headers"] or {}, row["response_body"]
                )
            if verdict in (Verdict.REUSED, Verdict.IN_FLIGHT):
                return verdict
            values = (
                fresh
                if verdict is Verdict.EXPIRED
                else {"claim_token": token, "locked_until": fresh["locked_until"]}
            )
            if await idempotency_repo.take_over(
                session, tenant_id=tenant_id, key=key, old_token=row["claim_token"], values=values
            ):
                resource = None if verdict is Verdict.EXPIRED else row["resource_id"]
                return Claim(tenant_id, key, token, resource)
    return Verdict.IN_FLIGHT


async def bind(session: AsyncSession, claim: Claim, resource_id: str) -> None:
    """Inside the transaction that creates the resource: the key now names it."""
    if not await idempotency_repo.update_claimed(
        session,
        tenant_id=claim.tenant_id,
        key=claim.key,
        token=claim.token,
        values={"resource_id": resource_id},
    ):
        raise ClaimLost(claim.key)


async def complete(
    rt: Runtime, claim: Claim, *, status: int, headers: Mapping[str, str], body: Any
) -> None:
    async with rt.sessions.begin() as session:
        await idempotency_repo.update_claimed(
            session,
            tenant_id=claim.tenant_id,
            key=claim.key,
            token=claim.token,
            values={
                "state": "done",
                "response_status": status,
                "response_headers": dict(headers),
                "response_body": body,
            },
        )


async def abandon(rt: Runtime, claim: Claim) -> None:
    """The request was refused before it changed anything: the key may be used again.
    A claim already bound to a resource is kept; its lock lapses for a retry to finish."""
    async with rt.sessions.begin() as session:
        await idempotency_repo.release(
            session, tenant_id=claim.tenant_id, key=claim.key, token=claim.token
        )


async def purge_expired(rt: Runtime) -> int:
    async with rt.sessions.begin() as session:
        return await idempotency_repo.purge_expired(session, now=rt.clock.now())
