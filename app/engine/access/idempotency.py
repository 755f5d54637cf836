"""Idempotency-Key use cases: claim a key, bind it to what the request created (in the
creating transaction), store the answer, or forget a claim whose request changed nothing.
Locks and retention are measured on the database's clock.

A request that creates something may take a *deferred* claim: nothing is written until
the creating transaction, which inserts the key already bound to what it creates. Two
requests racing with one key meet at the key's unique index there; the loser's
transaction rolls back (`KeyTaken`) and it goes the ordinary way (replay, refusal).

A claim's token names the process that holds it (`p` and its liveness key, while it is
registered): a claim in flight whose process is no longer registered (taken over as dead,
`engine.process.liveness`) is abandoned, and a retry takes it over at once rather than
after `TOOLGATE_IDEMPOTENCY_LOCK_S`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.db.access import idempotency as idempotency_repo
from app.db.lifecycle import liveness as liveness_repo
from app.db.lifecycle.step_writes import Answer
from app.domain.access.idempotency import StoredKey, Verdict, judge
from app.domain.errors import ToolgateError

if TYPE_CHECKING:
    from app.engine.runner import Runtime


class ClaimLost(ToolgateError):
    """Another request took the key over (this one outlived its lock); nothing was made."""


class KeyTaken(ToolgateError):
    """A deferred claim met a record of the key: the creating transaction rolled back."""


@dataclass(frozen=True)
class Claim:
    """This request holds the key. `resource_id` is set when an earlier holder (which then
    crashed) had already created the resource: the request must not create it again.
    `deferred`: not written yet; the creating transaction inserts it."""

    tenant_id: str
    key: str
    token: str
    resource_id: str | None = None
    fingerprint: str | None = None
    deferred: bool = False


@dataclass(frozen=True)
class Replay:
    status: int
    headers: Mapping[str, str]
    body: Any


def _token(rt: Runtime) -> str:
    if rt.live:
        return f"p{rt.owner_tag}{secrets.token_hex(12)}"
    return secrets.token_hex(16)  # a holder that is not registered cannot be found dead


def _holder_key(token: str) -> int | None:
    """The liveness key of the process a claim's token names, if it names one."""
    if len(token) < 9 or token[0] != "p":
        return None
    return int.from_bytes(bytes.fromhex(token[1:9]), "big", signed=True)


async def _abandoned(session: Any, token: str) -> bool:
    holder = _holder_key(token)
    return holder is not None and not await liveness_repo.registered(session, holder)


def defer(rt: Runtime, *, tenant_id: str, key: str, fingerprint: str) -> Claim:
    return Claim(tenant_id, key, _token(rt), None, fingerprint, deferred=True)


def _fresh(rt: Runtime, claim: Claim) -> idempotency_repo.NewClaim:
    settings = rt.settings
    return idempotency_repo.NewClaim(
        tenant_id=claim.tenant_id,
        key=claim.key,
        fingerprint=claim.fingerprint,
        claim_token=claim.token,
        locked_until=rt.db_time.after(settings.idempotency_lock_s),
        created_at=rt.clock.now(),
        expires_at=rt.db_time.after(rt.idempotency_ttl_s),
    )


def _judged(record: idempotency_repo.KeyRecord, fingerprint: str) -> Replay | Verdict:
    stored = StoredKey(record.fingerprint, record.done, record.locked_until, record.expires_at)
    verdict = judge(stored, fingerprint=fingerprint, now=record.db_now)
    if verdict is Verdict.REPLAY:
        return Replay(
            record.response_status or 0, record.response_headers or {}, record.response_body
        )
    return verdict


async def look(
    rt: Runtime, *, tenant_id: str, key: str, fingerprint: str
) -> Replay | Verdict | None:
    """What an existing record of the key means for this request, without claiming:
    a replay, `REUSED` or `IN_FLIGHT`; None when there is no record to answer from."""
    async with rt.reads() as session:
        record = await idempotency_repo.get(session, tenant_id, key, db_time=rt.db_time)
    if record is None:
        return None
    judged = _judged(record, fingerprint)
    if isinstance(judged, Replay) or judged in (Verdict.REUSED, Verdict.IN_FLIGHT):
        return judged
    return None


async def begin(
    rt: Runtime, *, tenant_id: str, key: str, fingerprint: str
) -> Claim | Replay | Verdict:
    for _ in range(3):
        claim = Claim(tenant_id, key, _token(rt), None, fingerprint)
        fresh = _fresh(rt, claim)
        async with rt.sessions.begin() as session:
            if await idempotency_repo.try_claim(session, fresh):
                return claim
            record = await idempotency_repo.get(session, tenant_id, key, db_time=rt.db_time)
            if record is None:
                continue  # purged between our insert and our read: try again
            judged = _judged(record, fingerprint)
            if judged is Verdict.IN_FLIGHT and await _abandoned(session, record.claim_token):
                judged = Verdict.PROCEED  # its process was found dead: as if its lock lapsed
            if isinstance(judged, Replay) or judged in (Verdict.REUSED, Verdict.IN_FLIGHT):
                return judged
            expired = judged is Verdict.EXPIRED
            if await idempotency_repo.take_over(
                session,
                tenant_id=tenant_id,
                key=key,
                old_token=record.claim_token,
                claim=fresh,
                fresh=expired,
            ):
                resource = None if expired else record.resource_id
                return Claim(tenant_id, key, claim.token, resource, fingerprint)
    return Verdict.IN_FLIGHT


def binding(rt: Runtime, claim: Claim) -> idempotency_repo.Binding:
    """How the creating statement binds the key: a deferred claim is inserted there,
    already bound; a held one is bound on its token."""
    settings = rt.settings
    return idempotency_repo.Binding(
        "insert" if claim.deferred else "bind",
        claim.tenant_id,
        claim.key,
        claim.token,
        claim.fingerprint,
        settings.idempotency_lock_s,
        rt.idempotency_ttl_s,
        rt.clock.now(),
    )


def binding_failed(claim: Claim) -> Exception:
    """Why a creating statement whose binding did not take hold made nothing."""
    return KeyTaken(claim.key) if claim.deferred else ClaimLost(claim.key)


async def complete(
    rt: Runtime, claim: Claim, *, status: int, headers: Mapping[str, str], body: str
) -> None:
    """Keeps the answer (`body`: JSON text) for retries under the key; one statement,
    sent with other writes of this process (`engine.process.commit_batcher`)."""
    await rt.commits.answer(
        Answer(claim.tenant_id, claim.key, claim.token, status, dict(headers), body)
    )


async def abandon(rt: Runtime, claim: Claim) -> None:
    """The request was refused before it changed anything: the key may be used again.
    A claim already bound to a resource is kept; its lock lapses for a retry to finish."""
    if claim.deferred:
        return  # nothing was written (or the creating transaction bound it: kept)
    async with rt.sessions.begin() as session:
        await idempotency_repo.release(
            session, tenant_id=claim.tenant_id, key=claim.key, token=claim.token
        )


async def purge_expired(rt: Runtime) -> int:
    async with rt.sessions.begin() as session:
        return await idempotency_repo.purge_expired(session, db_time=rt.db_time)
