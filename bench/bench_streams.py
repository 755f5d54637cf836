"""Event streams, measured against two real server processes on one database.

    .venv/bin/python bench/bench_streams.py [--streams 100] [--runs 200] [--clients 8]

Creates a fresh database (as bench_runs.py does), starts two `serve` processes, A and B,
and opens `--streams` tenant streams (`GET /v1/events`, Server-Sent Events) on A. Then:

    0. throughput: `--runs` runs created on A with no stream open, for comparison;
    1. memory: A's resident memory before and after opening the streams (per stream);
    2. same process: `--runs` runs (N = 2) created on A by `--clients` concurrent clients,
       each waited for; delivery latency = when the run's `run.finished` reaches the first
       stream minus when its create answered (the event is committed before the answer);
    3. other process: the same, the runs created on B, so every event reaches A's streams
       through B's coalesced NOTIFY (or, if one were lost, the 5 s poll);
    4. every stream got every event of the tenant, once, in the same order.

Prints the figures; nothing is asserted. Steps per second are bench_runs.py's job.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_runs import (  # noqa: E402
    body,
    mib,
    pct,
    prepare,
    serving,
    wait_healthy,
    write_config,
)

from tests.support.dbserver import fresh_database  # noqa: E402


class Reader:
    """One stream: the ids it saw, and when each run's `run.finished` arrived."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.finished_at: dict[str, float] = {}
        self.open = asyncio.Event()

    async def read(self, client: httpx.AsyncClient, headers: dict[str, str], path: str) -> None:
        stream_headers = {**headers, "Accept": "text/event-stream"}
        async with client.stream("GET", path, headers=stream_headers) as response:
            response.raise_for_status()
            self.open.set()
            event_id = kind = data = None
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                elif line == "" and event_id is not None:
                    self.ids.append(event_id)
                    if kind == "run.finished" and data is not None:
                        self.finished_at[data["run_id"]] = time.perf_counter()
                    event_id = kind = data = None


async def create_runs(
    client: httpx.AsyncClient, headers: dict[str, str], runs: int, clients: int
) -> dict[str, float]:
    """run id -> when its create answered (finished)."""
    answered: dict[str, float] = {}
    queue = iter(range(runs))

    async def one_client() -> None:
        for _ in queue:
            response = await client.post(
                "/v1/runs",
                headers={**headers, "Idempotency-Key": secrets.token_hex(8)},
                json=body("tech-radar", 2, wait_s=30),
            )
            run = response.json()
            if run.get("status") != "finished":
                raise SystemExit(f"a run did not finish within its wait: {run}")
            answered[run["id"]] = time.perf_counter()

    await asyncio.gather(*(one_client() for _ in range(clients)))
    return answered


async def latencies(readers: list[Reader], answered: dict[str, float]) -> list[float]:
    # Wait (up to 10 s) for the last run.finished to reach the first stream.
    first = readers[0]
    for _ in range(200):
        if all(run in first.finished_at for run in answered):
            break
        await asyncio.sleep(0.05)
    missing = [run for run in answered if run not in first.finished_at]
    if missing:
        raise SystemExit(f"{len(missing)} runs' run.finished never reached the stream")
    return [max(0.0, first.finished_at[run] - at) for run, at in answered.items()]


def line(name: str, values_s: list[float]) -> str:
    return (
        f"{name:<40} p50 {pct(values_s, 0.5):7.1f} ms   p95 {pct(values_s, 0.95):7.1f} ms"
        f"   max {max(values_s) * 1000:7.1f} ms"
    )


async def bench(servers: tuple[Any, Any], key: str, args: argparse.Namespace) -> None:
    a_server, b_server = servers
    headers = {"Authorization": f"Bearer {key}"}
    limits = httpx.Limits(max_connections=args.streams + args.clients + 10)
    async with (
        httpx.AsyncClient(base_url=a_server.base, timeout=60, limits=limits) as a,
        httpx.AsyncClient(base_url=b_server.base, timeout=60) as b,
    ):
        await wait_healthy(a, a_server.process)
        await wait_healthy(b, b_server.process)
        # First requests pay for imports and pool connections: not measured.
        await create_runs(a, {**headers}, 5, 1)
        await create_runs(b, {**headers}, 5, 1)
        started = time.perf_counter()
        await create_runs(a, headers, args.runs, args.clients)
        alone = args.runs / (time.perf_counter() - started)
        await asyncio.sleep(1)
        before = a_server.rss_kib()
        readers = [Reader() for _ in range(args.streams)]
        path = f"/v1/events?types={args.types}" if args.types else "/v1/events"
        tasks = [asyncio.create_task(r.read(a, headers, path)) for r in readers]
        await asyncio.wait_for(asyncio.gather(*(r.open.wait() for r in readers)), 60)
        await asyncio.sleep(1)
        after = a_server.rss_kib()
        print(f"streams open on A                        {args.streams} ({path})")
        print(
            f"A's memory                               {mib(before)} before, {mib(after)} after:"
            f" {(after - before) / args.streams:.0f} KiB a stream"
        )

        started = time.perf_counter()
        same = await create_runs(a, headers, args.runs, args.clients)
        took = time.perf_counter() - started
        print(line("run.finished, written by A, at A", await latencies(readers, same)))
        print(
            f"{'':<40} ({args.runs / took:.1f} runs/s with the streams open, {alone:.1f} without)"
        )
        other = await create_runs(b, headers, args.runs, args.clients)
        print(line("run.finished, written by B, at A", await latencies(readers, other)))

        # Every stream catches up (within 10 s) before they are compared.
        for _ in range(200):
            if len({len(r.ids) for r in readers}) == 1:
                break
            await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
                await task
        reference = readers[0].ids
        same_everywhere = all(r.ids == reference for r in readers)
        print(
            f"events per stream                        {len(reference)}; every stream the same"
            f" ids in the same order: {'yes' if same_everywhere else 'NO'}; repeats: "
            f"{len(reference) - len(set(reference))}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--types", default="", help="the streams' types= filter, e.g. run.finished (none)"
    )
    args = parser.parse_args()
    server_url = os.environ.get(
        "TOOLGATE_BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    print(
        f"toolgate stream bench    {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; {os.cpu_count()} CPUs"
    )
    os.environ["TOOLGATE_MAX_STREAMS"] = str(args.streams + 10)
    # One tenant holds every stream here: its share must be the whole limit.
    os.environ["TOOLGATE_MAX_STREAMS_PER_TENANT"] = str(args.streams + 10)
    with (
        tempfile.TemporaryDirectory(prefix="toolgate-bench-") as folder,
        fresh_database(server_url) as url,
    ):
        key = asyncio.run(prepare(url))
        config = write_config(Path(folder), 2)
        with (
            serving(url, config, 1, 64, Path(folder) / "a.log") as a_server,
            serving(url, config, 1, 64, Path(folder) / "b.log") as b_server,
        ):
            asyncio.run(bench((a_server, b_server), key, args))


if __name__ == "__main__":
    main()
