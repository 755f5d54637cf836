"""Event streams from the outside: an SSE client reading frames as they arrive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

STREAM = {"Accept": "text/event-stream"}
Frame = dict[str, Any]


async def frames(response: httpx.Response) -> AsyncIterator[Frame]:
    """The stream's frames as {"id", "event", "data"} (data parsed), and pings as
    {"comment": "ping"}, as they arrive."""
    current: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if line == "":
            if current:
                yield current
            current = {}
        elif line.startswith(":"):
            yield {"comment": line[1:].strip()}
        else:
            name, _, value = line.partition(": ")
            current[name] = json.loads(value) if name == "data" else value


@asynccontextmanager
async def stream(
    base: str, path: str, headers: dict[str, str]
) -> AsyncIterator[tuple[httpx.Response, AsyncIterator[Frame]]]:
    async with (
        httpx.AsyncClient(base_url=base, timeout=30) as http,
        http.stream("GET", path, headers={**headers, **STREAM}) as response,
    ):
        yield response, frames(response)


async def take(source: AsyncIterator[Frame], until: str, timeout_s: float = 20) -> list[Frame]:
    """Frames (pings left out) up to and including the first of type `until`."""
    taken: list[Frame] = []

    async def read() -> None:
        async for frame in source:
            if "comment" in frame:
                continue
            taken.append(frame)
            if frame["event"] == until:
                return
        raise AssertionError(f"the stream ended before {until}: {[f['event'] for f in taken]}")

    await asyncio.wait_for(read(), timeout_s)
    return taken


async def reopens(base: str, headers: dict[str, str]) -> bool:
    """Whether a tenant stream opens again within 10 s: a closed stream's slot is given
    back once the server has seen its client go."""
    for _ in range(200):
        async with stream(base, "/v1/events", headers) as (response, _):
            if response.status_code == 200:
                return True
        await asyncio.sleep(0.05)
    return False


async def feed_shows(
    client: httpx.AsyncClient, headers: dict[str, str], finished: int, timeout_s: float = 20
) -> None:
    """Waits until the tenant feed shows `finished` run.finished events. The feed reads only
    below the oldest transaction still running on the whole server (another test's
    database's too), so a run's commits can take a moment to show in it."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout_s
    while True:
        page = (await client.get("/v1/events?types=run.finished", headers=headers)).json()
        if len(page["items"]) >= finished:
            return
        assert loop.time() < give_up, f"the feed shows {len(page['items'])} of {finished} runs"
        await asyncio.sleep(0.05)
