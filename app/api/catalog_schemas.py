"""Wire schemas of the catalog: tools, agents and the calling key."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.api.schemas import LimitsOut


class ToolOut(BaseModel):
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    risk: str
    requires_approval: bool
    side_effects: bool
    idempotent: bool
    permissions: list[str]
    timeout_s: float
    concurrency_group: str | None
    max_concurrency: int | None
    cost_usd: float
    enabled: bool


class ToolPage(BaseModel):
    items: list[ToolOut]
    next_cursor: str | None


class AgentOut(BaseModel):
    name: str
    model: str
    instructions: str
    tools: list[str]
    limits: LimitsOut


class AgentPage(BaseModel):
    items: list[AgentOut]
    next_cursor: str | None


class MeOut(BaseModel):
    tenant: str
    subject: str
    roles: list[str]
    scopes: list[str] | None = Field(description="`null`: every scope.")
