"""The tenant's audit chain (SPEC §3.10): admins page through it, oldest first."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from app.api.deps import AdminDep, RuntimeDep
from app.api.responses import problems
from app.api.schemas.audit import AuditPage
from app.engine.audit import trail

router = APIRouter(tags=["audit"])

Limit = Annotated[int, Query(ge=1, le=500, description="Items per page (default 100).")]


@router.get("/v1/audit", response_model=AuditPage, responses=problems(401, 403, 422))
async def list_audit(
    principal: AdminDep,
    rt: RuntimeDep,
    limit: Limit = 100,
    cursor: Annotated[str | None, Query(max_length=20)] = None,
) -> Any:
    """The tenant's audit chain, oldest first: every decision on a preview (approve,
    reject, revise, commit) and every operator action (kill switch, keys, webhooks, MCP
    declarations), each hashed over the one before. `python -m app audit verify` checks
    the chain."""
    rows, next_cursor = await trail.page(rt, principal=principal, cursor=cursor, limit=limit)
    return {"items": [r.as_dict() for r in rows], "next_cursor": next_cursor}
