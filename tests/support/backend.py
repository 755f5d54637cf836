"""A fake tool backend: a real HTTP server on loopback (uvicorn, in the test's event loop)
that records every request, applies each operation's effect once per Idempotency-Key, and
answers as the test scripts it."""

from __future__ import annotations

import asyncio
import json
import socket
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class Answer:
    """What the backend answers one request: `status` and a JSON `body` (or `raw` bytes),
    after `delay_s` and once `hold` (if any) is set by the test; `effect` records the
    operation's effect first."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    delay_s: float = 0.0
    effect: bool = True
    hold: asyncio.Event | None = None


def ok(output: Any, **envelope: Any) -> Answer:
    return Answer(200, {"output": output, **envelope})


def fail(status: int, code: str, message: str = "", **flags: Any) -> Answer:
    return Answer(status, {"code": code, "message": message, **flags}, effect=False)


def status_url(backend: FakeBackend) -> str:
    return f"{backend.url}/operations"


@dataclass
class Received:
    tool: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeBackend:
    url: str = ""
    received: list[Received] = field(default_factory=list)
    #: Effects applied, by operation id (an idempotent backend applies one per key), with
    #: the output each produced: what the status endpoint answers.
    effects: dict[str, Any] = field(default_factory=dict)
    #: Status lookups received, by operation id.
    looked_up: list[str] = field(default_factory=list)
    #: How many lookups answer `in_progress` before the truth.
    in_progress_for: int = 0
    #: Requests being answered now, and the most ever answered at once, per tool.
    busy: Counter[str] = field(default_factory=Counter)
    peak: Counter[str] = field(default_factory=Counter)
    #: Scripted answers per tool, in order; when empty, the tool echoes its arguments,
    #: after the delay `echo_delays[tool][arguments["q"]]` if one is set.
    script: dict[str, list[Answer]] = field(default_factory=dict)
    echo_delays: dict[str, dict[str, float]] = field(default_factory=dict)
    #: Preview requests received, and scripted preview answers per tool (when none is
    #: left: a preview of the arguments at `resource_version` "1").
    previewed: list[Received] = field(default_factory=list)
    preview_script: dict[str, list[Answer]] = field(default_factory=dict)

    def preview_url(self, name: str) -> str:
        return f"{self.url}/tools/{name}/preview"

    def tool_url(self, name: str) -> str:
        return f"{self.url}/tools/{name}"

    def answer(self, tool: str, *answers: Answer) -> None:
        self.script.setdefault(tool, []).extend(answers)

    def sent(self, tool: str) -> list[Received]:
        return [r for r in self.received if r.tool == tool]

    async def wait_sent(self, tool: str, timeout_s: float = 10.0) -> None:
        """Until a request for `tool` has arrived."""
        for _ in range(int(timeout_s / 0.05)):
            if self.sent(tool):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"nothing was sent to {tool}")

    async def _status(self, request: Request) -> Response:
        """SPEC §4.1: what became of an operation; 404 when it was never received."""
        operation = request.path_params["operation"]
        self.looked_up.append(operation)
        if len(self.looked_up) <= self.in_progress_for:
            return JSONResponse({"status": "in_progress"})
        if operation not in self.effects:
            return JSONResponse({"code": "not_found"}, status_code=404)
        return JSONResponse({"status": "succeeded", "output": self.effects[operation]})

    async def _preview(self, request: Request) -> Response:
        tool = request.path_params["name"]
        body = json.loads(await request.body())
        self.previewed.append(Received(tool, dict(request.headers), body))
        queue = self.preview_script.get(tool) or []
        if queue:
            answer = queue.pop(0)
            return JSONResponse(answer.body, status_code=answer.status)
        summary = f"{tool} with {json.dumps(body['arguments'], sort_keys=True)}"
        return JSONResponse(
            {
                "summary": summary,
                "impact": {"arguments": body["arguments"]},
                "cost_usd": 0,
                "resource_version": "1",
            }  # fmt: skip
        )

    async def _handle(self, request: Request) -> Response:
        tool = request.path_params["name"]
        body = json.loads(await request.body())
        self.received.append(Received(tool, dict(request.headers), body))
        queue = self.script.get(tool) or []
        if queue:
            answer = queue.pop(0)
        else:
            delay = self.echo_delays.get(tool, {}).get(str(body["arguments"].get("q")), 0.0)
            answer = ok({"echo": body["arguments"]}, source_version="1")
            answer.delay_s = delay
        if answer.effect:
            # Applied once per key, however often the operation is sent.
            output = answer.body.get("output") if isinstance(answer.body, dict) else None
            self.effects.setdefault(request.headers.get("idempotency-key", ""), output)
        self.busy[tool] += 1
        self.peak[tool] = max(self.peak[tool], self.busy[tool])
        try:
            if answer.delay_s:
                await asyncio.sleep(answer.delay_s)
            if answer.hold is not None:
                await answer.hold.wait()
        finally:
            self.busy[tool] -= 1
        if answer.raw is not None:
            return Response(answer.raw, status_code=answer.status, media_type="application/json")
        return JSONResponse(answer.body, status_code=answer.status)


async def started(server: uvicorn.Server) -> None:
    for _ in range(500):  # uvicorn offers no event to wait on; at most 5 s
        if server.started:
            return
        await asyncio.sleep(0.01)
    raise RuntimeError("the fake backend did not start")


@asynccontextmanager
async def serving_app(app: Any, lifespan: str = "off") -> AsyncIterator[str]:
    """Serves `app` on a free loopback port (in this event loop); yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            lifespan=lifespan,
            loop="asyncio",
            # What a test left hanging (a reply held for a minute) is cut, not waited for:
            # the test has seen what it wanted by the time its server stops.
            timeout_graceful_shutdown=0.2,
        )
    )
    task = asyncio.create_task(server.serve(sockets=[sock]))
    await started(server)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def serving() -> AsyncIterator[FakeBackend]:
    backend = FakeBackend()
    app = Starlette(
        routes=[
            Route("/tools/{name}", backend._handle, methods=["POST"]),
            Route("/tools/{name}/preview", backend._preview, methods=["POST"]),
            Route("/operations/{operation}", backend._status, methods=["GET"]),
        ]
    )
    async with serving_app(app) as url:
        backend.url = url
        yield backend
