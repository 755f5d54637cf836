"""API keys: created by the CLI, shown once, stored as a SHA-256 hash."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import keys_repo
from app.db.session import retrying
from app.domain.ids import new_id
from app.domain.ports import Clock
from app.domain.tools import Principal

ROLES = frozenset({"caller", "approver", "admin"})
KEY_PREFIX = "tg_"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


async def create_key(
    sessions: async_sessionmaker[AsyncSession],
    clock: Clock,
    *,
    tenant_id: str,
    subject: str,
    roles: Sequence[str],
    scopes: Sequence[str] | None,
) -> tuple[str, str]:
    """Returns (key id, key). The key itself is never stored."""
    unknown = set(roles) - ROLES
    if unknown or not roles:
        raise ValueError(f"roles must be among {sorted(ROLES)}")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    key_id = new_id("key")
    async with sessions.begin() as session:
        await keys_repo.insert_key(
            session,
            keys_repo.NewKey(
                tenant_id=tenant_id,
                id=key_id,
                key_hash=hash_key(key),
                subject=subject,
                roles=sorted(set(roles)),
                scopes=sorted(set(scopes)) if scopes is not None else None,
                created_at=clock.now(),
            ),
        )
    return key_id, key


async def authenticate(sessions: async_sessionmaker[AsyncSession], key: str) -> Principal | None:
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None

    # The first database touch of every request: a connection found dropped here is
    # replaced and the lookup made again, instead of answering 503.
    owner = await retrying(sessions, keys_repo.get_by_hash, hash_key(key))
    if owner is None:
        return None
    return Principal(
        tenant_id=owner.tenant_id,
        subject=owner.subject,
        roles=frozenset(owner.roles),
        scopes=None if owner.scopes is None else frozenset(owner.scopes),
    )
