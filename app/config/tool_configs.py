"""Operator tools as the YAML config declares them: HTTP tools (SPEC §4.1), agent tools
(child runs, SPEC §3.5) and MCP tools with their servers (SPEC §4 "MCP tools")."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from app.config.base import (
    EnvVarName,
    HttpUrl,
    Name,
    NonEmpty,
    NonNegFloat,
    PosFloat,
    PosInt,
    Strict,
    check_schema,
    object_input_schema,
)
from app.domain.tools.specs import Risk, ToolSpec


class _GatedTool(Strict):
    """The gates every operator tool that calls out passes (HTTP and MCP tools alike)."""

    # Lax for this one field: strict mode would take only Risk members, YAML gives strings.
    risk: Risk = Field(default=Risk.LOW, strict=False)
    requires_approval: bool  # default: risk == high, filled in by `_approval_default`
    approvals_required: PosInt = 1
    side_effects: bool = False
    idempotent: bool = False
    permissions: list[NonEmpty] = []
    timeout_s: PosFloat = 10.0
    concurrency_group: NonEmpty | None = None
    max_concurrency: PosInt | None = None
    cost_usd: NonNegFloat = 0.0
    max_output_bytes: PosInt = 65536
    max_attempts: PosInt = 3
    rate_limit_per_minute: PosInt | None = None
    enabled: bool = True
    external: bool = False  # outside the trust boundary: `argument_policy` checks its arguments

    @model_validator(mode="before")
    @classmethod
    def _approval_default(cls, data: Any) -> Any:
        # Resolved here so that every reader sees the effective value, not a tri-state.
        if isinstance(data, dict) and "requires_approval" not in data:
            return {**data, "requires_approval": data.get("risk") == Risk.HIGH.value}
        return data

    @field_validator("output_schema", check_fields=False)
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else check_schema(value)

    def gated_spec(
        self,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
        *,
        listed: bool = True,
    ) -> ToolSpec:
        # Every gate is a field of the same name on the spec: derived, never listed twice.
        gates = {field: getattr(self, field) for field in _GatedTool.model_fields}
        gates["permissions"] = tuple(self.permissions)
        return ToolSpec(
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            listed=listed,
            **gates,
        )


class HttpToolConfig(_GatedTool):
    """An operator-declared HTTP tool (SPEC §4, wire format §4.1)."""

    kind: Literal["http"]
    description: NonEmpty
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    url: HttpUrl
    preview_url: HttpUrl | None = None
    status_url: HttpUrl | None = None

    @field_validator("input_schema")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        return object_input_schema(value)

    def to_tool_spec(self, name: str) -> ToolSpec:
        return self.gated_spec(name, self.description, self.input_schema, self.output_schema)


class McpToolConfig(_GatedTool):
    """A tool served by an MCP server (`mcp_servers:`), under the same gates as an HTTP
    tool. Its description and schemas default to what the server lists (`tools/list`); a
    declared input schema narrows the server's, it never widens it."""

    kind: Literal["mcp"]
    server: Name
    mcp_tool: NonEmpty | None = None  # the server's name for it; default: this key
    description: NonEmpty | None = None
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None

    @field_validator("input_schema")
    @classmethod
    def _object_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else object_input_schema(value)


class McpServerConfig(Strict):
    """An MCP server speaking streamable HTTP (SPEC §4 `mcp_servers`)."""

    url: HttpUrl
    #: Header name → the environment variable its value comes from (never the file).
    headers_env: dict[NonEmpty, EnvVarName] = {}
    timeout_s: PosFloat = 10.0
    #: The tool list is read again at most this often (and after a failure): a changed
    #: declaration is held until an admin accepts it (SPEC §4, pinned declarations).
    relist_s: PosFloat = 300.0


#: An agent tool's input when its declaration gives no schema: the child run's input text.
DEFAULT_AGENT_INPUT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["input"],
    "properties": {"input": {"type": "string", "minLength": 1, "maxLength": 100_000}},
}


class AgentToolConfig(Strict):
    """A tool that delegates to another agent as a child run (SPEC §3.5): the call's
    arguments are the child's input, its outcome the child's final output or error."""

    kind: Literal["agent"]
    agent: Name
    description: NonEmpty
    input_schema: dict[str, Any] = DEFAULT_AGENT_INPUT

    @field_validator("input_schema")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        return object_input_schema(value)

    def to_tool_spec(self, name: str) -> ToolSpec:
        # A side effect (it spends the parent's budgets), deduplicated by its operation id
        # (one child per call); its time is the parent's deadline, not a timeout of its own.
        return ToolSpec(
            name=name,
            description=self.description,
            input_schema=self.input_schema,
            side_effects=True,
            idempotent=True,
            timeout_s=AGENT_TOOL_TIMEOUT_S,
        )


#: An agent tool's attempt lasts until the parent's deadline (the executor takes the
#: smaller of this and the time left): a year stands for "no timeout of its own".
AGENT_TOOL_TIMEOUT_S = 365 * 86_400.0

ToolConfig = Annotated[
    HttpToolConfig | AgentToolConfig | McpToolConfig, Field(discriminator="kind")
]
