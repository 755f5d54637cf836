"""One MCP server as this process sees it (SPEC §4 "MCP tools"): one client session of the
official SDK over streamable HTTP, reused by every call and opened again after a failure,
and the server's tool list, read when first needed, again at most every `relist_s`
seconds and after a failure.

Each listing of a tool the config uses is settled with the pinned declarations (SPEC §4
"MCP declarations are pinned", `DeclarationPins`): `pins` says, per tool, what is pinned
and what is pending, and a tool is served only while its server lists exactly its pinned
declaration (`domain.tools.mcp_declarations`). When another process changes a pin, the pins
are read again at once and the list as soon as `retry_s` allows; a list read before the
change changes no pin (it may be older than the declaration the change was about).

The SDK keeps a session inside an anyio task group, which one task must enter and leave:
a task of its own (`_hold`) holds each session open until it fails or is dropped, and
calls made from any task go through it. Answers are read through `mcp_answers`, which
cuts one past its limit.

A server that cannot be reached costs one warning until it answers again, never one per
call, and is asked again at most every `retry_s` seconds (`TOOLGATE_MCP_RETRY_S`); nothing
about it stops the service from starting or its other tools from working. Nothing of its
URL, its headers or an exception's text is logged or leaves this module."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Tool
from mcp_types.jsonrpc import CONNECTION_CLOSED, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND

from app.adapters.tools.mcp_answers import (
    LIST,
    MAX_LIST_BYTES,
    OPERATION_ID_META,
    BoundedAnswers,
    Limit,
    answer_limit,
)
from app.adapters.tools.mcp_listing import declared_of, list_tools
from app.config.tool_configs import McpServerConfig
from app.domain.errors import ToolgateError
from app.domain.ports import DeclarationPins
from app.domain.tools.mcp_declarations import Listed, Pin

log = logging.getLogger(__name__)

#: Runs `work(*args)` off the event loop: the engine's check threads, as the composition
#: root gives them (`engine.off_loop`), or a worker thread.
OffLoop = Callable[..., Awaitable[Any]]


class NotSent(ToolgateError):
    """No session could be opened (or the server is waited out): the call never left."""


class ServerUnanswered(ToolgateError):
    """The call may have reached the server, and no answer it could be judged by came."""


class ServerRefused(ToolgateError):
    """The server refused the call before acting on it (unknown tool, invalid params)."""


class TooLarge(ToolgateError):
    """The server answered past the call's limit; the rest of the answer was not read."""


#: JSON-RPC errors that say the server refused a request without acting on it.
_REFUSALS = frozenset({INVALID_PARAMS, METHOD_NOT_FOUND})
#: Errors that say the session is gone: closed under the call, or ended by the server.
_SESSION_GONE = frozenset({CONNECTION_CLOSED, INVALID_REQUEST})
#: What the SDK's streams raise once the session under them is closed.
_BROKEN = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


