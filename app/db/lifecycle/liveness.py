"""Which processes are alive, as the database sees them (SPEC §2, on replicas): each one
holds a session-level advisory lock of its own (`HOLD`, class `LIVENESS_LOCK`, keyed by a
random 32-bit `lock_key` of its start) on its listener's connection, and has a row in
`process` while it serves. The lock ends with that session, so a killed process, or one
whose connection the server dropped, is found dead at once: another process then gets the
lock itself (`dead`).

A process found dead is taken over (`take_over`): its row goes and the leases it held
lapse now, in one statement under its lock, and the claim poll takes those runs up as it
takes any run whose lease lapsed (a conditional write on each run, as ever). An
Idempotency-Key claim names its process's key in its token; a claim whose process is no
longer registered is abandoned, and a retry takes it over at once (`registered`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    delete,
    func,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.clock import DbTime
from app.db.guards import status_in
from app.db.lifecycle.leases import lease_end
from app.db.tables import metadata, run
from app.domain.lifecycle.moves import RUN_CLAIM

#: The class of the liveness locks (the other key is the process's `lock_key`). Two
#: processes whose keys are alike look alive while either is: the lease bounds the wait.
LIVENESS_LOCK = 1_953_066_358

process = Table(
    "process",
    metadata,
    Column("owner", String(200), nullable=False),
    Column("lock_key", Integer, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    PrimaryKeyConstraint("owner"),
)

#: On the listener's connection: waits while another process takes this one over (a
#: statement), never for long: two processes whose keys are alike wait for neither to end.
HOLD_WITHIN = "SET lock_timeout = '10s'"
HOLD = f"SELECT pg_advisory_lock({LIVENESS_LOCK}, $1::int)"
#: Answers the owner when it wrote the row, nothing when the row was there already.
REGISTER = (
    "INSERT INTO process (owner, lock_key) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING owner"
)


def _taken() -> Any:
    # A lock that can be taken is a holder gone; taken for the statement only (on an
    # autocommit session).
    return func.pg_try_advisory_xact_lock(LIVENESS_LOCK, process.c.lock_key)


async def dead(session: AsyncSession, *, me: str) -> list[str]:
    """The processes registered whose lock nobody holds."""
    rows = await session.execute(select(process.c.owner).where(process.c.owner != me, _taken()))
    return [r[0] for r in rows]


async def take_over(session: AsyncSession, *, owners: Sequence[str], db_time: DbTime) -> int:
    """Those of `owners` still dead lose their row, and the leases they held lapse now;
    how many leases. Their lock is held until the statement ends, so none of them can come
    back meanwhile (`HOLD` waits)."""
    gone = (
        delete(process)
        .where(process.c.owner.in_(owners), _taken())
        .returning(process.c.owner)
        .cte("gone")
    )
    lapse = (
        update(run)
        .where(
            status_in(run.c.status, RUN_CLAIM.guard),
            lease_end() >= db_time.now(),  # by ix_run_claimable
            run.c.lease_owner.in_(select(gone.c.owner)),
        )
        .values(lease_expires_at=db_time.now())
        .add_cte(gone)
    )
    result = await session.execute(lapse)
    return result.rowcount  # type: ignore[attr-defined,no-any-return]


async def registered(session: AsyncSession, lock_key: int) -> bool:
    """Whether a process of that key is registered (not taken over, nor stopped)."""
    found = await session.execute(select(process.c.owner).where(process.c.lock_key == lock_key))
    return found.first() is not None


async def leave(session: AsyncSession, *, me: str) -> None:
    """A process stopping cleanly (its leases handed back) says so."""
    await session.execute(delete(process).where(process.c.owner == me))
