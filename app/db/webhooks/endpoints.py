"""Webhook endpoints and their deliveries (the outbox the trigger on `event` fills): rows ⇄
typed values, and the lock that orders a change to the endpoints against event writes.
The senders' side is `webhook_claims_repo`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import delete, func, insert, or_, select, tuple_, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.clock import DbTime
from app.db.webhooks.tables import ENDPOINTS_LOCK, webhook_delivery, webhook_endpoint


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
    #: False: our side could not make the attempt (its resolver did not answer); it does
    #: not count against the delivery's retries.
    counted: bool = True


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


_SHOWN = [c for c in webhook_endpoint.c if c.name not in ("secret", "previous_secret")]


def _endpoint(row: RowMapping) -> Endpoint:
    return Endpoint(**{c.name: row[c.name] for c in _SHOWN})


async def lock_endpoints(session: AsyncSession, tenant_id: str, *, wait_s: float) -> None:
    """Orders a change to the tenant's endpoints after every event write of the tenant in
    progress and before any later one (the outbox trigger takes the same lock shared):
    once the change commits, every event committed from then on sees it. Held until the
    transaction ends; waiting longer than `wait_s` for it (or for any lock after it in
    the transaction) fails with `errors.is_lock_timeout`, rather than holding up every
    event write of the tenant queued behind it."""
    wait = f"{max(1, round(wait_s * 1000))}ms"
    await session.execute(select(func.set_config("lock_timeout", wait, True)))
    await session.execute(
        select(func.pg_advisory_xact_lock(ENDPOINTS_LOCK, func.hashtext(tenant_id)))
    )


async def count_endpoints(session: AsyncSession, tenant_id: str) -> int:
    """The tenant's endpoints, disabled ones included (an index-only count)."""
    found = await session.execute(
        select(func.count()).where(webhook_endpoint.c.tenant_id == tenant_id)
    )
    return int(found.scalar_one())


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
    session: AsyncSession, tenant_id: str, *, limit: int, before: tuple[datetime, str] | None
) -> list[Endpoint]:
    """Newest first (as keys and previews), before the (created_at, id) of the previous
    page."""
    e = webhook_endpoint.c
    query = select(*_SHOWN).where(e.tenant_id == tenant_id)
    if before is not None:
        query = query.where(tuple_(e.created_at, e.id) < before)
    query = query.order_by(e.created_at.desc(), e.id.desc()).limit(limit)
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


@dataclass(frozen=True)
class Signing:
    """An endpoint's current secret, with the mark of the rotation that made it."""

    secret: str
    #: Set by each rotation (None until the first), and later than the one before it: a
    #: rotation waits for the previous one's grace to end and sets now + its own grace.
    #: So it names the endpoint's latest rotation, and equals one rotation's only while
    #: `secret` is the secret that rotation made.
    previous_secret_expires_at: datetime | None


async def signing(session: AsyncSession, tenant_id: str, endpoint_id: str) -> Signing | None:
    """The endpoint's current secret and the mark of its latest rotation, read together
    (one row, one statement): for a rotation's replay only, never shown otherwise."""
    w = webhook_endpoint.c
    row = await session.execute(
        select(w.secret, w.previous_secret_expires_at).where(
            w.tenant_id == tenant_id, w.id == endpoint_id
        )
    )
    found = row.one_or_none()
    return None if found is None else Signing(found.secret, found.previous_secret_expires_at)


def _attempts(log: Sequence[dict[str, Any]]) -> list[Attempt]:
    return [
        Attempt(
            a["at"],
            a.get("status_code"),
            a.get("latency_ms"),
            a.get("error"),
            a.get("counted", True),
        )
        for a in log
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
