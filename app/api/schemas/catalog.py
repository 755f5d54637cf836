"""Wire schemas of the catalog: tools, agents and the calling key."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.api.schemas.runs import LimitsOut, RequestBody

#: A declaration's hash: `sha256:` and 64 hex digits.
DECLARATION_HASH = r"^sha256:[0-9a-f]{64}$"


class PendingDeclarationOut(BaseModel):
    """An MCP tool's declaration as its server lists it now, held until an admin accepts
    it (`POST /v1/tools/{name}/accept`): it differs from the pinned one, or was refused at
    first sight."""

    declaration_hash: str = Field(description="What `accept` must send back.")
    description: str | None
    input_schema: Any
    output_schema: Any
    annotations: dict[str, Any] | None
    held_for: list[str] = Field(
        description="Why it is held: `changed` (differs from the pinned declaration), "
        "`description_too_long`, `schema_too_large`, `annotations_too_large`, "
        "`injection_suspected`, "
        "`invalid_schema` (cannot be accepted)."
    )
    seen_at: datetime | None


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
    pending_declaration: PendingDeclarationOut | None = Field(
        description="An MCP tool's declaration held for an admin's acceptance; the tool "
        "is unavailable meanwhile (`enabled: false`)."
    )


class AcceptIn(RequestBody):
    declaration_hash: str = Field(
        pattern=DECLARATION_HASH,
        description="The pending declaration's `declaration_hash`, as reviewed.",
    )


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
