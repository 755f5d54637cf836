"""Before a moment that reads a tool's spec (a run's exposure, a model step, an execution,
a commit's gates, the catalog), the lists of the servers behind its tools are read if they
never were, are older than their `relist_s` or a failure made them stale, and their
declarations settled with the pinned ones: "read on first need" (SPEC §4 "MCP tools"). A
server that cannot answer, or a declaration held, leaves its tools unlisted, which the
gates refuse (`tool_unavailable`); nothing here raises. `serving` is the one lookup of a tool that a
call may still be made with.

A tool offered by a server has an async `ready()` (`adapters.tools.mcp_tools.McpTool`); asked
with `getattr` rather than a runtime protocol check, which costs more on every step of
every run than the rest of this module."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

from app.domain.ports import Tool


async def ready(tools: Iterable[object]) -> None:
    waits = [ready() for tool in tools if (ready := getattr(tool, "ready", None)) is not None]
    if waits:
        await asyncio.gather(*waits)


def serving(tools: Mapping[str, Tool], name: str) -> Tool | None:
    """The tool that serves `name`, or None when it is gone: left the config, or (an MCP
    tool) its server's list was read and lacks it. A server merely down withdraws nothing:
    its tools are refused `tool_unavailable` by the gates until it answers again."""
    tool = tools.get(name)
    return None if tool is None or getattr(tool, "withdrawn", False) else tool
