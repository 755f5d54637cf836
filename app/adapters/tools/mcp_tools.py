"""Tools served by MCP servers (SPEC §4 "MCP tools"), under the same gates as an HTTP tool:
the executor decides retries, timeouts and what an unknown outcome means, exactly as for
HTTP tools; this adapter only says what a `tools/call` answered.

A tool's description and schemas are its server's unless the operator declared their own:
those of its pinned declaration (`domain.tools.mcp_declarations`), and the tool is offered only
while its server lists exactly that declaration and nothing is pending. The server's
input schema is closed (`additionalProperties: false`), so an argument the schema does not
name is refused before anything is sent. A declared input schema narrows the server's:
arguments must satisfy both. An answer is read up to its limit (`mcp_answers`); past it,
the call's output is refused `output_too_large`, as an HTTP tool's is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_types import CallToolResult, TextContent

from app.adapters.tools.mcp_session import (
    McpServer,
    NotSent,
    ServerRefused,
    ServerUnanswered,
    TooLarge,
)
from app.config.tool_configs import McpToolConfig
from app.domain.approvals.previews import MAX_SUMMARY, PreviewBody
from app.domain.errors import MAX_MESSAGE
from app.domain.ports import ToolContext
from app.domain.tools import schema_validator
from app.domain.tools.specs import (
    OutputRefused,
    SentUnanswered,
    ToolError,
    ToolResult,
    ToolSpec,
    canonical_json,
)

#: A tool whose server's list is unknown: nothing is valid until the list is read.
_UNKNOWN_INPUT: dict[str, Any] = {"type": "object", "additionalProperties": False}


class McpTool:
    def __init__(self, name: str, config: McpToolConfig, server: McpServer) -> None:
        self.name = name
        self.server = server
        self._config = config
        self._remote = config.mcp_tool or name
        self._built: tuple[int, ToolSpec, dict[str, Any]] | None = None
        #: The server's version whose schemas' checks were last prepared.
        self._prepared: int | None = None
        server.want(self._remote)

    @property
    def spec(self) -> ToolSpec:
        """The tool as its pinned declaration says, offered while its server lists it."""
        return self._current()[1]

    @property
    def pinned_as(self) -> tuple[str, str]:
        """Its declaration's key: the server, and the server's name for the tool."""
        return self.server.name, self._remote

    @property
    def pending_declaration(self) -> dict[str, Any] | None:
        """The declaration held for an admin's acceptance, as `GET /v1/tools` shows it."""
        pin = self.server.pins.get(self._remote)
        if pin is None or pin.pending is None:
            return None
        pending = pin.pending
        return {
            "declaration_hash": pin.pending_hash,
            "description": pending.get("description"),
            "input_schema": pending.get("input_schema"),
            "output_schema": pending.get("output_schema"),
            "annotations": pending.get("annotations"),
            "held_for": list(pin.held_for),
            "seen_at": pin.pending_since,
        }

    def _current(self) -> tuple[int, ToolSpec, dict[str, Any]]:
        # Rebuilt only when the list is read or settled again: validators are built once
        # per schema object, so once per list.
        version = self.server.version
        if self._built is None or self._built[0] != version:
            self._built = (version, *self._build())
        return self._built

    def _build(self) -> tuple[ToolSpec, dict[str, Any]]:
        config, server = self._config, self.server
        seen, pin = server.listed.get(self._remote), server.pins.get(self._remote)
        pinned = None if pin is None else pin.pinned
        served_input = _closed(pinned["input_schema"]) if pinned else _UNKNOWN_INPUT
        served_output = pinned["output_schema"] if pinned else None
        description = config.description or (pinned and pinned["description"]) or self._remote
        offered = not server.down and seen is not None and pin is not None and pin.serves(seen.hash)
        spec = config.gated_spec(
            self.name,
            description,
            config.input_schema or served_input,
            config.output_schema or served_output,
            listed=offered,
        )
        return spec, served_input

    @property
    def withdrawn(self) -> bool:
        """Its server's list was read and lacks it: a run holding it ends as when a tool
        leaves the config (a server that cannot be reached withdraws nothing)."""
        tools = self.server.tools
        return tools is not None and self._remote not in tools

    async def ready(self) -> None:
        """Reads the server's tool list when it was never read or is stale, and prepares
        the checks of the schemas it makes the tool's off the event loop: a server's
        patterns can take seconds to compile, and they are compiled on first use."""
        await self.server.ready()
        version, spec, served = self._current()
        if self._prepared != version:
            await self.server.off_loop(_prepare, spec, served)
            self._prepared = version

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        """A declared input schema narrows the server's: the server's must hold too."""
        _, spec, served = self._current()
        if self._config.input_schema is None or not spec.listed:
            return None
        if schema_validator.fits(served, dict(arguments)):
            return None
        return "the arguments do not fit the tool's server"

    async def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> PreviewBody:
        """Made by the service itself: the tool and its arguments (no impact, no
        resource version); the commit sends exactly these arguments."""
        summary = f"{self.name} {canonical_json(dict(arguments))}"
        return PreviewBody(summary=summary[:MAX_SUMMARY], impact={}, cost_usd=self.spec.cost_usd)

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        spec = self.spec
        timeout_s = context.timeout_s or spec.timeout_s
        try:
            result = await self.server.call(
                self._remote, arguments, context.operation_id, timeout_s, spec.max_output_bytes
            )
        except NotSent:
            raise ToolError(
                "unavailable", "the tool's server could not be reached", retryable=True
            ) from None
        except ServerUnanswered:
            raise SentUnanswered() from None
        except ServerRefused:
            # Its words may be the SDK's, not the server's: a fixed message, never text
            # that could carry an address or an answer.
            raise ToolError("tool_error", "the tool's server refused the call") from None
        except TooLarge:
            # Answered (a side effect took effect): its output is not kept, as an HTTP
            # tool's past the same limit.
            raise OutputRefused(
                "output_too_large",
                f"the tool's answer is larger than {spec.max_output_bytes} bytes",
            ) from None
        return _result(result)


def _prepare(spec: ToolSpec, served: Mapping[str, Any]) -> None:
    for schema in (spec.input_schema, spec.output_schema, served):
        schema_validator.prepare(schema)


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
