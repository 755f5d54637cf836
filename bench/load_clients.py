"""A concurrent workload driven from several client processes.

One Python process with one httpx client is a poor load generator for 64 clients on this
machine: its connection pool and event loop, not the server, held requests back for up to
5 s before they were even sent (httpcore's trace showed the request headers leave the
client seconds after the call), while the server answered each within a few hundred
milliseconds. Real clients are separate processes; so are these. Each child process runs
its share of the clients with its own HTTP client, all start together at a barrier, and
their tallies are merged.

The children's client is aiohttp's, behind the two calls of httpx's that the workload
makes (`LeanClient`): on this two-core box the load generator shares the cores with the
service and Postgres, and httpx spent 0.7 ms of CPU a step driving them, aiohttp less
(`docs/performance.md`, "The load generator").
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import time
from collections import Counter
from typing import Any

import aiohttp
import httpx


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

    async def main() -> Any:
        async with LeanClient(base, clients + 8, b.WAIT_S + 30.0) as client:
            await asyncio.get_running_loop().run_in_executor(None, barrier.wait, 120)
            started = time.process_time()
            tally, elapsed = await b.drive(
                client,  # type: ignore[arg-type]
                key,
                payload,
                runs,
                clients,
                timeout_s=timeout_s,
            )
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


class LeanResponse:
    def __init__(self, status: int, body: bytes) -> None:
        self.status_code = status
        self.content = body

    def json(self) -> Any:
        return json.loads(self.content)

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise httpx.HTTPStatusError(
                f"http {self.status_code}",
                request=httpx.Request("GET", "http://bench"),
                response=httpx.Response(self.status_code),
            )


class LeanClient:
    """httpx.AsyncClient's `post` and `get`, as the workload calls them, on aiohttp. A
    transport failure is raised as httpx's, which the workload counts."""

    def __init__(self, base: str, connections: int, timeout_s: float) -> None:
        self._base = base
        self._connections = connections
        self._timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> LeanClient:
        self._session = aiohttp.ClientSession(
            base_url=self._base,
            connector=aiohttp.TCPConnector(limit=self._connections),
            timeout=aiohttp.ClientTimeout(total=self._timeout_s),
        )
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self._session is not None
        await self._session.close()

    async def post(
        self, path: str, *, headers: dict[str, str] | None = None, json: Any = None
    ) -> LeanResponse:
        return await self._request("POST", path, headers=headers, json=json)

    async def get(
        self,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> LeanResponse:
        return await self._request("GET", path, headers=headers, params=params)

    async def _request(self, method: str, path: str, **options: Any) -> LeanResponse:
        assert self._session is not None
        try:
            async with self._session.request(method, path, **options) as response:
                return LeanResponse(response.status, await response.read())
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise httpx.TransportError(f"{type(exc).__name__}: {exc}") from exc


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
