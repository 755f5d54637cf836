# Made from toolgate_client/_async/follow.py by clients/python/make_sync.py
# (make openapi); edit that file, not this one.
"""A stream followed through dropped connections (see `toolgate_client.streams`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TypeVar

import httpx
from httpx_sse import connect_sse

from toolgate_client.errors import problem_of
from toolgate_client.retry import RetryPolicy
from toolgate_client.streams import Position

T = TypeVar("T")


def follow(
    client: httpx.Client, path: str, position: Position[T], policy: RetryPolicy
) -> Iterator[T]:
    """The stream's items, opened again from the last one after a drop or an early end,
    until `position` is finished (a run's stream) or the caller stops iterating."""
    while not position.finished:
        try:
            with connect_sse(client, "GET", path, **position.request()) as source:
                if not position.opened(source.response.status_code):
                    if position.finished:
                        return
                    source.response.read()
                    raise problem_of(source.response)
                for sse in source.iter_sse():
                    item = position.take(sse)
                    if item is not None:
                        yield item
                    if position.finished:
                        return
        except httpx.TransportError:
            pass
        time.sleep(position.pause(policy))
