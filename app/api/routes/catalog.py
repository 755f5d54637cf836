"""Tools and agents, as configured for this service."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.api.deps import AnyRoleDep, RuntimeDep
from app.api.responses import problems
from app.api.schemas import AgentPage, ToolPage
from app.api.views import tool_view
from app.config import AgentConfig
from app.domain.budget import narrow_limits
from app.engine.runs import caps

router = APIRouter(prefix="/v1", tags=["catalog"])


@router.get("/tools", response_model=ToolPage, responses=problems(401, 403))
async def list_tools(principal: AnyRoleDep, rt: RuntimeDep) -> Any:
    """Every registered tool, disabled ones included; never a backend URL."""
    items = [tool_view(rt.tools[name]) for name in sorted(rt.tools)]
    return {"items": items, "next_cursor": None}


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
async def list_agents(principal: AnyRoleDep, rt: RuntimeDep) -> Any:
    items = [_agent_view(rt, name, agent) for name, agent in sorted(rt.config.agents.items())]
    return {"items": items, "next_cursor": None}
