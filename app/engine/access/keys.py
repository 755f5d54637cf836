"""API keys: made by the CLI (the first admin key) or by an admin over HTTP, shown once,
stored as a SHA-256 hash with a short non-secret prefix to tell them apart.

A request looks its key up by hash, or finds its principal among those this process
looked up in the last few seconds (`known_keys`: kept only while revocations reach the
process, forgotten when one does). A revocation is announced in its own transaction, so
it holds at once in the revoking process and, as soon as the announcement arrives, in
every other."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.db.access import idempotency as idempotency_repo
from app.db.access import keys
from app.db.clock import DbTime
from app.db.session import retrying, retrying_alone
from app.domain.audit.chain import Action
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.ids import new_id
from app.domain.ports import Clock
from app.domain.tools.specs import Principal, Role
from app.engine.access import idempotency
from app.engine.access.idempotency import Claim
from app.engine.access.known_keys import KnownKeys
from app.engine.audit import trail
from app.engine.lifecycle.runs import created_position, page_of

if TYPE_CHECKING:
    from app.engine.runner import Runtime

ROLES = frozenset(Role)
KEY_PREFIX = "tg_"
#: What a list shows of a key: `tg_` and 8 characters (48 of its 256 random bits).
SHOWN_LENGTH = len(KEY_PREFIX) + 8
#: The longest a key's `last_used_at` lags its last use: written at most this often.
TOUCH_EVERY_S = 60.0


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class KeySpec:
    """What a new key holds. `scopes` None: every scope, also of tools added later."""

    name: str
    subject: str
    roles: tuple[str, ...]
    scopes: tuple[str, ...] | None


def _new_key(
    tenant_id: str, spec: KeySpec, *, created_by: str | None, clock: Clock
) -> tuple[keys.NewKey, str]:
    unknown = set(spec.roles) - ROLES
    if unknown or not spec.roles:
        raise ValueError(f"roles must be among {sorted(ROLES)}")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = keys.NewKey(
        tenant_id=tenant_id,
        id=new_id("key"),
        key_hash=hash_key(key),
        subject=spec.subject,
        roles=sorted(set(spec.roles)),
        scopes=sorted(set(spec.scopes)) if spec.scopes is not None else None,
        created_at=clock.now(),
        name=spec.name,
        prefix=key[:SHOWN_LENGTH],
        created_by=created_by,
    )
    return row, key


async def create_key(
    sessions: async_sessionmaker[AsyncSession],
    clock: Clock,
    *,
    tenant_id: str,
    subject: str,
    roles: Sequence[str],
    scopes: Sequence[str] | None,
    name: str | None = None,
) -> tuple[str, str]:
    """A key made from the shell (no admin key needed). Returns (key id, key); the key
    itself is never stored."""
    spec = KeySpec(name or subject[:100], subject, tuple(roles), _tuple(scopes))
    row, key = _new_key(tenant_id, spec, created_by=None, clock=clock)
    async with sessions.begin() as session:
        await keys.insert_key(session, row)
        await _created(session, row, trail.COMMAND_LINE)
    return row.id, key


async def _created(session: AsyncSession, row: keys.NewKey, actor: str) -> None:
    """The key's creation on its tenant's audit chain (never the key itself)."""
    await trail.record(
        session,
        row.tenant_id,
        actor,
        Action.CREATE_KEY,
        row.id,
        row.created_at,
        subject=row.subject,
        roles=list(row.roles),
        scopes=None if row.scopes is None else list(row.scopes),
        name=row.name,
    )


def _tuple(scopes: Sequence[str] | None) -> tuple[str, ...] | None:
    return None if scopes is None else tuple(scopes)


def declared_scopes(rt: Runtime) -> frozenset[str]:
    """Every scope a registered tool asks for: the only scopes a key may be given."""
    return frozenset(p for tool in rt.tools.values() for p in tool.spec.permissions)


def _refusals(rt: Runtime, principal: Principal, scopes: tuple[str, ...]) -> list[FieldError]:
    """Why the scopes cannot be given: a scope no tool declares, or one the calling key
    does not hold itself (an admin key narrowed to some scopes cannot widen another)."""
    known = declared_scopes(rt)
    errors = []
    for i, scope in enumerate(scopes):
        if scope not in known:
            errors.append(FieldError(f"scopes.{i}", "no registered tool declares this scope"))
        elif not principal.covers([scope]):
            errors.append(FieldError(f"scopes.{i}", "the calling key does not hold this scope"))
    return errors


async def issue_key(
    rt: Runtime, *, principal: Principal, spec: KeySpec, claim: Claim | None
) -> tuple[keys.KeyRecord, str]:
    """A key of the admin's tenant, bound to the request's Idempotency-Key claim in the
    same transaction. Returns the key as listed and the key itself (to show once)."""
    errors = _refusals(rt, principal, spec.scopes or ())
    if spec.scopes is None and principal.scopes is not None:
        errors.append(FieldError("scopes", "the calling key does not hold every scope"))
    if errors:
        raise DomainError(ErrorCode.VALIDATION, "some fields are invalid", errors)
    row, key = _new_key(principal.tenant_id, spec, created_by=principal.subject, clock=rt.clock)
    async with rt.sessions.begin() as session:
        if claim is not None:
            binding = idempotency.binding(rt, claim)
            if not await idempotency_repo.bind(session, binding, row.id, db_time=rt.db_time):
                raise idempotency.binding_failed(claim)
        record = await keys.insert_key(session, row)
        await _created(session, row, principal.subject)
    return record, key


def _not_found() -> DomainError:
    return DomainError(ErrorCode.NOT_FOUND, "no such key")


async def get_key(rt: Runtime, *, principal: Principal, key_id: str) -> keys.KeyRecord:
    async with rt.reads() as session:
        record = await keys.get_record(session, principal.tenant_id, key_id)
    if record is None:
        raise _not_found()
    return record


def _position(record: keys.KeyRecord) -> list[str]:
    return [record.created_at.isoformat(), record.id]


async def list_keys(
    rt: Runtime, *, principal: Principal, revoked: bool, limit: int, cursor: str | None
) -> tuple[list[keys.KeyRecord], str | None]:
    after = created_position(cursor) if cursor else None
    async with rt.reads() as session:
        rows = await keys.list_page(
            session, tenant_id=principal.tenant_id, revoked=revoked, after=after, limit=limit + 1
        )
    return page_of(rows, limit, _position)


async def revoke_key(rt: Runtime, *, principal: Principal, key_id: str) -> None:
    """Revokes a key of the admin's tenant (the calling key too). A key revoked already
    stays as it was: revoking is idempotent."""
    now = rt.clock.now()
    async with rt.sessions.begin() as session:
        revoked = await keys.revoke(
            session, tenant_id=principal.tenant_id, key_id=key_id, by=principal.subject, now=now
        )
        if revoked:  # revoked now (not before: that changed nothing)
            await trail.record(
                session, principal.tenant_id, principal.subject, Action.REVOKE_KEY, key_id, now
            )
    if revoked is None:
        raise _not_found()
    # Its notification reaches this process too, but the answer must not come first.
    rt.known_keys.forget(principal.tenant_id, key_id)


async def authenticate(
    sessions: async_sessionmaker[AsyncSession] | AsyncEngine,
    key: str,
    db_time: DbTime | None = None,
    known: KnownKeys | None = None,
) -> Principal | None:
    """The key's principal, or None. `sessions`: the service's AUTOCOMMIT engine (each
    statement on its own, the request path), or sessions (a CLI's). `known`: principals
    looked up lately, used and kept when given."""
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    key_hash = hash_key(key)
    if known is not None:
        principal = known.get(key_hash)
        if principal is not None:
            return principal
        ticket = known.ticket()

    # The first database touch of every request: a connection found dropped here is
    # replaced and the lookup made again, instead of answering 503.
    lookup = retrying_alone if isinstance(sessions, AsyncEngine) else retrying
    owner = await lookup(
        sessions,  # type: ignore[arg-type]
        keys.get_by_hash,
        key_hash,
        db_time=db_time or DbTime(),
        touch_every_s=TOUCH_EVERY_S,
    )
    if owner is None:
        return None
    principal = Principal(
        tenant_id=owner.tenant_id,
        subject=owner.subject,
        roles=frozenset(owner.roles),
        scopes=None if owner.scopes is None else frozenset(owner.scopes),
    )
    if known is not None:
        known.keep(key_hash, owner.tenant_id, owner.key_id, principal, ticket)
    return principal
