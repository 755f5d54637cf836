"""The senders' side of the webhook outbox: the claim of due deliveries (one sender per
delivery, a cap per endpoint), the claim-conditional outcome of an attempt, and the hand
back of claims a stopping sender gives up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from sqlalchemy import bindparam, func, text, tuple_, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.clock import DbTime
from app.db.webhooks.endpoints import Attempt, DeliveryStatus
from app.db.webhooks.tables import webhook_delivery, webhook_endpoint
from app.domain.lifecycle.records import FeedEvent


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
    #: Attempts before this one that our resolver could not make (not counted).
    deferred: int = 0


@dataclass(frozen=True)
class Outcome:
    """What one attempt settled: the delivery's new status, the wait before its next
    attempt when still pending, whether its endpoint is disabled (`410`), and whether it
    counts against the delivery's retries (`counted`: False when our side could not make
    it, the claim's count is taken back)."""

    status: DeliveryStatus
    attempt: Attempt
    retry_in_s: float | None = None
    disable_reason: str | None = None
    counted: bool = True


# Due deliveries, the earliest pending one of each (endpoint, run) only, so that a run's
# events reach an endpoint in seq order whatever the retries; no more of one endpoint than
# `per_endpoint`, and no more of one tenant than `per_tenant`, being sent at once, counting
# those other claims hold (`busy`; an endpoint or a tenant at its cap is skipped before the
# scan's limit, so it never hides the others' due rows). SKIP LOCKED: two senders never
# take the same row; the lease (next_attempt_at pushed past the attempt's timeout) keeps it
# from being taken again until the holder records its outcome or dies. Two senders
# claiming at once may each fill an endpoint's or a tenant's room: the caps are kept
# within a claim, and over every process but for that race.
_CLAIM = text("""
WITH busy AS (
    SELECT c.tenant_id, c.endpoint_id, count(*) AS sending
    FROM webhook_delivery c
    WHERE c.status = 'pending' AND c.claim_token IS NOT NULL
      AND c.next_attempt_at > now() + :now_offset
    GROUP BY c.tenant_id, c.endpoint_id
), busy_tenant AS (
    SELECT b.tenant_id, sum(b.sending) AS sending FROM busy b GROUP BY b.tenant_id
), candidates AS (
    SELECT d.tenant_id, d.id, d.endpoint_id, d.next_attempt_at
    FROM webhook_delivery d
    WHERE d.status = 'pending' AND d.next_attempt_at <= now() + :now_offset
      AND NOT EXISTS (
          SELECT 1 FROM webhook_delivery e
          WHERE e.tenant_id = d.tenant_id AND e.endpoint_id = d.endpoint_id
            AND e.run_id = d.run_id AND e.status = 'pending' AND e.seq < d.seq)
      AND NOT EXISTS (
          SELECT 1 FROM busy b
          WHERE b.tenant_id = d.tenant_id AND b.endpoint_id = d.endpoint_id
            AND b.sending >= :per_endpoint)
      AND NOT EXISTS (
          SELECT 1 FROM busy_tenant t
          WHERE t.tenant_id = d.tenant_id AND t.sending >= :per_tenant)
    ORDER BY d.next_attempt_at
    LIMIT :scan
), by_endpoint AS (
    SELECT c.tenant_id, c.id, c.next_attempt_at,
           coalesce(b.sending, 0) + row_number() OVER (
               PARTITION BY c.tenant_id, c.endpoint_id ORDER BY c.next_attempt_at, c.id
           ) AS place
    FROM candidates c
    LEFT JOIN busy b ON b.tenant_id = c.tenant_id AND b.endpoint_id = c.endpoint_id
), by_tenant AS (
    -- Among what each endpoint's cap lets through: the tenant's cap.
    SELECT e.tenant_id, e.id, e.next_attempt_at,
           coalesce(t.sending, 0) + row_number() OVER (
               PARTITION BY e.tenant_id ORDER BY e.next_attempt_at, e.id
           ) AS place
    FROM by_endpoint e
    LEFT JOIN busy_tenant t ON t.tenant_id = e.tenant_id
    WHERE e.place <= :per_endpoint
), due AS (
    SELECT d.tenant_id, d.id, d.endpoint_id, d.run_id, d.seq
    FROM webhook_delivery d
    JOIN by_tenant r ON r.tenant_id = d.tenant_id AND r.id = d.id
    WHERE r.place <= :per_tenant
      AND d.status = 'pending' AND d.next_attempt_at <= now() + :now_offset
    ORDER BY r.next_attempt_at
    LIMIT :limit
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_delivery d
SET next_attempt_at = now() + :lease, claim_token = :token, attempts = d.attempts + 1
FROM due
JOIN webhook_endpoint w ON w.tenant_id = due.tenant_id AND w.id = due.endpoint_id
-- The row holding the event (one write's events: migration 0021), if it is still kept.
LEFT JOIN LATERAL (
    SELECT r.run_id, due.seq, r.events -> (due.seq - r.seq) AS item, r.at, r.xid
    FROM (SELECT run_id, seq, at, xid, events FROM event
          WHERE tenant_id = due.tenant_id AND run_id = due.run_id AND last_seq >= due.seq
          ORDER BY last_seq
          LIMIT 1) r
    WHERE r.seq <= due.seq
) ev ON true
WHERE d.tenant_id = due.tenant_id AND d.id = due.id
RETURNING d.tenant_id, d.id, d.attempts, d.endpoint_id, d.run_id AS of_run, d.seq AS at_seq,
    -- Attempts our resolver could not make (not counted): a few at most (`Claimed.deferred`).
    (SELECT count(*) FROM jsonb_array_elements(d.attempts_log) a
     WHERE a ->> 'counted' = 'false') AS deferred,
    w.url, w.secret,
    CASE WHEN w.previous_secret_expires_at > now() + :now_offset
         THEN w.previous_secret END AS previous_secret,
    w.disabled_at IS NOT NULL AS endpoint_disabled,
    ev.run_id, ev.seq, ev.item ->> 0 AS type, ev.at, ev.item -> 1 AS data, ev.xid
""")
#: How many due deliveries a claim looks at per slot it fills: room to pass over an
#: endpoint's rows beyond its cap.
SCAN_PER_SLOT = 4


async def claim_due(
    session: AsyncSession,
    *,
    limit: int,
    per_endpoint: int,
    per_tenant: int,
    lease_s: float,
    token: str,
    db_time: DbTime,
) -> list[Claimed]:
    rows = await session.execute(
        _CLAIM,
        {
            "now_offset": db_time.interval(0),
            "lease": db_time.interval(lease_s),
            "limit": limit,
            "scan": limit * SCAN_PER_SLOT,
            "per_endpoint": per_endpoint,
            "per_tenant": per_tenant,
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
            deferred=r["deferred"],
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
            attempts=d.attempts if outcome.counted else d.attempts - 1,
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
