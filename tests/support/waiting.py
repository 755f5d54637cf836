"""Waiting for a condition rather than for a time: a short poll that returns as soon as it
holds, so a test takes as long as the behaviour it watches and no fixed sleep longer."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

#: How often a condition is looked at again.
EVERY_S = 0.02


async def until(
    check: Callable[[], bool | Awaitable[bool]], timeout_s: float = 10, what: str = "the condition"
) -> None:
    """Returns once `check()` (a function or a coroutine function) is true; fails after
    `timeout_s`."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while True:
        held = check()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        if loop.time() > end:
            raise AssertionError(f"{what} did not hold within {timeout_s} s")
        await asyncio.sleep(EVERY_S)
