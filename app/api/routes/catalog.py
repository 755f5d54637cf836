"""Tools and agents, as configured for this service."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import JSONResponse

from app.api.deps import AdminDep, AnyRoleDep, RuntimeDep
from app.api.idempotency import IdempotencyKey, run_idempotent
from app.api.responses import problems
from app.api.schemas.catalog import AcceptIn, AgentPage, MeOut, ToolOut, ToolPage
from app.api.views import tool_view
from app.config.files import AgentConfig
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.limits.budget import narrow_limits
from app.domain.tools.specs import Principal
from app.engine.access.idempotency import Claim
from app.engine.lifecycle.runs import caps, decode_cursor, encode_cursor
from app.engine.tools import gates, mcp_declarations, offered

router = APIRouter(prefix="/v1", tags=["catalog"])


Limit = Annotated[int, Query(ge=1, le=200, description="Items per page (default 50).")]
Cursor = Annotated[str | None, Query(max_length=500)]


def _page(names: list[str], limit: int, cursor: str | None) -> tuple[list[str], str | None]:
    """Names in order after the cursor (the last name of the previous page)."""
    after = decode_cursor(cursor) if cursor else None
    if cursor and not isinstance(after, str):
        raise DomainError(
            ErrorCode.VALIDATION,
            "not a cursor this service gave out",
            [FieldError("cursor", "not a cursor this service gave out")],
        )
    rest = [n for n in sorted(names) if after is None or n > after]
    page = rest[:limit]
    return page, encode_cursor(page[-1]) if len(rest) > limit else None


@router.get("/tools", response_model=ToolPage, responses=problems(401, 403))
async def list_tools(
    principal: AnyRoleDep, rt: RuntimeDep, limit: Limit = 50, cursor: Cursor = None
) -> Any:
    """Every registered tool, disabled ones included (`enabled: false`: off in the
    config, switched off for your tenant, or not offered now by its MCP server); never a
    backend URL or an MCP server's address."""
    names, next_cursor = _page(list(rt.tools), limit, cursor)
    await offered.ready(rt.tools[n] for n in names)
    disabled = await rt.disabled_tools.of(principal.tenant_id)
    return {
        "items": [tool_view(rt.tools[n], disabled) for n in names],
        "next_cursor": next_cursor,
    }


async def _switch(
    request: Request, rt: RuntimeDep, principal: Principal, name: str, *, off: bool
) -> Any:
    async def operation(_claim: Claim | None) -> JSONResponse:
        await gates.switch_tool(rt, principal=principal, name=name, off=off)
        await offered.ready((rt.tools[name],))
        view = tool_view(rt.tools[name], await rt.disabled_tools.of(principal.tenant_id))
        return JSONResponse(ToolOut.model_validate(view).model_dump(mode="json"))

    return await run_idempotent(request, rt, principal, operation, required=False)


_SWITCH_PROBLEMS = problems(400, 401, 403, 404, 409, 413, 415, 422)


@router.post("/tools/{name}/disable", response_model=ToolOut, responses=_SWITCH_PROBLEMS)
async def disable_tool(
    name: str,
    principal: AdminDep,
    rt: RuntimeDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Kill switch: the tool is switched off for your tenant. Runs that start afterwards
    do not get it; running runs have their new proposals of it rejected `tool_disabled`.
    Doing it twice is the same as once."""
    return await _switch(request, rt, principal, name, off=True)


@router.post("/tools/{name}/enable", response_model=ToolOut, responses=_SWITCH_PROBLEMS)
async def enable_tool(
    name: str,
    principal: AdminDep,
    rt: RuntimeDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Switches the tool back on for your tenant (a tool off in the config stays off)."""
    return await _switch(request, rt, principal, name, off=False)


@router.post("/tools/{name}/accept", response_model=ToolOut, responses=_SWITCH_PROBLEMS)
async def accept_declaration(
    name: str,
    body: AcceptIn,
    principal: AdminDep,
    rt: RuntimeDep,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Accepts an MCP tool's pending declaration (`pending_declaration`), which its server
    lists instead of the pinned one: `declaration_hash` must be the pending one's (`409
    invalid-state` for another, or when nothing is pending). It becomes the pinned
    declaration — what the model sees — for every tenant and replica, and the acceptance
    is recorded (who, which hash, when). The answer is the tool as it is now."""

    async def operation(_claim: Claim | None) -> JSONResponse:
        await mcp_declarations.accept(
            rt, principal=principal, name=name, declaration_hash=body.declaration_hash
        )
        await offered.ready((rt.tools[name],))
        view = tool_view(rt.tools[name], await rt.disabled_tools.of(principal.tenant_id))
        return JSONResponse(ToolOut.model_validate(view).model_dump(mode="json"))

    return await run_idempotent(request, rt, principal, operation, required=False, validated=body)


def _agent_view(rt: RuntimeDep, name: str, agent: AgentConfig) -> dict[str, Any]:
    limits = agent.limits.model_dump(exclude_none=True) if agent.limits else {}
    return {
        "name": name,
        "model": agent.model,
        "instructions": agent.instructions,
        "tools": list(agent.tools),
        "limits": narrow_limits(caps(rt), limits).as_dict(),
    }


@router.get("/agents", response_model=AgentPage, responses=problems(401, 403))
async def list_agents(
    principal: AnyRoleDep, rt: RuntimeDep, limit: Limit = 50, cursor: Cursor = None
) -> Any:
    agents = rt.config.agents
    names, next_cursor = _page(list(agents), limit, cursor)
    return {"items": [_agent_view(rt, n, agents[n]) for n in names], "next_cursor": next_cursor}


@router.get("/me", response_model=MeOut, responses=problems(401, 403))
async def get_me(principal: AnyRoleDep) -> Any:
    """The calling key: its tenant, subject, roles and scopes (`null`: every scope), so a
    client can offer only what the key may do."""
    return {
        "tenant": principal.tenant_id,
        "subject": principal.subject,
        "roles": sorted(principal.roles),
        "scopes": None if principal.scopes is None else sorted(principal.scopes),
    }
