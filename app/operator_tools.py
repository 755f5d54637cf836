"""The operator's tools a process serves — HTTP tools, MCP tools and agent tools — with what
they call out through (one HTTP client, one session per MCP server), and how a run's pinned
declaration of one is built again under this code (`engine.tools.pinned_config`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import ValidationError

from app.adapters.tools.http import HttpTool, client_timeouts, http_tools
from app.adapters.tools.mcp_session import McpServer, mcp_servers
from app.adapters.tools.mcp_tools import McpTool, mcp_tools
from app.config.files import AgentToolConfig, AppConfig, HttpToolConfig, McpToolConfig
from app.config.settings import Settings
from app.domain.ports import Clock, Tool
from app.domain.tools.pinning import AGENT, MCP
from app.engine import off_loop
from app.engine.lifecycle.delegation import AgentTool, Delegation, agent_tools
from app.engine.tools.mcp_declarations import Declarations
from app.engine.tools.pinned_config import OperatorToolFactory


@dataclass(frozen=True)
class Outside:
    """What operator tools call out through, and where MCP servers pin declarations."""

    http: httpx.AsyncClient
    servers: Mapping[str, McpServer]
    declarations: Declarations

    async def close(self) -> None:
        await self.http.aclose()
        await asyncio.gather(*(server.close() for server in self.servers.values()))


def outside(settings: Settings, config: AppConfig, clock: Clock) -> Outside:
    # One client for every HTTP tool call, with explicit timeouts; each call also gets
    # min(its own timeout, the time its run has left) from the executor.
    client = httpx.AsyncClient(
        timeout=client_timeouts(),
        limits=httpx.Limits(max_connections=settings.tool_concurrency * 4),
        follow_redirects=False,
    )
    # One session a server, opened when first needed: a server that is down holds neither
    # start-up nor any other tool. Declarations are pinned in the database, once the
    # runtime exists (`Declarations.attach`).
    declarations = Declarations()
    # What a server lists is checked in the engine's check threads, whatever its size.
    checks = functools.partial(off_loop.run, off_loop.THRESHOLD)
    servers = mcp_servers(
        config.mcp_servers,
        retry_s=settings.mcp_retry_s,
        pins=declarations,
        off_loop=checks,
        monotonic=clock.monotonic,
    )
    return Outside(client, servers, declarations)


def operator_tools(config: AppConfig, out: Outside, delegation: Delegation) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    tools.update(http_tools(config.tools, out.http))
    tools.update(mcp_tools(config.tools, out.servers))
    tools.update(agent_tools(config.tools, delegation))
    return tools


def rebuilder(out: Outside, delegation: Delegation) -> OperatorToolFactory:
    """Builds an operator's tool from a pinned declaration (None when this code no longer
    reads it, or its MCP server left the config)."""

    def build(name: str, declared: Mapping[str, Any]) -> Tool | None:
        try:
            if declared.get("kind") == AGENT:
                return AgentTool(name, AgentToolConfig.model_validate(declared), delegation)
            if declared.get("kind") == MCP:
                mcp = McpToolConfig.model_validate(declared)
                server = out.servers.get(mcp.server)
                return None if server is None else McpTool(name, mcp, server)
            return HttpTool(name, HttpToolConfig.model_validate(declared), out.http)
        except ValidationError:
            return None

    return build
