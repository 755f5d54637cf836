"""The tech radar demo tools (SPEC §6): lookups on the tenant's radar, and one write that
requires approval."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.radar import history, technologies
from app.db.radar.technologies import Technology
from app.domain.approvals.previews import PreviewBody
from app.domain.ports import Clock, OperationStatus, Tool, ToolContext
from app.domain.tools.specs import Risk, ToolError, ToolResult, ToolSpec, rfc3339

RINGS = ["adopt", "trial", "assess", "hold"]

SEARCH_SPEC = ToolSpec(
    name="search_technologies",
    description=(
        "Search the technology radar. Matches the query as a case-insensitive substring of "
        "a technology's name, category or description; optionally only one ring."
    ),
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 200},
            "ring": {"type": "string", "enum": RINGS},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        },
    },
    output_schema={
        "type": "object",
        "required": ["items", "total"],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "name", "category", "ring", "summary"],
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "category": {"type": "string"},
                        "ring": {"type": "string", "enum": RINGS},
                        "summary": {"type": "string"},
                    },
                },
            },
            "total": {"type": "integer"},
        },
    },
    risk=Risk.LOW,
    permissions=("radar:read",),
    timeout_s=5,
    concurrency_group="radar",
)

GET_SPEC = ToolSpec(
    name="get_technology",
    description="Read one technology of the radar by its id, with its ring and description.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["technology_id"],
        "properties": {"technology_id": {"type": "string", "minLength": 1, "maxLength": 64}},
    },
    output_schema={
        "type": "object",
        "required": ["id", "name", "category", "ring", "description", "version"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "category": {"type": "string"},
            "ring": {"type": "string", "enum": RINGS},
            "description": {"type": "string"},
            "version": {"type": "integer"},
            "updated_at": {"type": "string"},
        },
    },
    risk=Risk.LOW,
    permissions=("radar:read",),
    timeout_s=5,
    concurrency_group="radar",
)

MOVE_SPEC = ToolSpec(
    name="move_technology_ring",
    description=(
        "Move a technology to another ring of the radar. Requires approval: the call is "
        "previewed and executed only once an approver approves and commits it."
    ),
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["technology_id", "ring", "rationale"],
        "properties": {
            "technology_id": {"type": "string", "minLength": 1, "maxLength": 64},
            "ring": {"type": "string", "enum": RINGS},
            "rationale": {"type": "string", "minLength": 1, "maxLength": 500},
        },
    },
    output_schema={
        "type": "object",
        "required": ["id", "name", "ring", "version"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "ring": {"type": "string", "enum": RINGS},
            "version": {"type": "integer"},
        },
    },
    risk=Risk.HIGH,
    requires_approval=True,
    side_effects=True,
    idempotent=True,  # one operation id changes the row once (the ledger)
    permissions=("radar:write",),
    timeout_s=5,
    concurrency_group="radar",
)

#: Every built-in tool the config may name; `radar_tools` builds the ones this build runs.
SPECS: dict[str, ToolSpec] = {s.name: s for s in (SEARCH_SPEC, GET_SPEC, MOVE_SPEC)}


def _summary(description: str) -> str:
    first = description.split(". ")[0].strip()
    return first if len(first) <= 160 else first[:157] + "..."


class _RadarTool:
    spec: ToolSpec

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._sessions = sessions
        self._clock = clock

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        return None

    def _observed(self, context: ToolContext | None = None) -> str:
        """When the result was true: now, or for a snapshot read the time it is pinned to."""
        if context is not None and context.as_of is not None:
            return rfc3339(context.as_of)
        return rfc3339(self._clock.now())


async def _technology(
    session: AsyncSession, tenant_id: str, tech_id: str, snapshot: str | None = None
) -> Technology:
    """The technology's row (as of `snapshot` when given), or the tool's `not_found`."""
    if snapshot is None:
        row = await technologies.get(session, tenant_id=tenant_id, tech_id=tech_id)
    else:
        row = await history.get(session, tenant_id=tenant_id, tech_id=tech_id, snapshot=snapshot)
    if row is None:
        raise ToolError("not_found", "no technology with that id in this radar")
    return row


class SearchTechnologies(_RadarTool):
    spec = SEARCH_SPEC

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        if not str(arguments.get("query", "")).strip():
            return "query: must contain more than whitespace"
        return None

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        query = {
            "tenant_id": context.tenant_id,
            "query": arguments["query"].strip(),
            "ring": arguments.get("ring"),
            "limit": arguments.get("limit", 5),
        }
        if context.snapshot is None:
            # One statement on its own, on the AUTOCOMMIT engine: no session.
            rows, total = await technologies.search(self._sessions.kw["bind"], **query)
        else:
            async with self._sessions() as session:
                rows, total = await history.search(session, snapshot=context.snapshot, **query)
        items = [
            {
                "id": r.id,
                "name": r.name,
                "category": r.category,
                "ring": r.ring,
                "summary": _summary(r.description),
            }
            for r in rows
        ]
        version = str(max(r.version for r in rows)) if rows else None
        return ToolResult({"items": items, "total": total}, version, self._observed(context))


class GetTechnology(_RadarTool):
    spec = GET_SPEC

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        tech_id = arguments["technology_id"]
        async with self._sessions() as session:
            row = await _technology(session, context.tenant_id, tech_id, context.snapshot)
        output = {
            "id": row.id,
            "name": row.name,
            "category": row.category,
            "ring": row.ring,
            "description": row.description,
            "version": row.version,
            "updated_at": rfc3339(row.updated_at),
        }
        return ToolResult(output, str(row.version), self._observed(context))


class MoveTechnologyRing(_RadarTool):
    """The radar's one write: previewed, then a conditional update on the row's version,
    recorded once per operation id in a ledger that also answers status lookups."""

    spec = MOVE_SPEC
    looks_up = True

    async def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> PreviewBody:
        async with self._sessions() as session:
            row = await _technology(session, context.tenant_id, arguments["technology_id"])
        target = arguments["ring"]
        if row.ring == target:
            raise ToolError("no_change", f"{row.name} is already in {target}")
        return PreviewBody(
            summary=f"Move {row.name} from {row.ring} to {target}",
            impact={
                "technology_id": row.id,
                "name": row.name,
                "ring": {"before": row.ring, "after": target},
                "rationale": arguments["rationale"],
            },
            cost_usd=0.0,
            resource_version=str(row.version),
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        if context.preview is None or context.preview.resource_version is None:
            raise ToolError("not_approved", "this tool runs only as an approved commit")
        tech_id = arguments["technology_id"]
        async with self._sessions() as session:
            result, _ = await technologies.move(
                session,
                tenant_id=context.tenant_id,
                tech_id=tech_id,
                ring=arguments["ring"],
                expected_version=int(context.preview.resource_version),
                operation_id=context.operation_id,
                now=self._clock.now(),
            )
            if result is None:
                # Another attempt of this operation may have committed meanwhile: the
                # ledger, read afresh, says so; else the row itself moved on.
                result = await technologies.operation(
                    session, tenant_id=context.tenant_id, operation_id=context.operation_id
                )
            if result is None:
                await _technology(session, context.tenant_id, tech_id)  # gone: not_found
                raise ToolError(
                    "version_conflict", "the technology changed since the preview was made"
                )
        return ToolResult(dict(result), str(result["version"]), self._observed())

    async def status(self, context: ToolContext, timeout_s: float) -> OperationStatus:
        async with self._sessions() as session:
            result = await technologies.operation(
                session, tenant_id=context.tenant_id, operation_id=context.operation_id
            )
        if result is None:
            return OperationStatus("unknown")
        return OperationStatus(
            "succeeded", ToolResult(dict(result), str(result["version"]), self._observed())
        )


def radar_tools(sessions: async_sessionmaker[AsyncSession], clock: Clock) -> dict[str, Tool]:
    return {
        t.spec.name: t
        for t in (
            SearchTechnologies(sessions, clock),
            GetTechnology(sessions, clock),
            MoveTechnologyRing(sessions, clock),
        )
    }
