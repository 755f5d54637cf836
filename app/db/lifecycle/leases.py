"""Leases on runs: claims (one run, or the runnable ones in one statement), their upkeep
per process, and their hand-back. Expiry is always compared with the database's clock."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, or_, select, text, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import String

from app.db.approvals import previews
from app.db.clock import DbTime
from app.db.guards import status_in
from app.db.lifecycle.runs import INSERT_EVENT, event_row, to_run
from app.db.tables import run
from app.domain.forensics.replay import SCRATCH_PREFIX
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.moves import RUN_CLAIM
from app.domain.lifecycle.records import Run
from app.domain.lifecycle.run_changes import Sweep

#: A claimed run, and the seconds it waited to be taken up (runnable → claimed).
Claimed = tuple[Run, float]


def lease_end() -> Any:
    """When a run's lease lapses, as `ix_run_claimable` indexes it (for runs of the claim's
    statuses): a run without a lease sorts as -infinity."""
    return func.coalesce(run.c.lease_expires_at, text("'-infinity'::timestamptz"))


def _claimable(db_time: DbTime) -> Any:
    # Served by ix_run_claimable. A replay's scratch runs are the replay's alone to step.
    return and_(
        status_in(run.c.status, RUN_CLAIM.guard),
        lease_end() < db_time.now(),
        ~run.c.tenant_id.startswith(SCRATCH_PREFIX, autoescape=True),
    )


def _lease_values(owner: str, lease_s: float, db_time: DbTime, now: datetime) -> dict[str, Any]:
    return {
        "lease_owner": owner,
        "lease_expires_at": db_time.after(lease_s),
        "status": RUN_CLAIM.target,
        "version": run.c.version + 1,
        "event_seq": run.c.event_seq + 1,
        "updated_at": now,
    }


async def _claimed_events(session: AsyncSession, claimed: Sequence[Run], now: datetime) -> None:
    # A claim is a transition like any other: the timeline shows who picks a run up when.
    rows = [
        event_row(
            r.tenant_id,
            r.id,
            r.event_seq,
            [(EventType.RUN_CLAIMED, {"after_step": r.usage.steps})],
            now,
        )
        for r in claimed
    ]
    if rows:
        await session.execute(INSERT_EVENT, rows)


def _runnable_since() -> Any:
    # When the run became claimable: its lease lapsed, else (handed back) its last change.
    return func.coalesce(run.c.lease_expires_at, run.c.updated_at).label("since")


def _claimed(rows: Any) -> list[Claimed]:
    return [(to_run(row), max(0.0, float(row["queued_s"]))) for row in rows.mappings()]


async def claim(
    session: AsyncSession,
    *,
    tenant_id: str,
    run_id: str,
    owner: str,
    token: str,
    lease_s: float,
    db_time: DbTime,
    now: datetime,
) -> Claimed | None:
    """Takes the lease of an active run nobody holds (or whose holder's lease expired);
    answers it with how long it waited to be taken up."""
    pick = (
        select(run.c.tenant_id, run.c.id, _runnable_since())
        .where(
            run.c.tenant_id == tenant_id,
            run.c.id == run_id,
            status_in(run.c.status, RUN_CLAIM.guard),
            or_(run.c.lease_token.is_(None), run.c.lease_expires_at < db_time.now()),
        )
        .with_for_update()
        .subquery("picked")
    )
    # The tenant again on the outer update: the planner does not carry it out of the locked
    # subquery, and a statement whose every scan names its tenant is one shard's on a
    # database distributed by tenant (docs/scaling.md).
    take = _take(pick, token, owner, lease_s, db_time, now).where(run.c.tenant_id == tenant_id)
    claimed = _claimed(await session.execute(take))
    await _claimed_events(session, [r for r, _ in claimed], now)
    return claimed[0] if claimed else None


def _take(pick: Any, token: Any, owner: str, lease_s: float, db_time: DbTime, now: datetime) -> Any:
    queued = func.extract("epoch", db_time.now() - pick.c.since)
    return (
        update(run)
        .where(run.c.tenant_id == pick.c.tenant_id, run.c.id == pick.c.id)
        .values(lease_token=token, **_lease_values(owner, lease_s, db_time, now))
        .returning(run, queued.label("queued_s"))
    )


def _claim_token(claim_id: Any) -> Any:
    """A claimed run's lease token: derived from the claim's id and the run's, so that a
    claim whose answer was lost can hand back exactly the leases it took
    (`release_claim`)."""
    return func.encode(func.sha256(func.convert_to(claim_id + run.c.id, "UTF8")), "hex")


async def claim_runnable(
    session: AsyncSession,
    *,
    owner: str,
    claim_id: str,
    limit: int,
    lease_s: float,
    db_time: DbTime,
    sweep: Sweep,
) -> list[Claimed]:
    """Claims up to `limit` runs nobody advances (no lease, or an expired one), oldest
    lease first, in one statement; rows other drivers are claiming are skipped. Each comes
    with how long it waited to be taken up. The same statement makes the parked runs that
    are due runnable (`sweep`), for the next poll to claim. `claim_id` (unique to this
    claim) names the leases it takes."""
    now = sweep.at
    pick = (
        select(run.c.tenant_id, run.c.id, _runnable_since())
        .where(_claimable(db_time))
        .order_by(lease_end())
        .limit(limit)
        .with_for_update(skip_locked=True)
        .subquery("picked")
    )
    token = _claim_token(bindparam("claim_id", claim_id, type_=String()))
    # Parked runs that are due come along in the same statement (for the next poll).
    statement = _take(pick, token, owner, lease_s, db_time, now).add_cte(previews.sweep(sweep))
    claimed = _claimed(await session.execute(statement))
    await _claimed_events(session, [r for r, _ in claimed], now)
    return claimed


async def renew_all(
    session: AsyncSession,
    *,
    held: Sequence[tuple[str, str, str]],
    lease_s: float,
    db_time: DbTime,
) -> dict[tuple[str, str], bool]:
    """Extends every lease in `held` (tenant, run, token) in one statement. Answers the
    runs still held, each with whether a cancel was requested; a run missing from the
    answer was lost. Leaves version alone: not a state change."""
    if not held:
        return {}
    # Arrays, not a VALUES list: one statement text whatever the number of leases.
    holding = (
        func.unnest(
            bindparam("tenants", [h[0] for h in held], type_=ARRAY(String())),
            bindparam("ids", [h[1] for h in held], type_=ARRAY(String())),
            bindparam("tokens", [h[2] for h in held], type_=ARRAY(String())),
        )
        .table_valued("tenant_id", "id", "token")
        .render_derived(name="held")
    )
    result = await session.execute(
        update(run)
        .where(
            run.c.tenant_id == holding.c.tenant_id,
            run.c.id == holding.c.id,
            run.c.lease_token == holding.c.token,
        )
        .values(lease_expires_at=db_time.after(lease_s))
        .returning(run.c.tenant_id, run.c.id, run.c.cancel_requested_at.is_not(None))
    )
    return {(r[0], r[1]): bool(r[2]) for r in result}


async def release_claim(session: AsyncSession, *, owner: str, claim_id: str) -> int:
    """Hands back every lease the claim `claim_id` took that it still holds (the claim's
    answer was lost: nobody here advances those runs); how many."""
    result = await session.execute(
        update(run)
        .where(
            run.c.lease_owner == owner,
            status_in(run.c.status, RUN_CLAIM.guard),
            run.c.lease_token == _claim_token(bindparam("claim_id", claim_id, type_=String())),
        )
        .values(lease_owner=None, lease_token=None, lease_expires_at=None)
    )
    return result.rowcount  # type: ignore[attr-defined,no-any-return]


async def release(session: AsyncSession, *, tenant_id: str, run_id: str, token: str) -> None:
    await session.execute(
        update(run)
        .where(run.c.tenant_id == tenant_id, run.c.id == run_id, run.c.lease_token == token)
        .values(lease_owner=None, lease_token=None, lease_expires_at=None)
    )
