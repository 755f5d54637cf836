"""Tools served by MCP servers (SPEC §4 "MCP tools"), under the same gates as an HTTP tool:
the executor decides retries, timeouts and what an unknown outcome means, exactly as for
HTTP tools; this adapter only says what a `tools/call` answered.

A tool's description and schemas are its server's (`tools/list`) unless the operator
declared their own; the server's input schema is closed (`additionalProperties: false`),
so an argument the schema does not name is refused before anything is sent. A declared
input schema narrows the server's: arguments must satisfy both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_types import CallToolResult, TextContent

from app.adapters.mcp_session import McpServer, NotSent, Refused, Unanswered
from app.config.tool_configs import McpToolConfig
from app.domain.approvals import MAX_SUMMARY, PreviewBody
from app.domain.errors import MAX_MESSAGE
from app.domain.ports import ToolContext
from app.domain.tools import (
    SentUnanswered,
    ToolError,
    ToolResult,
    ToolSpec,
    canonical_json,
    surely_valid,
    validator_for,
)

#: Where the operation id travels: MCP has no Idempotency-Key header (SPEC §4).
OPERATION_ID_META = "toolgate/operation_id"
#: A tool whose server's list is unknown: nothing is valid until the list is read.
_UNKNOWN_INPUT: dict[str, Any] = {"type": "object", "additionalProperties": False}


class McpTool:
    def __init__(self, name: str, config: McpToolConfig, server: McpServer) -> None:
        self.name = name
        self.server = server
        self._config = config
        self._remote = config.mcp_tool or name
        self._built: tuple[int, ToolSpec, dict[str, Any]] | None = None

    @property
    def spec(self) -> ToolSpec:
        """The tool as its server's list last said."""
        return self._current()[1]

    def _current(self) -> tuple[int, ToolSpec, dict[str, Any]]:
        # Rebuilt only when the list is read again: validators are built once per schema
        # object, so once per list.
        version = self.server.version
        if self._built is None or self._built[0] != version:
            self._built = (version, *self._build())
        return self._built

    def _build(self) -> tuple[ToolSpec, dict[str, Any]]:
        config, listed = self._config, self._listed()
        served_input = _closed(listed.input_schema) if listed is not None else _UNKNOWN_INPUT
        served_output = listed.output_schema if listed is not None else None
        description = config.description or (listed and listed.description) or self._remote
        spec = config.gated_spec(
            self.name,
            description,
            config.input_schema or served_input,
            config.output_schema or served_output,
            listed=listed is not None and not self.server.down,
        )
        return spec, served_input

    def _listed(self) -> Any:
        tools = self.server.tools
        return None if tools is None else tools.get(self._remote)

    @property
    def withdrawn(self) -> bool:
        """Its server's list was read and lacks it: a run holding it ends as when a tool
        leaves the config (a server that cannot be reached withdraws nothing)."""
        tools = self.server.tools
        return tools is not None and self._remote not in tools

    async def ready(self) -> None:
        """Reads the server's tool list when it was never read or is stale."""
        await self.server.ready()

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        """A declared input schema narrows the server's: the server's must hold too."""
        _, spec, served = self._current()
        if self._config.input_schema is None or not spec.listed:
            return None
        if surely_valid(served, arguments):
            return None
        error = next(iter(validator_for(served).iter_errors(dict(arguments))), None)
        return None if error is None else "the arguments do not fit the tool's server"

    async def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> PreviewBody:
        """Made by the service itself: the tool and its arguments (no impact, no
        resource version); the commit sends exactly these arguments."""
        summary = f"{self.name} {canonical_json(dict(arguments))}"
        return PreviewBody(summary=summary[:MAX_SUMMARY], impact={}, cost_usd=self.spec.cost_usd)

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        meta = {OPERATION_ID_META: context.operation_id}
        timeout_s = context.timeout_s or self.spec.timeout_s
        try:
            result = await self.server.call(self._remote, arguments, meta, timeout_s)
        except NotSent:
            raise ToolError(
                "unavailable", "the tool's server could not be reached", retryable=True
            ) from None
        except Unanswered:
            raise SentUnanswered() from None
        except Refused:
            # Its words may be the SDK's, not the server's: a fixed message, never text
            # that could carry an address or an answer.
            raise ToolError("tool_error", "the tool's server refused the call") from None
        return _result(result)


def _closed(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The server's input schema with unknown arguments refused (a model must not send
    what the server never declared)."""
    if schema.get("type") != "object":
        return _UNKNOWN_INPUT
    return {**schema, "additionalProperties": False}


def _text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def _result(result: CallToolResult) -> ToolResult:
    if result.is_error:
        # The server's own words go back to the model, cut; never retried (SPEC §4).
        message = _text(result)[:MAX_MESSAGE] or "the tool reported an error"
        raise ToolError("tool_error", message)
    if result.structured_content is not None:
        return ToolResult(result.structured_content)
    return ToolResult({"text": _text(result)})


def mcp_tools(configs: Mapping[str, Any], servers: Mapping[str, McpServer]) -> dict[str, McpTool]:
    """The MCP tools among the config's operator tools."""
    return {
        name: McpTool(name, config, servers[config.server])
        for name, config in configs.items()
        if isinstance(config, McpToolConfig)
    }
