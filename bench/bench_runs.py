"""Throughput, latency and memory of the service, measured against a real server process.

    .venv/bin/python bench/bench_runs.py [--runs 400] [--concurrency 16] [--workers 1]

Creates a fresh database on the Postgres server at TOOLGATE_BENCH_DATABASE_URL (default: the
local server at 127.0.0.1:5432), migrates it, seeds the demo radar, starts
`python -m app serve` on a free loopback port, and drives scripted runs (one
search_technologies call, then a final answer citing it) through POST /v1/runs. Prints
figures; asserts nothing about them. All traffic stays on 127.0.0.1, bounded in count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.adapters.builtin_tools.demo_data import seed  # noqa: E402
from app.adapters.clock import SystemClock  # noqa: E402
from app.db import migrate  # noqa: E402
from app.db.session import make_sessionmaker  # noqa: E402
from app.engine.keys import create_key  # noqa: E402
from tests.dbserver import fresh_database  # noqa: E402

SCRIPT = [
    {
        "type": "tool_calls",
        "calls": [{"id": "c1", "name": "search_technologies", "arguments": {"query": "database"}}],
        "usage": {"input_tokens": 120, "output_tokens": 20},
    },
    {
        "type": "final",
        "text": "PostgreSQL is in adopt [source:s1]",
        "usage": {"input_tokens": 300, "output_tokens": 22},
    },
]


def rss_kib(pid: int) -> tuple[int, int]:
    """(current, peak) resident memory of a process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def children_of(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


async def prepare(url: str) -> str:
    engine = create_async_engine(url)
    await migrate.upgrade(engine)
    sessions = make_sessionmaker(engine)
    _, key = await create_key(
        sessions, SystemClock(), tenant_id="bench", subject="bench", roles=["caller"], scopes=None
    )
    async with sessions.begin() as session:
        await seed(session, tenant_id="bench", now=SystemClock().now())
    await engine.dispose()
    return key


async def wait_healthy(client: httpx.AsyncClient) -> None:
    for _ in range(300):
        try:
            if (await client.get("/healthz")).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.1)
    raise SystemExit("the server did not start")


async def drive(base: str, key: str, runs: int, concurrency: int) -> tuple[list[float], int, float]:
    latencies: list[float] = []
    failures = 0
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(runs):
        queue.put_nowait(i)

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal failures
        while not queue.empty():
            queue.get_nowait()
            started = time.perf_counter()
            response = await client.post(
                "/v1/runs",
                headers={"Authorization": f"Bearer {key}", "Idempotency-Key": secrets.token_hex(8)},
                json={
                    "agent": "tech-radar",
                    "input": "Which databases?",
                    "script": SCRIPT,
                    "wait_s": 30,
                },
            )
            latencies.append(time.perf_counter() - started)
            if response.status_code != 201 or response.json().get("termination_reason") != "final":
                failures += 1

    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        await wait_healthy(client)
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return latencies, failures, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    server_url = os.environ.get(
        "TOOLGATE_BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    with fresh_database(server_url) as url:
        key = asyncio.run(prepare(url))
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {**os.environ, "TOOLGATE_DATABASE_URL": url}
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app",
                "serve",
                "--port",
                str(port),
                "--workers",
                str(args.workers),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            latencies, failures, elapsed = asyncio.run(
                drive(f"http://127.0.0.1:{port}", key, args.runs, args.concurrency)
            )
            pids = [server.pid, *children_of(server.pid)]
            memory = [rss_kib(pid) for pid in pids]
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    print(
        f"runs                 {args.runs} (each: 2 model turns, 1 tool call), "
        f"{args.concurrency} concurrent clients, {args.workers} worker(s)"
    )
    print(f"failures             {failures}")
    print(f"throughput           {args.runs / elapsed:8.1f} runs/s  ({elapsed:.2f} s)")
    print(f"latency p50          {pct(0.50):8.1f} ms   (create + run to final)")
    print(f"latency p95          {pct(0.95):8.1f} ms")
    print(f"latency p99          {pct(0.99):8.1f} ms")
    print(f"latency mean         {statistics.fmean(latencies) * 1000:8.1f} ms")
    for pid, (rss, peak) in zip(pids, memory, strict=True):
        print(f"memory pid {pid:<8} rss {rss / 1024:7.1f} MiB   peak {peak / 1024:7.1f} MiB")


if __name__ == "__main__":
    main()
