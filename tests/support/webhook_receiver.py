"""A webhook receiver on loopback (uvicorn in the test's event loop): records every
request and answers as the test scripts it, then 204."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from standardwebhooks.webhooks import Webhook
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.support.backend import serving_app

ADMIN = "admin,caller,approver"
#: The test configs' webhooks section: loopback allowed, retries 0.2 s apart.
LOOPBACK = {"allow": ["https://*", "http://127.0.0.1:*"], "retry_schedule_s": [0.2, 0.2]}


@dataclass
class Reply:
    status: int = 204
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # event-loop time

    @property
    def id(self) -> str:
        return self.headers["webhook-id"]

    @property
    def event(self) -> dict[str, Any]:
        return json.loads(self.body)

    def verified(self, secret: str) -> dict[str, Any]:
        """The payload, as the standardwebhooks library verifies it with `secret`."""
        return Webhook(secret).verify(self.body, self.headers)

    def signed_by(self, secret: str) -> bool:
        """Whether one of its signatures is the library's for `secret`, whatever the time
        (verify() also refuses a timestamp 5 minutes off, as a test's clock may be)."""
        when = datetime.fromtimestamp(int(self.headers["webhook-timestamp"]), tz=UTC)
        mine = Webhook(secret).sign(self.id, when, self.body.decode())
        return mine in self.headers["webhook-signature"].split(" ")


@dataclass
class Receiver:
    url: str = ""
    received: list[Received] = field(default_factory=list)
    #: Replies in order; once used up, 204.
    script: list[Reply] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def _handle(self, request: Request) -> Response:
        loop = asyncio.get_running_loop()
        body = await request.body()
        self.received.append(Received(request.url.path, dict(request.headers), body, loop.time()))
        self._arrived.set()
        reply = self.script.pop(0) if self.script else Reply()
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        return Response(status_code=reply.status, headers=reply.headers)

    async def wait_for(self, count: int, timeout_s: float = 15) -> list[Received]:
        """The first `count` requests, once they have arrived."""
        async with asyncio.timeout(timeout_s):
            while len(self.received) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.received[:count]

    def hook(self, path: str = "/hook") -> str:
        return self.url + path


@asynccontextmanager
async def receiving() -> AsyncIterator[Receiver]:
    receiver = Receiver()
    app = Starlette(routes=[Route("/{path:path}", receiver._handle, methods=["POST"])])
    async with serving_app(app) as url:
        receiver.url = url
        yield receiver


async def register(
    client: Any, headers: dict[str, str], url: str, events: list[str]
) -> dict[str, Any]:
    response = await client.post(
        "/v1/webhooks", headers=headers, json={"url": url, "events": events}
    )
    assert response.status_code == 201, response.text
    return response.json()


async def deliveries(client: Any, headers: dict[str, str], webhook_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/v1/webhooks/{webhook_id}/deliveries", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["items"]


async def settled(
    client: Any, headers: dict[str, str], webhook_id: str, count: int, timeout_s: float = 15
) -> list[dict[str, Any]]:
    """The endpoint's deliveries once `count` of them are no longer pending."""
    async with asyncio.timeout(timeout_s):
        while True:
            items = await deliveries(client, headers, webhook_id)
            if sum(1 for d in items if d["status"] != "pending") >= count:
                return items
            await asyncio.sleep(0.1)
