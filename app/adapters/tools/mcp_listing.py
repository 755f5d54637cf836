"""What an MCP server's tool list says of the tools the config uses: each one's declaration
as the model would see it, with its hash (`domain.tools.mcp_declarations.Listed`).

Built off the event loop (`McpServer.off_loop`): a list of up to `MAX_LIST_BYTES` is walked,
encoded and hashed here, which takes seconds for the largest (2.6 s for 10 MB on the loop,
before the list was bounded at 4 MiB)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mcp import Client
from mcp_types import Tool

from app.domain.tools.mcp_declarations import Listed, declaration, listed
from app.domain.tools.specs import scan

#: A tool list longer than this many pages is cut: a server that pages forever cannot
#: hold a step.
MAX_PAGES = 20


def declared_of(tools: Mapping[str, Tool], wanted: Iterable[str]) -> dict[str, Listed | None]:
    """The declarations of the `wanted` tools `tools` lists (see `declared`)."""
    return {name: declared(tools[name]) for name in wanted if name in tools}


def declared(tool: Tool) -> Listed | None:
    """The tool's declaration as the model would see it (None when it is not JSON that
    can be stored: a NaN, an infinity, a NUL or a lone surrogate somewhere in it)."""
    annotations = (
        None
        if tool.annotations is None
        else tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
    )
    declared = declaration(
        tool.name, tool.description, tool.input_schema, tool.output_schema, annotations
    )
    _, nan, unstorable = scan(declared)
    if nan or unstorable:
        return None
    try:
        return listed(declared)
    except (ValueError, RecursionError):
        return None


async def list_tools(client: Client) -> dict[str, Tool]:
    """Every tool the server lists, page by page (at most `MAX_PAGES`)."""
    tools: dict[str, Tool] = {}
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.update((tool.name, tool) for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools
