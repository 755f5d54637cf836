"""A small MCP server for tests: the official SDK's server over streamable HTTP, on a
loopback port, in the test's event loop. It records what each tool received (arguments,
the request's `_meta`, the headers) and counts side effects once per operation id, as a
tool server that dedupes would. A test may change what it lists of a tool at any moment
(`listed_as`), also from inside a call (`after_call`); its `flood` tool answers without
end (as JSON or as SSE), counting what it sent until the client goes away."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypedDict

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.support.backend import started


class Doc(TypedDict):
    title: str
    ring: str


class Ticket(TypedDict):
    ticket_id: str


@dataclass
class Seen:
    tool: str
    arguments: dict[str, Any]
    meta: dict[str, Any]


@dataclass
class FakeMcp:
    """What the server saw; `port` stays the same across restarts."""

    port: int = 0
    calls: list[Seen] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    #: Tickets opened, by operation id (one per id, however often it is sent).
    tickets: dict[str, str] = field(default_factory=dict)
    #: Seconds `open_ticket` takes before it answers.
    ticket_delay_s: float = 0.0
    #: Tools the server leaves out of its list (and refuses), from its next start.
    hidden: set[str] = field(default_factory=set)
    #: Seconds `lookup_doc` and `say` take before they answer.
    delays: dict[str, float] = field(default_factory=dict)
    #: What the list says of a tool instead of its own (`description`, `input_schema`,
    #: `output_schema`), by tool, from the next `tools/list` on.
    listed_as: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Called when a tool is called, by tool.
    after_call: dict[str, Callable[[], None]] = field(default_factory=dict)
    #: How `flood` answers: "json" or "sse"; and how many bytes of it were sent.
    flood_as: str = "json"
    flooded: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def seen(self, tool: str) -> list[Seen]:
        return [c for c in self.calls if c.tool == tool]

    def _saw(self, tool: str, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        meta = dict(ctx.request_context.meta or {})
        self.calls.append(Seen(tool, arguments, meta))
        hook = self.after_call.get(tool)
        if hook is not None:
            hook()
        return meta

    def server(self) -> MCPServer:
        mcp = MCPServer("kb")

        @mcp.tool(description="Look a document up in the knowledge base.")
        async def lookup_doc(query: str, ctx: Context) -> Doc:
            self._saw("lookup_doc", {"query": query}, ctx)
            await asyncio.sleep(self.delays.get("lookup_doc", 0.0))
            return {"title": f"About {query}", "ring": "adopt"}

        @mcp.tool(description="Say something as plain text.", structured_output=False)
        async def say(words: str, ctx: Context) -> str:
            self._saw("say", {"words": words}, ctx)
            await asyncio.sleep(self.delays.get("say", 0.0))
            return f"you said {words}"

        @mcp.tool(description="Always fails.")
        def broken(query: str, ctx: Context) -> str:
            self._saw("broken", {"query": query}, ctx)
            # Raised deliberately: its words (the query, echoed) reach the model as an
            # isError text, as a real server's would.
            raise ToolError(f"broken: {query}")

        @mcp.tool(description="Open a ticket.")
        async def open_ticket(title: str, ctx: Context) -> Ticket:
            meta = self._saw("open_ticket", {"title": title}, ctx)
            operation = str(meta.get("toolgate/operation_id"))
            ticket = self.tickets.setdefault(operation, f"T-{len(self.tickets) + 1}")
            await asyncio.sleep(self.ticket_delay_s)  # took effect; the answer may come late
            return {"ticket_id": ticket}

        @mcp.tool(description="Answers without end.", structured_output=False)
        def flood(query: str) -> str:
            return "never called: the app answers for it"

        for name in self.hidden:
            mcp.remove_tool(name)
        listed = mcp.list_tools

        async def list_tools() -> list[Any]:
            return [t.model_copy(update=self.listed_as.get(t.name, {})) for t in await listed()]

        mcp.list_tools = list_tools  # type: ignore[method-assign]
        return mcp

    def app(self) -> ASGIApp:
        inner = self.server().streamable_http_app()

        async def recording(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
                if scope["method"] == "POST":
                    body = await _body(receive)
                    flooded = _flood_call(body)
                    if flooded is not None:
                        await self._flood(flooded, receive, send)
                        return
                    receive = _replaying(body, receive)
            await inner(scope, receive, send)

        return recording

    async def _flood(self, request_id: Any, receive: Receive, send: Send) -> None:
        """An answer to `flood` that never ends: 16 KiB a millisecond until the client
        goes away (or 32 MiB were sent)."""
        gone = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        sse = self.flood_as == "sse"
        start = {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text"}]}}
        head = json.dumps(start)[: -len("}]}}")] + ', "text": "'
        kind = b"text/event-stream" if sse else b"application/json"
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", kind)]})  # fmt: skip
        chunk = (("event: message\ndata: " if sse else "") + head).encode()
        try:
            while not gone.is_set() and self.flooded < 32 << 20:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self.flooded += len(chunk)
                chunk = b"x" * 16384
                await asyncio.sleep(0.001)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watcher.cancel()


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """`receive` with the body already read given once more."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


def _flood_call(body: bytes) -> Any:
    """The JSON-RPC id of a `tools/call` of `flood`, or None."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params") or {}
    return message.get("id") if params.get("name") == "flood" else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def up(fake: FakeMcp) -> AsyncIterator[FakeMcp]:
    """Serves `fake` on its port (a free one when it has none) until the block ends."""
    fake.port = fake.port or free_port()
    config = uvicorn.Config(
        fake.app(), host="127.0.0.1", port=fake.port, log_level="warning", lifespan="on",
        loop="asyncio", timeout_graceful_shutdown=0.2,
    )  # fmt: skip
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await started(server)
    try:
        yield fake
    finally:
        server.should_exit = True
        await task
