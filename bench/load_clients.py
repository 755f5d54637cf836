"""A concurrent workload driven from several client processes.

One Python process with one httpx client is a poor load generator for 64 clients on this
machine: its connection pool and event loop, not the server, held requests back for up to
5 s before they were even sent (httpcore's trace showed the request headers leave the
client seconds after the call), while the server answered each within a few hundred
milliseconds. Real clients are separate processes; so are these. Each child process runs
its share of the clients with its own httpx client, all start together at a barrier, and
their tallies are merged.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import time
from collections import Counter
from typing import Any


def split(total: int, parts: int) -> list[int]:
    """`total` in `parts` shares as even as can be."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def _child(
    base: str,
    key: str,
    payload: dict[str, Any],
    runs: int,
    clients: int,
    timeout_s: float,
    barrier: Any,
    out: Any,
) -> None:
    import bench_runs as b
    import httpx

    async def main() -> Any:
        limits = httpx.Limits(max_connections=clients + 8)
        timeout = httpx.Timeout(b.WAIT_S + 30.0)
        async with httpx.AsyncClient(base_url=base, timeout=timeout, limits=limits) as client:
            await asyncio.get_running_loop().run_in_executor(None, barrier.wait, 120)
            started = time.process_time()
            tally, elapsed = await b.drive(client, key, payload, runs, clients, timeout_s=timeout_s)
            return tally, elapsed, time.process_time() - started

    out.put(asyncio.run(main()))


async def drive_in_processes(
    base: str,
    key: str,
    payload: dict[str, Any],
    runs: int,
    clients: int,
    processes: int,
    *,
    timeout_s: float,
) -> tuple[Any, float, float]:
    """`runs` runs by `clients` clients spread over `processes` processes; the merged
    tally, the seconds from the common start until the last process was done, and the CPU
    seconds the processes used driving (their start-up not counted)."""
    ctx = mp.get_context("spawn")  # a fork would copy this process's event loop
    processes = max(1, min(processes, clients))
    barrier, out = ctx.Barrier(processes + 1), ctx.Queue()
    children = [
        ctx.Process(target=_child, args=(base, key, payload, r, c, timeout_s, barrier, out))
        for r, c in zip(split(runs, processes), split(clients, processes), strict=True)
    ]
    for child in children:
        child.start()
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, barrier.wait, 120)
    started = time.perf_counter()
    results = [await loop.run_in_executor(None, out.get) for _ in children]
    elapsed = time.perf_counter() - started
    for child in children:
        child.join()
    return merge([tally for tally, _, _ in results]), elapsed, sum(c for _, _, c in results)


def merge(tallies: list[Any]) -> Any:
    first = tallies[0]
    for other in tallies[1:]:
        for name, value in vars(other).items():
            mine = getattr(first, name)
            if isinstance(mine, Counter | list):
                mine += value
            else:
                setattr(first, name, mine + value)
    return first
