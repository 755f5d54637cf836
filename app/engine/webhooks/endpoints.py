"""Webhook endpoints (SPEC §3.8), an admin's use cases: register (the secret is answered
once; at most `webhooks.max_endpoints_per_tenant`), list, delete, rotate the secret (the
old one signs 24 h more; a replay of its Idempotency-Key reads the secret again from the
endpoint, never from the key's record), read deliveries."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from app.config.files import WebhooksConfig
from app.db.access import idempotency as idempotency_repo
from app.db.access.idempotency import Answered
from app.db.errors import is_lock_timeout
from app.db.webhooks import endpoints
from app.db.webhooks.endpoints import Delivery, Endpoint
from app.domain.audit.chain import Action
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.ids import new_id
from app.domain.lifecycle.events import EventType
from app.domain.tools.specs import Principal
from app.domain.webhooks.destinations import (
    BadDestination,
    Pattern,
    address_refusal,
    allowed,
    destination,
    pattern,
)
from app.domain.webhooks.signing import new_secret
from app.engine.access import idempotency
from app.engine.access.idempotency import Claim, ClaimLost
from app.engine.audit import trail
from app.engine.lifecycle.runs import created_position, page_of

if TYPE_CHECKING:
    from app.engine.runner import Runtime

#: How long a rotated-out secret still signs (SPEC §3.8: 24 h).
ROTATION_GRACE_S = 24 * 3600.0


@dataclass(frozen=True)
class WithSecret:
    """An endpoint and its new secret: the one answer that shows it."""

    endpoint: Endpoint
    #: None when answered again for a request made before (the secret is shown once).
    secret: str | None


def allowlist(config: WebhooksConfig) -> list[Pattern]:
    return [pattern(p) for p in config.allow]


def _refused_url(message: str) -> DomainError:
    return DomainError(
        ErrorCode.VALIDATION, "some fields are invalid", [FieldError("url", message)]
    )


def _not_found() -> DomainError:
    return DomainError(ErrorCode.NOT_FOUND, "no such webhook endpoint")


def check_url(config: WebhooksConfig, url: str) -> None:
    """A URL the operator's allowlist admits; refused with the field's path otherwise."""
    try:
        dest = destination(url)
    except BadDestination as exc:
        raise _refused_url(str(exc)) from None
    patterns = allowlist(config)
    if not allowed(patterns, dest):
        raise _refused_url("not a destination the operator allows for webhooks")
    # An address in the URL is judged now, by the rule each delivery applies to the
    # addresses a name resolves to (a name is resolved at each delivery only).
    if dest.literal is not None and address_refusal(patterns, dest, [dest.literal]):
        raise _refused_url(
            "an address no webhook may reach (loopback, private, link-local, reserved, or an "
            "IPv6 one carrying or tunnelling such an IPv4 address: NAT64, 6to4, Teredo, ...) "
            "unless the operator's allowlist names it"
        )


async def register(
    rt: Runtime,
    *,
    principal: Principal,
    url: str,
    events: Sequence[EventType],
    claim: Claim | None = None,
) -> WithSecret:
    """The endpoint, bound to the request's Idempotency-Key claim in the same transaction:
    a retry after a crash between the two finds the endpoint, never makes a second one."""
    check_url(rt.config.webhooks, url)
    secret = new_secret()
    async with _changing_endpoints(rt, principal) as session:
        # Counted under the tenant's endpoints lock: two registrations cannot both pass.
        cap = rt.config.webhooks.max_endpoints_per_tenant
        if await endpoints.count_endpoints(session, principal.tenant_id) >= cap:
            raise DomainError(
                ErrorCode.INVALID_STATE,
                f"the tenant has {cap} webhook endpoints, the most the operator allows: "
                "delete one (a disabled one, say) before registering another",
            )
        endpoint = await endpoints.insert_endpoint(
            session,
            endpoints.NewEndpoint(
                tenant_id=principal.tenant_id,
                id=new_id("wh"),
                url=url,
                events=sorted({str(e) for e in events}),
                secret=secret,
                created_at=rt.clock.now(),
                created_by=principal.subject,
            ),
        )
        if claim is not None:
            binding = idempotency.binding(rt, claim)
            if not await idempotency_repo.bind(session, binding, endpoint.id, db_time=rt.db_time):
                raise idempotency.binding_failed(claim)
        await trail.record(
            session,
            principal.tenant_id,
            principal.subject,
            Action.REGISTER_WEBHOOK,
            endpoint.id,
            endpoint.created_at,
            url=url,
            events=list(endpoint.events),
        )
    return WithSecret(endpoint, secret)


async def get_endpoint(rt: Runtime, *, principal: Principal, endpoint_id: str) -> Endpoint:
    async with rt.reads() as session:
        found = await endpoints.get_endpoint(session, principal.tenant_id, endpoint_id)
    if found is None:
        raise _not_found()
    return found


def _position(endpoint: Endpoint) -> list[str]:
    return [endpoint.created_at.isoformat(), endpoint.id]


async def list_endpoints(
    rt: Runtime, *, principal: Principal, limit: int, cursor: str | None
) -> tuple[list[Endpoint], str | None]:
    before = created_position(cursor) if cursor else None
    async with rt.reads() as session:
        rows = await endpoints.list_endpoints(
            session, principal.tenant_id, limit=limit + 1, before=before
        )
    return page_of(rows, limit, _position)


async def delete(rt: Runtime, *, principal: Principal, endpoint_id: str) -> None:
    async with _changing_endpoints(rt, principal) as session:
        if not await endpoints.delete_endpoint(session, principal.tenant_id, endpoint_id):
            raise _not_found()
        await trail.record(
            session,
            principal.tenant_id,
            principal.subject,
            Action.DELETE_WEBHOOK,
            endpoint_id,
            rt.clock.now(),
        )


@contextlib.asynccontextmanager
async def _changing_endpoints(rt: Runtime, principal: Principal) -> AsyncIterator[AsyncSession]:
    """A transaction that changes the tenant's endpoints, after the tenant's event writes
    in progress: an endpoint registered receives every event committed after its answer,
    and no event write meets an endpoint removed under it."""
    try:
        async with rt.sessions.begin() as session:
            await endpoints.lock_endpoints(
                session, principal.tenant_id, wait_s=rt.settings.webhook_lock_wait_s
            )
            yield session
    except Exception as exc:
        if not is_lock_timeout(exc):
            raise
        raise DomainError(
            ErrorCode.UNAVAILABLE,
            "the tenant's runs are writing events; try again in a moment",
            retry_after_s=1,
        ) from None


async def rotate(
    rt: Runtime,
    *,
    principal: Principal,
    endpoint_id: str,
    claim: Claim | None = None,
    answer: Callable[[WithSecret], Answered] | None = None,
) -> WithSecret:
    """A new secret; the current one also signs for `ROTATION_GRACE_S` more. Under an
    Idempotency-Key (`claim`), the answer (`answer` renders it, *without* the secret) is
    stored in the rotation's own transaction: a retry with the key is a replay whatever
    became of the first answer (never a second rotation, never the grace's `409`), and
    no rotation commits without it. The replay takes the secret from the endpoint's row
    (`rotated_secret`): the key's record never holds a copy of it."""
    secret = new_secret()
    async with rt.sessions.begin() as session:
        endpoint = await endpoints.rotate(
            session,
            principal.tenant_id,
            endpoint_id,
            secret=secret,
            grace_s=ROTATION_GRACE_S,
            db_time=rt.db_time,
        )
        if endpoint is None:
            found = await endpoints.get_endpoint(session, principal.tenant_id, endpoint_id)
            if found is None:
                raise _not_found()
            raise DomainError(
                ErrorCode.INVALID_STATE,
                "the previous rotation's secret still signs (for 24 h after it): rotate again "
                "once it has expired, so that no secret a receiver holds is dropped early",
            )
        made = WithSecret(endpoint, secret)
        if claim is not None and answer is not None:
            await _keep_answer(rt, session, claim, answer(made))
        await trail.record(
            session,
            principal.tenant_id,
            principal.subject,
            Action.ROTATE_WEBHOOK_SECRET,
            endpoint_id,
            rt.clock.now(),
        )
    return made


async def _keep_answer(rt: Runtime, session: AsyncSession, claim: Claim, made: Answered) -> None:
    """The rotation's answer (no secret in it) with its key, kept while the rotation
    refuses another (24 h at least): a retry is replayed, and never locked out by it."""
    if not await idempotency_repo.answer(
        session,
        tenant_id=claim.tenant_id,
        key=claim.key,
        token=claim.token,
        answered=made,
        kept_s=ROTATION_GRACE_S,
        db_time=rt.db_time,
    ):
        raise ClaimLost(claim.key)  # another request holds the key: nothing is rotated


async def rotated_secret(
    rt: Runtime, *, principal: Principal, endpoint_id: str, rotation: datetime | None
) -> str:
    """For the replay of a rotation's Idempotency-Key: the secret that rotation made, read
    from the endpoint's row, and only while it is the endpoint's latest rotation
    (`rotation`: the `previous_secret_expires_at` the rotation answered, which no later
    rotation repeats). Gone, the endpoint is `not-found`, as to any other request; rotated
    again since (under another key, or none), `invalid-state`: the secret it holds now is
    another rotation's, its own answer's to show, and the one this key made is no longer
    the endpoint's (it signs only until that rotation's grace ends, if at all)."""
    async with rt.reads() as session:
        found = await endpoints.signing(session, principal.tenant_id, endpoint_id)
    if found is None:
        raise _not_found()
    if rotation is None or found.previous_secret_expires_at != rotation:
        raise DomainError(
            ErrorCode.INVALID_STATE,
            "the endpoint was rotated again after the rotation made with this Idempotency-Key: "
            "its secret is no longer the endpoint's and is not shown again (the current one "
            "was shown to the later rotation; rotate once its grace ends for a new one)",
        )
    return found.secret


def _delivery_position(delivery: Delivery) -> list[str]:
    return [delivery.created_at.isoformat(), delivery.id]


async def deliveries(
    rt: Runtime, *, principal: Principal, endpoint_id: str, limit: int, cursor: str | None
) -> tuple[list[Delivery], str | None]:
    """The endpoint's deliveries, newest first, each with its attempts."""
    before = created_position(cursor) if cursor else None
    async with rt.reads() as session:
        if await endpoints.get_endpoint(session, principal.tenant_id, endpoint_id) is None:
            raise _not_found()
        rows = await endpoints.deliveries_page(
            session, principal.tenant_id, endpoint_id, limit=limit + 1, before=before
        )
    return page_of(rows, limit, _delivery_position)
