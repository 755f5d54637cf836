"""The service as the client libraries meet it (tests of clients/python and
clients/typescript): served over HTTP with its driver, the writer agent and its seeded
radar, webhooks to loopback allowed, keys of each role; beside it, the same database served
by a second app that takes one request at a time (so a second one is `503` with
`Retry-After`), a tool whose calls wait until the test releases them (to keep that one
request in flight), and a proxy that cuts event streams in the middle."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.adapters.clock import SystemClock
from tests.support.approvals import WRITER, row
from tests.support.backend import serving_app
from tests.support.factories import seed_radar
from tests.support.harness import Harness, make_config
from tests.support.webhook_receiver import LOOPBACK

#: Bytes of an event stream's answer (headers included) the proxy lets through before it
#: cuts: past the headers and the first event, short of a finished run's whole timeline.
CUT_AFTER = 900
HOLD_LIMIT_S = 20.0


@dataclass
class Gate:
    """The `hold` tool's backend: a call waits until `POST /release` (at most 20 s);
    `GET /held` answers once a call is waiting."""

    url: str = ""
    waiting: list[asyncio.Event] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def _hold(self, request: Request) -> Response:
        released = asyncio.Event()
        self.waiting.append(released)
        self._arrived.set()
        with suppress(TimeoutError):
            await asyncio.wait_for(released.wait(), HOLD_LIMIT_S)
        return JSONResponse({"output": {"held": True}})

    async def _held(self, request: Request) -> Response:
        await asyncio.wait_for(self._arrived.wait(), HOLD_LIMIT_S)
        return Response(status_code=204)

    async def _release(self, request: Request) -> Response:
        self.release()
        return Response(status_code=204)

    def release(self) -> None:
        for released in self.waiting:
            released.set()
        self.waiting.clear()
        self._arrived.clear()

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/tools/hold", self._hold, methods=["POST"]),
                Route("/held", self._held, methods=["GET"]),
                Route("/release", self._release, methods=["POST"]),
            ]
        )


@dataclass
class CuttingProxy:
    """A TCP proxy to the service. A connection whose first request asks for an event
    stream (`Accept: text/event-stream`) without `Last-Event-ID` has its answer cut after
    `CUT_AFTER` bytes; any other is passed through whole. `heads` keeps each connection's
    first request head, `cuts` counts the cuts."""

    upstream_port: int
    url: str = ""
    heads: list[str] = field(default_factory=list)
    cuts: int = 0

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int | None
    ) -> None:
        sent = 0
        try:
            while chunk := await reader.read(4096):
                if limit is not None and sent + len(chunk) >= limit:
                    writer.write(chunk[: limit - sent])
                    await writer.drain()
                    self.cuts += 1
                    return
                sent += len(chunk)
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            head = await client_r.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            client_w.close()
            return
        text = head.decode("latin-1").lower()
        self.heads.append(text)
        cut = "accept: text/event-stream" in text and "last-event-id:" not in text
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        up_w.write(head)
        upward = asyncio.create_task(self._pipe(client_r, up_w, None))
        await self._pipe(up_r, client_w, CUT_AFTER if cut else None)
        upward.cancel()
        for w in (client_w, up_w):
            w.close()


@dataclass
class ClientService:
    url: str
    #: The same database, served one request at a time: while one is in flight (the test
    #: holds one with the `hold` tool), another is answered `503` with `Retry-After: 1`.
    narrow_url: str
    #: The service through the cutting proxy.
    cutting_url: str
    gate: Gate
    proxy: CuttingProxy
    harness: Harness
    caller: str  # subject svc-shop, role caller
    approver: str  # subject alice, role approver
    admin: str  # subject ops, roles admin, caller, approver
    kafka_id: str  # the seeded radar's Kafka (trial), for a move that needs approval

    def env(self) -> dict[str, str]:
        """What a client's tests in another process are told."""
        return {
            "TOOLGATE_URL": self.url,
            "TOOLGATE_NARROW_URL": self.narrow_url,
            "TOOLGATE_CUTTING_URL": self.cutting_url,
            "TOOLGATE_GATE_URL": self.gate.url,
            "TOOLGATE_CALLER_KEY": self.caller,
            "TOOLGATE_APPROVER_KEY": self.approver,
            "TOOLGATE_ADMIN_KEY": self.admin,
            "TOOLGATE_KAFKA_ID": self.kafka_id,
        }


def _config(gate_url: str) -> Any:
    hold = {
        "kind": "http",
        "description": "Waits until the test releases it.",
        "input_schema": {"type": "object", "additionalProperties": False},
        "url": f"{gate_url}/tools/hold",
        "risk": "low",
        "side_effects": False,
        "timeout_s": HOLD_LIMIT_S + 5,
    }
    agent = {**WRITER, "tools": [*WRITER["tools"], "hold"]}
    return make_config({"tech-radar": agent}, tools={"hold": hold}, webhooks=LOOPBACK)


async def _key(h: Harness, subject: str, roles: str) -> str:
    headers = await h.key(subject=subject, roles=roles)
    return headers["Authorization"].removeprefix("Bearer ")


@asynccontextmanager
async def client_service(harness_factory: Any) -> AsyncIterator[ClientService]:
    gate = Gate()
    async with serving_app(gate.app()) as gate.url:
        config = _config(gate.url)
        h = await harness_factory(config=config, clock_=SystemClock())
        narrow = await harness_factory(
            config=config,
            clock_=SystemClock(),
            run_driver=False,
            settings_override={"http_concurrency": 1},
        )
        await seed_radar(h)
        kafka = await row(h, "Kafka")
        async with serving_app(h.app) as url, serving_app(narrow.app) as narrow_url:
            port = int(url.rsplit(":", 1)[1])
            proxy = CuttingProxy(port)
            server = await asyncio.start_server(proxy._serve, "127.0.0.1", 0)
            proxy.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
            try:
                yield ClientService(
                    url=url,
                    narrow_url=narrow_url,
                    cutting_url=proxy.url,
                    gate=gate,
                    proxy=proxy,
                    harness=h,
                    caller=await _key(h, "svc-shop", "caller"),
                    approver=await _key(h, "alice", "approver"),
                    admin=await _key(h, "ops", "admin,caller,approver"),
                    kafka_id=str(kafka["id"]),
                )
            finally:
                gate.release()
                server.close()
