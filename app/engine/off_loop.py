"""Checks of untrusted data that may be large run in a worker thread, so that the event
loop (every other run, stream and request of the process, and the lease keeper) never
waits on them.

Every pattern they run is RE2 (`domain.patterns`): linear in the text, and it releases the
GIL while it matches, so a worker thread really runs beside the loop. The Python around
the patterns (walks, joins, lower-casing, JSON) holds the GIL a switch interval (5 ms) at a
time. Below the threshold the hop to a thread costs more than the check: small values, the
hot path's, are checked in place.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

#: From this many characters (or bytes of JSON) a check runs in a worker thread. A check
#: of this much text takes well under a millisecond in place.
THRESHOLD = 32 * 1024


#: The checks' own threads: not the loop's default executor, which name lookups (asyncpg's
#: and httpx's `getaddrinfo`) share, so that a burst of hostile checks waits for these and
#: never delays a reconnect or a lease's renewal. Two: there are few cores to run them on,
#: and a third check waiting its turn holds nothing but its own step.
_CHECKS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="toolgate-check")


async def run(size: int, work: Callable[..., T], /, *args: Any) -> T:
    """`work(*args)`, in a check thread when `size` reaches THRESHOLD (with the caller's
    context, as `asyncio.to_thread` would: its span stays the parent)."""
    if size < THRESHOLD:
        return work(*args)
    call = functools.partial(contextvars.copy_context().run, work, *args)
    return await asyncio.get_running_loop().run_in_executor(_CHECKS, call)


def json_size(value: Any) -> int:
    """The length of `value`'s compact JSON (the C encoder's: fast at any size), or
    THRESHOLD when it cannot be encoded here (too deep): the check that says why is then
    made off the loop."""
    try:
        return len(json.dumps(value, separators=(",", ":")))
    except (ValueError, TypeError, RecursionError):
        return THRESHOLD