class McpServer:
    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        retry_s: float,
        pins: DeclarationPins,
        off_loop: OffLoop = asyncio.to_thread,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.off_loop = off_loop
        #: The clock of `relist_s` and `retry_s` (the app's: tests move it).
        self._monotonic = monotonic
        self.retry_s = retry_s
        self.relist_s = config.relist_s
        self.timeout_s = config.timeout_s
        self._url = config.url
        # A variable that is unset sends no header: the server's answer says what is missing.
        env = os.environ
        self._headers = {h: env[v] for h, v in config.headers_env.items() if v in env}
        #: The server's tools by name, as last read (None: never read in this process).
        self.tools: dict[str, Tool] | None = None
        #: The declarations of the tools the config uses, as last listed (None: one that is
        #: not JSON, which is never served).
        self.listed: dict[str, Listed | None] = {}
        #: Their pins, as last settled.
        self.pins: dict[str, Pin] = {}
        #: Bumped whenever the list is read, its pins settled, or the server goes down or
        #: comes back, so that specs built from what is known of it are rebuilt.
        self.version = 0
        #: Not reached at its last try: its tools are unavailable until it answers.
        self.down = False
        self._pin_store = pins
        self._wanted: set[str] = set()
        self._stale = True
        self._unsettled = False
        #: Announcements that a pin of this server changed elsewhere (or that some may
        #: have been missed), and how many of them came before the list was last read: a
        #: list read before the last one may be older than what it announced, and no pin
        #: is changed from it (`_settle`).
        self._notices = 0
        self._listed_after = 0
        self._listed_at: float | None = None
        self._failed_at: float | None = None
        self._settle_failed_at: float | None = None
        self._limits: dict[str, Limit] = {}
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._holders: set[asyncio.Task[None]] = set()
        self._opening = asyncio.Lock()
        self._listing = asyncio.Lock()
        pins.watch(name, self._pins_changed)

    def want(self, tool: str) -> None:
        """`tool` (the server's name for it) is used by the config: its declaration is
        pinned. One wanted after the list was read is settled at the next need."""
        if tool in self._wanted:
            return
        self._wanted.add(tool)
        if self.tools is not None and tool in self.tools:
            self._unsettled = True  # its declaration is built, off the loop, then settled

    async def ready(self) -> None:
        """Reads the tool list if it was never read, is older than `relist_s` or a failure
        made it stale (at most every `retry_s` while the server cannot be reached), and
        settles the pins of what it lists; never raises."""
        if not self._due():
            return
        async with self._listing:
            if not self._due():
                return
            if self._list_due() and not await self._relist():
                return
            if self._unsettled and not self._waiting(self._settle_failed_at):
                await self._settle()

    def _due(self) -> bool:
        return self._list_due() or (self._unsettled and not self._waiting(self._settle_failed_at))

    def _list_due(self) -> bool:
        if self._waiting(self._failed_at):
            return False
        listed_at = self._listed_at
        if self.tools is None or listed_at is None:
            return True
        age = self._monotonic() - listed_at
        # Made stale by a failure, or by another process's pin: no sooner than retry_s
        # after the last read, so that a server cannot have itself listed on every call.
        return age >= self.relist_s or (self._stale and age >= min(self.retry_s, self.relist_s))

    async def _relist(self) -> bool:
        # One reading's pages share one limit (the listing lock makes readings one at a
        # time); a list past it is not read, as a server that cannot be reached.
        self._limits[LIST] = Limit(MAX_LIST_BYTES)
        notices = self._notices
        try:
            client = await self._session(self.timeout_s)
            tools = await asyncio.wait_for(list_tools(client), self.timeout_s)
            # Walked, encoded and hashed off the loop: a list may be megabytes.
            listed = await self.off_loop(declared_of, tools, set(self._wanted))
        except Exception:
            self.drop()
            self._unreachable()
            return False
        finally:
            del self._limits[LIST]
        self.tools, self._stale, self._failed_at = tools, False, None
        self._listed_at = self._monotonic()
        self.listed, self._listed_after = listed, notices
        self._unsettled = True
        self.version += 1
        if self.down:
            self.down = False
            log.info("MCP server %s answers again; its tools are listed", self.name)
        return True

    async def _settle(self) -> None:
        tools = self.tools or {}
        missing = [name for name in self._wanted if name in tools and name not in self.listed]
        if missing:  # wanted since the list was read
            self.listed = {**self.listed, **await self.off_loop(declared_of, tools, missing)}
        known = {name: seen for name, seen in self.listed.items() if seen is not None}
        # Read before a pin changed elsewhere, the list may be older than the declaration
        # another replica just held, or an admin accepted: it changes no pin (it would
        # clear the one or hold the other again) until it is read again.
        stale = self._listed_after != self._notices
        try:
            settled = await self._pin_store.settle(self.name, known, stale=stale)
            self.pins = {**self.pins, **settled}
        except Exception:
            # Unsettled, the pins kept are compared with the new listing: a declaration
            # that changed is not served until it is settled.
            if self._settle_failed_at is None:
                log.warning("the declarations of MCP server %s cannot be settled now", self.name)
            self._settle_failed_at = self._monotonic()
            self.version += 1
            return
        self._unsettled, self._settle_failed_at = False, None
        self.version += 1

    def _pins_changed(self) -> None:
        """A pin of this server may have changed (another process saw a listing, an admin
        accepted one, or the listener reconnected and may have missed either): the pins
        are read again at the next need, and the list as soon as `retry_s` allows."""
        self._notices += 1
        self._stale = True
        self._unsettled = self.tools is not None
        self._settle_failed_at = None

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        operation_id: str,
        timeout_s: float,
        max_output_bytes: int,
    ) -> CallToolResult:
        """One `tools/call`, its operation id in `_meta`, its answer read up to the limit
        of an output of `max_output_bytes`. Raises NotSent, ServerUnanswered, ServerRefused or
        TooLarge.

        Only a session that is gone is dropped: every call in flight shares it, and one
        call's timeout must not cost the others their answers."""
        if self._waiting(self._failed_at):
            raise NotSent()
        try:
            client = await self._session(min(self.timeout_s, timeout_s))
        except Exception:
            self._unreachable()
            raise NotSent() from None
        limit = self._limits[operation_id] = Limit(answer_limit(max_output_bytes))
        meta = {OPERATION_ID_META: operation_id}
        try:
            async with asyncio.timeout(timeout_s):
                result = await client.call_tool(tool, dict(arguments), meta=meta)  # type: ignore[arg-type]
        except TimeoutError:
            raise ServerUnanswered() from None
        except MCPError as error:
            if limit.exceeded:
                raise TooLarge() from None  # the session is whole: only this answer was cut
            self._stale = True  # the list may be what changed: read it again
            if error.code in _REFUSALS:
                raise ServerRefused() from None
            if error.code in _SESSION_GONE:
                self._lost(client)
            raise ServerUnanswered() from None  # an error the SDK made may follow a processed call
        except _BROKEN:
            self._stale = True
            self._lost(client)
            raise ServerUnanswered() from None
        except Exception:  # an answer the SDK could not read
            if limit.exceeded:
                raise TooLarge() from None
            self._stale = True
            raise ServerUnanswered() from None
        finally:
            if self._limits.get(operation_id) is limit:
                del self._limits[operation_id]
        if limit.exceeded:
            raise TooLarge()
        return result

    def drop(self) -> None:
        """Lets the current session go; the next need opens another."""
        self._client = None
        if self._stop is not None:
            self._stop.set()
            self._stop = None

    async def close(self) -> None:
        self.drop()
        holders = list(self._holders)
        for holder in holders:
            holder.cancel()
        await asyncio.gather(*holders, return_exceptions=True)

    def _lost(self, client: Client) -> None:
        if self._client is client:
            self.drop()

    def _waiting(self, failed: float | None) -> bool:
        return failed is not None and self._monotonic() - failed < self.retry_s

    def _unreachable(self) -> None:
        self._stale = True
        self._failed_at = self._monotonic()
        if not self.down:
            self.down = True
            self.version += 1
            log.warning(
                "MCP server %s cannot be reached; its tools are unavailable until it answers",
                self.name,
            )

    async def _session(self, timeout_s: float) -> Client:
        if self._client is not None:
            return self._client
        async with self._opening:
            if self._client is not None:
                return self._client
            opened: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            # Read once here, so that an opening given up on is not reported as unread.
            opened.add_done_callback(lambda done: done.cancelled() or done.exception())
            holder = asyncio.create_task(self._hold(opened), name=f"mcp:{self.name}")
            self._holders.add(holder)
            holder.add_done_callback(self._holders.discard)
            try:
                return await asyncio.wait_for(asyncio.shield(opened), timeout_s)
            except BaseException:
                holder.cancel()
                raise

    async def _hold(self, opened: asyncio.Future[Client]) -> None:
        stop = asyncio.Event()
        timeout = httpx2.Timeout(self.timeout_s, connect=min(5.0, self.timeout_s))
        try:
            # Every answer read through `BoundedAnswers`; no proxy from the environment,
            # whose transport would bypass it.
            bounded = BoundedAnswers(httpx2.AsyncHTTPTransport(), self._limits.get)
            async with httpx2.AsyncClient(
                headers=self._headers, timeout=timeout, transport=bounded, trust_env=False
            ) as http:
                transport = streamable_http_client(self._url, http_client=http)
                async with Client(transport, cache=None) as client:
                    # Outputs are checked by the service (against the declared schema or
                    # the listed one); the SDK's own check raises after the answer came,
                    # which would make an answered call look unanswered.
                    client.session.validate_tool_result = _answered  # type: ignore[method-assign]
                    self._client, self._stop = client, stop
                    opened.set_result(client)
                    await stop.wait()
        except BaseException:  # the SDK's task group raises groups
            if not opened.done():
                opened.set_exception(NotSent())
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # closed or given up on: end as asked
        finally:
            if self._stop is stop:
                self._client, self._stop = None, None


async def _answered(name: str, result: CallToolResult) -> None:
    """Takes a result as it came (see `_hold`)."""


def mcp_servers(
    configs: Mapping[str, McpServerConfig],
    *,
    retry_s: float,
    pins: DeclarationPins,
    off_loop: OffLoop = asyncio.to_thread,
    monotonic: Callable[[], float] = time.monotonic,
) -> dict[str, McpServer]:
    return {
        name: McpServer(
            name, config, retry_s=retry_s, pins=pins, off_loop=off_loop, monotonic=monotonic
        )
        for name, config in configs.items()
    }
