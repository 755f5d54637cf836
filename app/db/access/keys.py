"""API keys, stored only as hashes: a key as written, as it authenticates, as an admin
lists it, and its revocation (a conditional write: the first revocation is the one kept)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

from app.db.clock import DbTime
from app.db.session import alone
from app.db.tables import api_key

#: Announces a key's revocation (`tenant key_id`) to every process, which may keep its
#: principal for a few seconds (`engine.access.known_keys`).
REVOKED_CHANNEL = "toolgate_key_revoked"


@dataclass(frozen=True)
class NewKey:
    tenant_id: str
    id: str
    key_hash: str
    subject: str
    roles: list[str]
    scopes: list[str] | None
    created_at: datetime
    name: str
    prefix: str
    created_by: str | None = None


@dataclass(frozen=True)
class KeyOwner:
    """Whom a key that is not revoked stands for."""

    tenant_id: str
    key_id: str
    subject: str
    roles: list[str]
    scopes: list[str] | None


@dataclass(frozen=True)
class KeyRecord:
    """A key as an admin sees it: everything but its hash."""

    id: str
    name: str
    prefix: str | None
    subject: str
    roles: list[str]
    scopes: list[str] | None
    created_at: datetime
    created_by: str | None
    last_used_at: datetime | None
    revoked_at: datetime | None


_RECORD_COLUMNS = [api_key.c[f.name] for f in fields(KeyRecord)]


async def insert_key(session: AsyncSession, key: NewKey) -> KeyRecord:
    result = await session.execute(
        insert(api_key).values(**asdict(key)).returning(*_RECORD_COLUMNS)
    )
    return KeyRecord(**result.mappings().one())


def _stale() -> Any:
    """A key last used before `:touch` (now + an interval, on the database's clock)."""
    return or_(
        api_key.c.last_used_at.is_(None), api_key.c.last_used_at < DbTime.after_param("touch")
    )


#: The lookup every request sends, as plain SQL sent as it is (SQLAlchemy would otherwise
#: build a cache key of a statement each time): the owner, and whether its last use is
#: older than `$2` (an interval, negative, from now on the database's clock).
_BY_HASH = (
    "SELECT tenant_id, id, subject, roles, scopes, "
    "(last_used_at IS NULL OR last_used_at < now() + $2::interval) AS stale "
    "FROM api_key WHERE key_hash = $1 AND revoked_at IS NULL"
)


async def get_by_hash(
    session: AsyncSession | AsyncConnection | AsyncEngine,
    key_hash: str,
    *,
    db_time: DbTime,
    touch_every_s: float,
) -> KeyOwner | None:
    """The key's owner. Its `last_used_at` is written only when it is older than
    `touch_every_s` (on the database's clock), so a busy key costs a write once a
    minute, not once a request; a row another request is touching is skipped, never
    waited for. The lookup, sent by every request, stands alone on an engine (`alone`)."""
    touch_before = db_time.interval(-touch_every_s)
    rows = await alone(session, _BY_HASH, (key_hash, touch_before))
    if not rows:
        return None
    tenant_id, key_id, subject, roles, scopes, is_stale = rows[0]
    if is_stale:
        ours = and_(api_key.c.tenant_id == tenant_id, api_key.c.id == key_id)
        unlocked = select(api_key.c.id).where(ours, _stale()).with_for_update(skip_locked=True)
        touch = (
            update(api_key)
            .where(ours, api_key.c.id.in_(unlocked.scalar_subquery()))
            .values(last_used_at=db_time.now())
        )
        if isinstance(session, AsyncEngine):  # once a minute a key: SQLAlchemy's way
            async with session.connect() as connection:
                await connection.execute(touch, {"touch": touch_before})
        else:
            await session.execute(touch, {"touch": touch_before})
    return KeyOwner(tenant_id, key_id, subject, list(roles), scopes)


async def get_record(session: AsyncSession, tenant_id: str, key_id: str) -> KeyRecord | None:
    result = await session.execute(
        select(*_RECORD_COLUMNS).where(api_key.c.tenant_id == tenant_id, api_key.c.id == key_id)
    )
    row = result.mappings().one_or_none()
    return None if row is None else KeyRecord(**row)


async def list_page(
    session: AsyncSession,
    *,
    tenant_id: str,
    revoked: bool,
    after: tuple[datetime, str] | None,
    limit: int,
) -> list[KeyRecord]:
    """Newest first. `revoked`: revoked keys too, else only the keys that still open."""
    query = select(*_RECORD_COLUMNS).where(api_key.c.tenant_id == tenant_id)
    if not revoked:
        query = query.where(api_key.c.revoked_at.is_(None))
    if after:
        query = query.where(tuple_(api_key.c.created_at, api_key.c.id) < tuple_(*after))
    query = query.order_by(api_key.c.created_at.desc(), api_key.c.id.desc()).limit(limit)
    return [KeyRecord(**row) for row in (await session.execute(query)).mappings()]


async def revoke(
    session: AsyncSession, *, tenant_id: str, key_id: str, by: str, now: datetime
) -> bool | None:
    """True: revoked now; False: it was revoked already (kept as it was); None: the tenant
    has no such key."""
    ours = and_(api_key.c.tenant_id == tenant_id, api_key.c.id == key_id)
    result = await session.execute(
        update(api_key)
        .where(ours, api_key.c.revoked_at.is_(None))
        .values(revoked_at=now, revoked_by=by)
        .returning(api_key.c.id)
    )
    if result.first() is not None:
        # Delivered when the revocation commits: every process forgets the key's principal.
        await session.execute(select(func.pg_notify(REVOKED_CHANNEL, f"{tenant_id} {key_id}")))
        return True
    found = await session.execute(select(api_key.c.id).where(ours))
    return False if found.first() is not None else None
