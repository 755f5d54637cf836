"""How long the event loop went without running a task: a ticker's longest gap, for tests
that something heavy runs beside the loop, not on it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


@contextlib.asynccontextmanager
async def loop_lag(every_s: float = 0.01) -> AsyncIterator[list[float]]:
    """The gaps between a ticker's wake-ups while the block runs (each should be about
    `every_s`; a gap of a second is a second the loop was held)."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while not done.is_set():
            await asyncio.sleep(every_s)
            now = loop.time()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    try:
        yield gaps
    finally:
        done.set()
        await ticker
