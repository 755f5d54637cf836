"""Webhook endpoints (SPEC §3.8), for admins: register, list, delete, rotate the secret,
and the deliveries with their attempts."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import JSONResponse, Response

from app.api.deps import AdminDep, RuntimeDep
from app.api.idempotency import IdempotencyKey, answered, run_idempotent, shown_once
from app.api.responses import problems
from app.api.schemas.webhooks import (
    CreateWebhookIn,
    DeliveryOut,
    DeliveryPage,
    WebhookOut,
    WebhookPage,
    WebhookSecretOut,
)
from app.db.access.idempotency import Answered
from app.db.webhooks.endpoints import Delivery, Endpoint
from app.domain.tools.specs import Principal
from app.engine.access.idempotency import Claim, Replay
from app.engine.process.runtime import Runtime
from app.engine.webhooks import endpoints
from app.engine.webhooks.endpoints import WithSecret

router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"])
Limit = Annotated[int, Query(ge=1, le=200, description="Items per page (default 50).")]
Cursor = Annotated[str | None, Query(max_length=500)]


def _view(endpoint: Endpoint) -> dict[str, Any]:
    return WebhookOut.model_validate(asdict(endpoint)).model_dump(mode="json")


def _with_secret(made: WithSecret, status: int) -> JSONResponse:
    body = WebhookSecretOut.model_validate({**asdict(made.endpoint), "secret": made.secret})
    return JSONResponse(
        body.model_dump(mode="json"),
        status_code=status,
        headers={"Location": f"/v1/webhooks/{made.endpoint.id}"},
    )


@router.post(
    "",
    status_code=201,
    response_model=WebhookSecretOut,
    responses=problems(400, 401, 403, 409, 413, 415, 422),
)
async def create_webhook(
    body: CreateWebhookIn,
    principal: AdminDep,
    rt: RuntimeDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Registers an endpoint for the listed event types; it receives the events committed
    after this answer, signed with `secret` (Standard Webhooks), which only this answer
    shows. A URL outside the operator's allowlist is `422`."""

    async def operation(claim: Claim | None) -> JSONResponse:
        if claim is not None and claim.resource_id is not None:
            # An earlier holder of this key registered it, then stopped before answering:
            # the same endpoint, its secret not shown again (rotate for a new one).
            found = await endpoints.get_endpoint(
                rt, principal=principal, endpoint_id=claim.resource_id
            )
            return _with_secret(endpoints.WithSecret(found, None), 201)
        made = await endpoints.register(
            rt, principal=principal, url=body.url, events=body.events, claim=claim
        )
        return _with_secret(made, 201)

    return await run_idempotent(
        request,
        rt,
        principal,
        operation,
        required=False,
        creates=True,
        validated=body,
        kept=shown_once("secret"),
    )


@router.get("", response_model=WebhookPage, responses=problems(400, 401, 403))
async def list_webhooks(
    principal: AdminDep, rt: RuntimeDep, limit: Limit = 50, cursor: Cursor = None
) -> Any:
    """The tenant's endpoints, newest first; never a secret."""
    rows, next_cursor = await endpoints.list_endpoints(
        rt, principal=principal, limit=limit, cursor=cursor
    )
    return {"items": [_view(r) for r in rows], "next_cursor": next_cursor}


@router.delete("/{webhook_id}", status_code=204, responses=problems(401, 403, 404))
async def delete_webhook(webhook_id: str, principal: AdminDep, rt: RuntimeDep) -> Response:
    """Removes the endpoint and its deliveries: nothing more is sent to it."""
    await endpoints.delete(rt, principal=principal, endpoint_id=webhook_id)
    return Response(status_code=204)


def rotation_answer(made: WithSecret) -> Answered:
    """A rotation's answer as its Idempotency-Key keeps it: without the new secret, which
    a replay reads again from the endpoint (`rotation_replayed`)."""
    return answered(_with_secret(WithSecret(made.endpoint, None), 200))


async def rotation_replayed(rt: Runtime, principal: Principal, stored: Replay) -> Replay:
    """A rotation's stored answer, its secret read again from the endpoint's row: only
    while that rotation is the endpoint's latest (404 once the endpoint is gone, 409 once
    it was rotated again). A stored refusal is replayed as it is."""
    if stored.status != 200 or not isinstance(stored.body, dict):
        return stored
    kept = WebhookSecretOut.model_validate(stored.body)
    secret = await endpoints.rotated_secret(
        rt, principal=principal, endpoint_id=kept.id, rotation=kept.previous_secret_expires_at
    )
    return replace(stored, body={**stored.body, "secret": secret})


@router.post(
    "/{webhook_id}/rotate",
    response_model=WebhookSecretOut,
    responses=problems(400, 401, 403, 404, 409),
)
async def rotate_webhook_secret(
    webhook_id: str,
    principal: AdminDep,
    rt: RuntimeDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """A new secret. The previous one keeps signing for 24 h (`webhook-signature` then
    carries both), so receivers can switch without a gap; another rotation within them is
    `409`. With an `Idempotency-Key`, a retry is answered the same secret, read again
    from the endpoint, as long as no later rotation replaced it (then `409`; `404` once
    the endpoint is deleted): send one, so that an answer lost on the way never loses
    the secret."""

    async def operation(claim: Claim | None) -> JSONResponse:
        made = await endpoints.rotate(
            rt, principal=principal, endpoint_id=webhook_id, claim=claim, answer=rotation_answer
        )
        return _with_secret(made, 200)

    async def replayed(stored: Replay) -> Replay:
        return await rotation_replayed(rt, principal, stored)

    return await run_idempotent(
        request,
        rt,
        principal,
        operation,
        required=False,
        kept=shown_once("secret"),
        replayed=replayed,
    )


def _delivery(delivery: Delivery) -> dict[str, Any]:
    return DeliveryOut.model_validate(asdict(delivery)).model_dump(mode="json")


@router.get(
    "/{webhook_id}/deliveries", response_model=DeliveryPage, responses=problems(400, 401, 403, 404)
)
async def list_webhook_deliveries(
    webhook_id: str,
    principal: AdminDep,
    rt: RuntimeDep,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Any:
    """The endpoint's deliveries, newest first, each with its attempts (when, the status
    code, the latency, and why it failed)."""
    rows, next_cursor = await endpoints.deliveries(
        rt, principal=principal, endpoint_id=webhook_id, limit=limit, cursor=cursor
    )
    return {"items": [_delivery(r) for r in rows], "next_cursor": next_cursor}
