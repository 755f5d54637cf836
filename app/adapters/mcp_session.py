"""One MCP server as this process sees it (SPEC §4 "MCP tools"): one client session of the
official SDK over streamable HTTP, reused by every call and opened again after a failure,
and the server's tool list, read when first needed and again after a failure.

The SDK keeps a session inside an anyio task group, which one task must enter and leave:
a task of its own (`_hold`) holds each session open until it fails or is dropped, and
calls made from any task go through it.

A server that cannot be reached costs one warning until it answers again, never one per
call, and is asked again at most every `retry_s` seconds (`TOOLGATE_MCP_RETRY_S`); nothing
about it stops the service from starting or its other tools from working. Nothing of its
URL, its headers or an exception's text is logged or leaves this module."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Tool
from mcp_types.jsonrpc import CONNECTION_CLOSED, REQUEST_TIMEOUT

from app.config.tool_configs import McpServerConfig

log = logging.getLogger(__name__)

#: A tool list longer than this many pages is cut: a server that pages forever cannot
#: hold a step.
MAX_PAGES = 20
#: JSON-RPC errors that are the connection's, not the server's answer.
_TRANSPORT_CODES = frozenset({CONNECTION_CLOSED, REQUEST_TIMEOUT})


class NotSent(Exception):
    """No session could be opened: the call provably never left."""


class Unanswered(Exception):
    """The call may have reached the server, and no answer came."""


class Refused(Exception):
    """The server answered the call with a protocol error (not a tool result)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class McpServer:
    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        retry_s: float,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self.name = name
        self.retry_s = retry_s
        self.timeout_s = config.timeout_s
        self._url = config.url
        # A variable that is unset sends no header: the server's answer says what is missing.
        self._headers = {h: env[v] for h, v in config.headers_env.items() if v in env}
        #: The server's tools by name, as last read (None: never read in this process).
        self.tools: dict[str, Tool] | None = None
        #: Bumped by every read of the list, so that specs built from it are rebuilt.
        self.version = 0
        self._stale = True
        self._failed_at: float | None = None
        self._down = False
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None
        self._opening = asyncio.Lock()
        self._listing = asyncio.Lock()

    async def ready(self) -> None:
        """Reads the tool list if it was never read or a failure made it stale (at most
        every `retry_s` while the server cannot be reached); never raises."""
        if not self._stale or self._waiting():
            return
        async with self._listing:
            if not self._stale or self._waiting():
                return
            try:
                client = await self._session()
                tools = await asyncio.wait_for(_list(client), self.timeout_s)
            except Exception:
                self._unreachable()
                self.drop()
                return
            self.tools, self._stale, self._failed_at = tools, False, None
            self.version += 1
            if self._down:
                self._down = False
                log.info("MCP server %s answers again; its tools are listed", self.name)

    async def call(
        self, tool: str, arguments: Mapping[str, Any], meta: dict[str, Any], timeout_s: float
    ) -> CallToolResult:
        """One `tools/call`. Raises NotSent, Unanswered or Refused."""
        try:
            client = await self._session()
        except Exception:
            self._unreachable()
            raise NotSent() from None
        try:
            async with asyncio.timeout(timeout_s):
                return await client.call_tool(tool, dict(arguments), meta=meta)  # type: ignore[arg-type]
        except MCPError as error:
            self._stale = True  # the list may be what changed: read it again
            if error.code in _TRANSPORT_CODES:
                self.drop()
                raise Unanswered() from None
            raise Refused(error.error.message) from None
        except Exception:
            self._stale = True
            self.drop()
            raise Unanswered() from None

    def drop(self) -> None:
        """Lets the current session go; the next need opens another."""
        self._client = None
        if self._stop is not None:
            self._stop.set()
            self._stop = None

    async def close(self) -> None:
        holder = self._holder
        self.drop()
        if holder is not None and not holder.done():
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)

    def _waiting(self) -> bool:
        failed = self._failed_at
        return failed is not None and asyncio.get_running_loop().time() - failed < self.retry_s

    def _unreachable(self) -> None:
        self._stale = True
        self._failed_at = asyncio.get_running_loop().time()
        if not self._down:
            self._down = True
            log.warning(
                "MCP server %s cannot be reached; its tools are unavailable until it answers",
                self.name,
            )

    async def _session(self) -> Client:
        if self._client is not None:
            return self._client
        async with self._opening:
            if self._client is not None:
                return self._client
            opened: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            # Read once here, so that an opening given up on is not reported as unread.
            opened.add_done_callback(lambda done: done.cancelled() or done.exception())
            stop = asyncio.Event()
            holder = asyncio.create_task(self._hold(opened, stop), name=f"mcp:{self.name}")
            self._holder = holder
            try:
                client = await asyncio.wait_for(asyncio.shield(opened), self.timeout_s)
            except BaseException:
                holder.cancel()
                raise
            self._client, self._stop = client, stop
            return client

    async def _hold(self, opened: asyncio.Future[Client], stop: asyncio.Event) -> None:
        timeout = httpx2.Timeout(self.timeout_s, connect=min(5.0, self.timeout_s))
        try:
            async with httpx2.AsyncClient(headers=self._headers, timeout=timeout) as http:
                transport = streamable_http_client(self._url, http_client=http)
                async with Client(transport, cache=None) as client:
                    opened.set_result(client)
                    await stop.wait()
        except BaseException as error:  # the SDK's task group raises groups
            if not opened.done():
                opened.set_exception(NotSent())
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            if stop is self._stop:
                self._client, self._stop = None, None


async def _list(client: Client) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.update((tool.name, tool) for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def mcp_servers(configs: Mapping[str, McpServerConfig], *, retry_s: float) -> dict[str, McpServer]:
    return {name: McpServer(name, config, retry_s=retry_s) for name, config in configs.items()}
