"""API keys of the admin's tenant: create (the key shown once), list, revoke."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from starlette.responses import JSONResponse

from app.api.deps import AdminDep, RuntimeDep
from app.api.idempotency import IdempotencyKey, run_idempotent, shown_once
from app.api.responses import problems
from app.api.schemas.keys import CreateKeyIn, KeyCreatedOut, KeyOut, KeyPage
from app.db.access.keys import KeyRecord
from app.engine.access import keys
from app.engine.access.idempotency import Claim

router = APIRouter(prefix="/v1/keys", tags=["keys"])

Limit = Annotated[int, Query(ge=1, le=200, description="Items per page (default 50).")]


def _created(record: KeyRecord, key: str | None) -> dict[str, Any]:
    view = KeyCreatedOut(
        id=record.id,
        key=key,
        prefix=record.prefix or "",
        name=record.name,
        subject=record.subject,
        roles=record.roles,
        scopes=record.scopes,
        created_at=record.created_at,
    )
    return view.model_dump(mode="json")


@router.post(
    "",
    status_code=201,
    response_model=KeyCreatedOut,
    responses=problems(400, 401, 403, 409, 413, 415, 422),
)
async def create_key(
    body: CreateKeyIn,
    principal: AdminDep,
    rt: RuntimeDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Makes an API key of your tenant. The key is in this answer only (it is stored as a
    hash): keep it now. A retry under the same `Idempotency-Key` answers the same key's
    id, without the key."""
    spec = keys.KeySpec(
        name=body.name,
        subject=body.subject or body.name,
        roles=tuple(body.roles),
        scopes=tuple(body.scopes),
    )

    async def operation(claim: Claim | None) -> JSONResponse:
        if claim is not None and claim.resource_id is not None:
            # An earlier holder of this key made the key, then stopped before answering.
            record = await keys.get_key(rt, principal=principal, key_id=claim.resource_id)
            return JSONResponse(_created(record, None), status_code=201)
        record, key = await keys.issue_key(rt, principal=principal, spec=spec, claim=claim)
        return JSONResponse(_created(record, key), status_code=201)

    return await run_idempotent(
        request,
        rt,
        principal,
        operation,
        required=False,
        creates=True,
        validated=body,
        kept=shown_once("key"),
    )


@router.get("", response_model=KeyPage, responses=problems(400, 401, 403, 422))
async def list_keys(
    principal: AdminDep,
    rt: RuntimeDep,
    revoked: Annotated[
        bool, Query(description="Revoked keys too (default: only keys that still open).")
    ] = False,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> Any:
    """Your tenant's keys, newest first: never a key or its hash, only its prefix."""
    rows, next_cursor = await keys.list_keys(
        rt, principal=principal, revoked=revoked, limit=limit, cursor=cursor
    )
    return {
        "items": [KeyOut.model_validate(r, from_attributes=True) for r in rows],
        "next_cursor": next_cursor,
    }


@router.delete(
    "/{key_id}", status_code=204, response_class=Response, responses=problems(401, 403, 404)
)
async def revoke_key(key_id: str, principal: AdminDep, rt: RuntimeDep) -> Response:
    """Revokes a key of your tenant at once, on every process: its next request is `401`,
    and an event stream it opened ends within 15 s. Runs it created go on. Revoking a
    revoked key again is `204` too; your own key may be revoked (make another first)."""
    await keys.revoke_key(rt, principal=principal, key_id=key_id)
    return Response(status_code=204)
