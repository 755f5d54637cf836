"""The console's sign-ins and sessions: a login is taken once (deleted as it is read), a
session is found by its cookie's hash while it has not expired, and ends when deleted.
Expired rows go as new ones are made."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.access.session_tables import console_login, console_session

#: Expired rows removed by each new sign-in, at most: the sweep stays one short statement.
SWEEP = 100


@dataclass(frozen=True)
class Login:
    state_hash: str
    verifier: str
    nonce: str
    browser_hash: str
    next_path: str
    expires_at: datetime


@dataclass(frozen=True)
class Session:
    id_hash: str
    tenant_id: str
    subject: str
    roles: list[str]
    scopes: list[str] | None
    name: str | None
    csrf_token: str
    created_at: datetime
    expires_at: datetime


async def begin_login(session: AsyncSession, login: Login, now: datetime) -> None:
    for table in (console_login, console_session):
        stale = select(table.c[0]).where(table.c.expires_at <= now).limit(SWEEP)
        await session.execute(delete(table).where(table.c[0].in_(stale)))
    await session.execute(insert(console_login).values(**asdict(login)))


async def take_login(session: AsyncSession, state_hash: str, now: datetime) -> Login | None:
    """The login of this `state`, if it has not expired; gone either way (used once)."""
    result = await session.execute(
        delete(console_login)
        .where(console_login.c.state_hash == state_hash)
        .returning(*console_login.c)
    )
    row = result.mappings().one_or_none()
    if row is None or row["expires_at"] <= now:
        return None
    return Login(**row)


async def start_session(session: AsyncSession, made: Session) -> None:
    await session.execute(insert(console_session).values(**asdict(made)))


async def find(session: AsyncSession, id_hash: str, now: datetime) -> Session | None:
    result = await session.execute(
        select(console_session).where(
            console_session.c.id_hash == id_hash, console_session.c.expires_at > now
        )
    )
    row = result.mappings().one_or_none()
    return None if row is None else Session(**row)


async def end(session: AsyncSession, id_hash: str) -> bool:
    result = await session.execute(
        delete(console_session).where(console_session.c.id_hash == id_hash)
    )
    return bool(result.rowcount)
