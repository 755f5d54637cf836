"""A stream followed through dropped connections (see `toolgate_client.streams`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

import httpx
from httpx_sse import aconnect_sse

from toolgate_client.errors import problem_of
from toolgate_client.retry import RetryPolicy
from toolgate_client.streams import Position

T = TypeVar("T")


async def afollow(
    client: httpx.AsyncClient, path: str, position: Position[T], policy: RetryPolicy
) -> AsyncIterator[T]:
    """The stream's items, opened again from the last one after a drop or an early end,
    until `position` is finished (a run's stream) or the caller stops iterating."""
    while not position.finished:
        try:
            async with aconnect_sse(client, "GET", path, **position.request()) as source:
                if not position.opened(source.response.status_code):
                    if position.finished:
                        return
                    await source.response.aread()
                    raise problem_of(source.response)
                async for sse in source.aiter_sse():
                    item = position.take(sse)
                    if item is not None:
                        yield item
                    if position.finished:
                        return
        except httpx.TransportError:
            pass
        await asyncio.sleep(position.pause(policy))
