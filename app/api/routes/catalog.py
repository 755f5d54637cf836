"""Tools and agents, as configured for this service."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from app.api.deps import AnyRoleDep, RuntimeDep
from app.api.responses import problems
from app.api.schemas import AgentPage, ToolPage
from app.api.views import tool_view
from app.config import AgentConfig
from app.domain.budget import narrow_limits
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.engine.runs import caps, decode_cursor, encode_cursor

router = APIRouter(prefix="/v1", tags=["catalog"])


Limit = Annotated[int, Query(ge=1, le=200, description="Items per page (default 50).")]
Cursor = Annotated[str | None, Query(max_length=500)]


def _page(names: list[str], limit: int, cursor: str | None) -> tuple[list[str], str | None]:
    """Names in order after the cursor (the last name of the previous page)."""
    after = decode_cursor(cursor) if cursor else None
    if after is not None and not isinstance(after, str):
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
    """Every registered tool, disabled ones included; never a backend URL."""
    names, next_cursor = _page(list(rt.tools), limit, cursor)
    return {"items": [tool_view(rt.tools[n]) for n in names], "next_cursor": next_cursor}


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
