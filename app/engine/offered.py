"""Before a moment that reads a tool's spec (a run's exposure, a model step, an execution,
a commit's gates, the catalog), the lists of the servers behind its tools are read if they
never were or a failure made them stale: "read on first need" (SPEC §4 "MCP tools"). A
server that cannot answer leaves its tools unlisted, which the gates refuse
(`tool_unavailable`); nothing here raises.

A tool offered by a server has an async `ready()` (`adapters.mcp_tools.McpTool`); asked
with `getattr` rather than a runtime protocol check, which costs more on every step of
every run than the rest of this module."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable


async def ready(tools: Iterable[object]) -> None:
    waits = [ready() for tool in tools if (ready := getattr(tool, "ready", None)) is not None]
    if waits:
        await asyncio.gather(*waits)
