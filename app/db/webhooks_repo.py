"""Webhook endpoints and their deliveries (the outbox the trigger on `event` fills): rows ⇄
typed values, the senders' claim of due deliveries, and the claim-conditional outcome."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, or_, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.clock import DbTime
from app.db.webhook_tables import webhook_delivery, webhook_endpoint
from app.domain.records import FeedEvent


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    #: Not sent: its endpoint was disabled, its event is gone, or an earlier event of its
    #: run failed for good.
    ABANDONED = "abandoned"


@dataclass(frozen=True)
class NewEndpoint:
    tenant_id: str
    id: str
    url: str
    events: list[str]
    secret: str
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class Endpoint:
    """An endpoint as shown: never its secrets."""

    tenant_id: str
    id: str
    url: str
    events: list[str]
    created_at: datetime
    created_by: str
    disabled_at: datetime | None
    disabled_reason: str | None
    previous_secret_expires_at: datetime | None


@dataclass(frozen=True)
class Attempt:
    at: str  # ISO 8601, as the database's clock had it
    status_code: int | None
    latency_ms: int | None
    error: str | None


@dataclass(frozen=True)
class Delivery:
    id: str
    endpoint_id: str
    run_id: str
    seq: int
    type: str
    status: DeliveryStatus
    attempts: list[Attempt]
    next_attempt_at: datetime | None
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class Claimed:
    """A delivery a sender holds until `token` is recorded or its lease lapses, with what
    it sends: the endpoint's URL and valid secrets (newest first), and the event (None
    when the event is gone)."""

    tenant_id: str
    id: str
    token: str
    attempts: int
    endpoint_id: str
    run_id: str
    seq: int
    url: str
    secrets: list[str]
    endpoint_disabled: bool
    event: FeedEvent | None


@dataclass(frozen=True)
class Outcome:
    """What one attempt settled: the delivery's new status, the wait before its next
    attempt when still pending, and whether its endpoint is disabled (`410`)."""

    status: DeliveryStatus
    attempt: Attempt
    retry_in_s: float | None = None
    disable_reason: str | None = None


_SHOWN = [c for c in webhook_endpoint.c if c.name not in ("secret", "previous_secret")]


def _endpoint(row: RowMapping) -> Endpoint:
    return Endpoint(**{c.name: row[c.name] for c in _SHOWN})


async def insert_endpoint(session: AsyncSession, endpoint: NewEndpoint) -> Endpoint:
    row = await session.execute(
        insert(webhook_endpoint).values(**asdict(endpoint)).returning(*_SHOWN)
    )
    return _endpoint(row.mappings().one())


async def get_endpoint(session: AsyncSession, tenant_id: str, endpoint_id: str) -> Endpoint | None:
    row = await session.execute(
        select(*_SHOWN).where(
            webhook_endpoint.c.tenant_id == tenant_id, webhook_endpoint.c.id == endpoint_id
        )
    )
    found = row.mappings().one_or_none()
    return None if found is None else _endpoint(found)


async def list_endpoints(
    session: AsyncSession, tenant_id: str, *, limit: int, after: tuple[datetime, str] | None
) -> list[Endpoint]:
    """Oldest first, after the (created_at, id) of the previous page."""
    query = select(*_SHOWN).where(webhook_endpoint.c.tenant_id == tenant_id)
    if after is not None:
        query = query.where(tuple_(webhook_endpoint.c.created_at, webhook_endpoint.c.id) > after)
    query = query.order_by(webhook_endpoint.c.created_at, webhook_endpoint.c.id).limit(limit)
    return [_endpoint(r) for r in (await session.execute(query)).mappings()]


async def delete_endpoint(session: AsyncSession, tenant_id: str, endpoint_id: str) -> bool:
    """Removes it and (by cascade) its deliveries; a sender holding one records nothing."""
    result = await session.execute(
        delete(webhook_endpoint)
        .where(webhook_endpoint.c.tenant_id == tenant_id, webhook_endpoint.c.id == endpoint_id)
        .returning(webhook_endpoint.c.id)
    )
    return result.first() is not None


async def rotate(
    session: AsyncSession,
    tenant_id: str,
    endpoint_id: str,
    *,
    secret: str,
    grace_s: float,
    db_time: DbTime,
) -> Endpoint | None:
    """The new secret signs from now on; the current one also signs for `grace_s` more.
    None when the endpoint is absent, or when an earlier rotation's grace is still running:
    rotating again then would drop a secret receivers may still hold before its time."""
    grace = webhook_endpoint.c.previous_secret_expires_at
    result = await session.execute(
        update(webhook_endpoint)
        .where(
            webhook_endpoint.c.tenant_id == tenant_id,
            webhook_endpoint.c.id == endpoint_id,
            or_(grace.is_(None), grace <= db_time.now()),
        )
        .values(
            previous_secret=webhook_endpoint.c.secret,
            secret=secret,
            previous_secret_expires_at=db_time.after(grace_s),
        )
        .returning(*_SHOWN)
    )
    found = result.mappings().one_or_none()
    return None if found is None else _endpoint(found)


def _attempts(log: Sequence[dict[str, Any]]) -> list[Attempt]:
    return [
        Attempt(a["at"], a.get("status_code"), a.get("latency_ms"), a.get("error")) for a in log
    ]


async def deliveries_page(
    session: AsyncSession,
    tenant_id: str,
    endpoint_id: str,
    *,
    limit: int,
    before: tuple[datetime, str] | None,
) -> list[Delivery]:
    """Newest first, before the (created_at, id) of the previous page."""
    d = webhook_delivery.c
    query = select(webhook_delivery).where(d.tenant_id == tenant_id, d.endpoint_id == endpoint_id)
    if before is not None:
        query = query.where(tuple_(d.created_at, d.id) < before)
    query = query.order_by(d.created_at.desc(), d.id.desc()).limit(limit)
    return [
        Delivery(
            id=r["id"],
            endpoint_id=r["endpoint_id"],
            run_id=r["run_id"],
            seq=r["seq"],
            type=r["type"],
            status=DeliveryStatus(r["status"]),
            attempts=_attempts(r["attempts_log"]),
            next_attempt_at=r["next_attempt_at"] if r["status"] == DeliveryStatus.PENDING else None,
            created_at=r["created_at"],
            finished_at=r["finished_at"],
        )
        for r in (await session.execute(query)).mappings()
    ]


# Due deliveries, the earliest pending one of each (endpoint, run) only, so that a run's
# events reach an endpoint in seq order whatever the retries. SKIP LOCKED: two senders
# never take the same row; the lease (next_attempt_at pushed past the attempt's timeout)
# keeps it from being taken again until the holder records its outcome or dies.
_CLAIM = text("""
WITH due AS (
    SELECT d.tenant_id, d.id, d.endpoint_id, d.run_id, d.seq
    FROM webhook_delivery d
    WHERE d.status = 'pending' AND d.next_attempt_at <= now() + :now_offset
      AND NOT EXISTS (
          SELECT 1 FROM webhook_delivery e
          WHERE e.tenant_id = d.tenant_id AND e.endpoint_id = d.endpoint_id
            AND e.run_id = d.run_id AND e.status = 'pending' AND e.seq < d.seq)
    ORDER BY d.next_attempt_at
    LIMIT :limit
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_delivery d
SET next_attempt_at = now() + :lease, claim_token = :token, attempts = d.attempts + 1
FROM due
JOIN webhook_endpoint w ON w.tenant_id = due.tenant_id AND w.id = due.endpoint_id
LEFT JOIN event ev
  ON ev.tenant_id = due.tenant_id AND ev.run_id = due.run_id AND ev.seq = due.seq
WHERE d.tenant_id = due.tenant_id AND d.id = due.id
RETURNING d.tenant_id, d.id, d.attempts, d.endpoint_id, d.run_id AS of_run, d.seq AS at_seq,
    w.url, w.secret,
    CASE WHEN w.previous_secret_expires_at > now() + :now_offset
         THEN w.previous_secret END AS previous_secret,
    w.disabled_at IS NOT NULL AS endpoint_disabled,
    ev.run_id, ev.seq, ev.type, ev.at, ev.data, ev.xid
""")


async def claim_due(
    session: AsyncSession, *, limit: int, lease_s: float, token: str, db_time: DbTime
) -> list[Claimed]:
    rows = await session.execute(
        _CLAIM,
        {
            "now_offset": db_time.interval(0),
            "lease": db_time.interval(lease_s),
            "limit": limit,
            "token": token,
        },
    )
    return [
        Claimed(
            tenant_id=r["tenant_id"],
            id=r["id"],
            token=token,
            attempts=r["attempts"],
            endpoint_id=r["endpoint_id"],
            run_id=r["of_run"],
            seq=r["at_seq"],
            url=r["url"],
            secrets=[s for s in (r["secret"], r["previous_secret"]) if s],
            endpoint_disabled=r["endpoint_disabled"],
            event=None
            if r["run_id"] is None
            else FeedEvent(r["xid"], r["run_id"], r["seq"], r["type"], r["at"], r["data"]),
        )
        for r in rows.mappings()
    ]


async def record(
    session: AsyncSession, claimed: Claimed, outcome: Outcome, db_time: DbTime
) -> bool:
    """Writes the outcome if this sender still holds the delivery (its token); a `410`
    also disables the endpoint and abandons its other pending deliveries. The later
    deliveries of its run to the endpoint follow it (`_later_of_run`)."""
    d = webhook_delivery.c
    done = outcome.status != DeliveryStatus.PENDING
    result = await session.execute(
        update(webhook_delivery)
        .where(
            d.tenant_id == claimed.tenant_id,
            d.id == claimed.id,
            d.claim_token == claimed.token,
            d.status == DeliveryStatus.PENDING,
        )
        .values(
            status=outcome.status,
            claim_token=None,
            attempts_log=d.attempts_log.op("||")(
                bindparam("attempt", [asdict(outcome.attempt)], type_=JSONB)
            ),
            next_attempt_at=d.next_attempt_at if done else db_time.after(outcome.retry_in_s or 0.0),
            finished_at=db_time.now() if done else None,
        )
        .returning(d.id)
    )
    if result.first() is None:
        return False
    if outcome.disable_reason is not None:
        await disable(
            session, claimed.tenant_id, claimed.endpoint_id, outcome.disable_reason, db_time
        )
    elif outcome.status in (DeliveryStatus.PENDING, DeliveryStatus.FAILED):
        await _later_of_run(session, claimed, outcome, db_time)
    return True


async def _later_of_run(
    session: AsyncSession, claimed: Claimed, outcome: Outcome, db_time: DbTime
) -> None:
    """Waiting behind a delivery that is retried, its run's later deliveries to the same
    endpoint are not due before it (the senders' queue does not fill with rows they must
    skip); when it fails for good they are abandoned, so that a dead endpoint costs one
    retry schedule per run, not one per event, and what a receiver got of a run is
    always a prefix of it."""
    d = webhook_delivery.c
    later = update(webhook_delivery).where(
        d.tenant_id == claimed.tenant_id,
        d.endpoint_id == claimed.endpoint_id,
        d.run_id == claimed.run_id,
        d.seq > claimed.seq,
        d.status == DeliveryStatus.PENDING,
    )
    if outcome.status == DeliveryStatus.PENDING:
        due = db_time.after(outcome.retry_in_s or 0.0)
        await session.execute(later.values(next_attempt_at=func.greatest(d.next_attempt_at, due)))
    else:
        await session.execute(
            later.values(
                status=DeliveryStatus.ABANDONED, claim_token=None, finished_at=db_time.now()
            )
        )


async def disable(
    session: AsyncSession, tenant_id: str, endpoint_id: str, reason: str, db_time: DbTime
) -> None:
    e, d = webhook_endpoint.c, webhook_delivery.c
    await session.execute(
        update(webhook_endpoint)
        .where(e.tenant_id == tenant_id, e.id == endpoint_id, e.disabled_at.is_(None))
        .values(disabled_at=db_time.now(), disabled_reason=reason)
    )
    await session.execute(
        update(webhook_delivery)
        .where(
            d.tenant_id == tenant_id,
            d.endpoint_id == endpoint_id,
            d.status == DeliveryStatus.PENDING,
        )
        .values(status=DeliveryStatus.ABANDONED, claim_token=None, finished_at=db_time.now())
    )


async def hand_back(session: AsyncSession, held: Sequence[Claimed], db_time: DbTime) -> None:
    """Claims given up by a stopping sender: due now, for any sender."""
    if not held:
        return
    d = webhook_delivery.c
    await session.execute(
        update(webhook_delivery)
        .where(
            tuple_(d.tenant_id, d.id, d.claim_token).in_(
                [(c.tenant_id, c.id, c.token) for c in held]
            ),
            d.status == DeliveryStatus.PENDING,
        )
        .values(claim_token=None, next_attempt_at=db_time.now())
    )
