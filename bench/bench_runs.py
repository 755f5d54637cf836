"""Throughput, latency, memory and write cost of runs, measured against a real server process.

    .venv/bin/python bench/bench_runs.py [--quick] [--workers N] [--only 1,4,6] [...]

Creates a fresh database on the Postgres server at TOOLGATE_BENCH_DATABASE_URL (default: the
local server at 127.0.0.1:5432), migrates it, seeds the demo radar, writes a config (the demo
config plus an agent `bench` whose limits allow the longest run asked for) to a temporary
folder, and starts one `python -m app serve` on a free loopback port with TOOLGATE_CONFIG
pointing at it. Every workload runs, one after the other, against that one server.

A run of N rounds is N model turns that each call search_technologies once, then a final
answer citing it: N + 1 steps (model turns). Workloads (defaults; see --help for the flags):

    1. N = 2, sequential (1 client), 50 runs       (agent tech-radar, the shipped limits)
    2. N = 50, sequential, 5 runs                  (agent bench)
    3. N = 200, sequential, 3 runs                 (agent bench)
    4. N = 2, 16 concurrent clients, 400 runs
    5. N = 2, 64 concurrent clients, 640 runs
    6. 500 runs in flight at rest: created with wait_s 0, each model turn sleeping 2 s (one
       tool round, then the final answer); server memory sampled while they are in flight,
       then the time until all have finished.
    7. 1,000 parked runs: each proposes move_technology_ring (which requires approval) and
       parks awaiting it; the server's memory before and after, and how many of them hold a
       lease (none should: a parked run costs rows, not memory).

The server is started with TOOLGATE_MAX_ACTIVE_RUNS=--max-active-runs (default 512) for all
workloads, so that workload 6 has every run advancing at once rather than 64 per process;
workloads 1-5 never have more than 64 runs in flight, so the setting does not change them.

A run is ok when POST /v1/runs answers 201 and the run ends with termination_reason "final".
A run still active when its wait_s (30 s) ran out is followed with POST .../advance until it
ends; its latency is create to final either way. Per workload the script prints runs,
failures, 5xx, latency, runs/s and steps/s, Postgres write transactions per run (COMMIT
records in the WAL of transactions that touched the bench database, via pg_walinspect), WAL
bytes per run and per step (pg_current_wal_lsn before and after; also the bench database's
own records), xact_commit from pg_stat_database, the server's CPU time, and its resident
memory (all its processes; workload 6 samples it, and the runs in flight, four times a second
while the runs are in flight). Warnings and errors in the server's log are counted and the
first few shown. Other activity on the Postgres server (other databases, other users) adds
noise to the whole-server WAL figures; the per-database ones filter it out. Finally it runs
pgbench (-N, 16 clients) on a scratch database of the same server and prints each workload's
steps/s as a fraction of pgbench's TPS. Prints figures; asserts nothing about them. All
traffic stays on 127.0.0.1 (or the server's socket), bounded in count.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import yaml
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.adapters.clock import SystemClock  # noqa: E402
from app.adapters.tools.builtin.demo_data import seed  # noqa: E402
from app.config.files import DEMO_CONFIG_PATH  # noqa: E402
from app.db import migrate  # noqa: E402
from app.db.session import make_sessionmaker  # noqa: E402
from app.engine.access.keys import create_key  # noqa: E402
from tests.support.dbserver import fresh_database  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from load_clients import drive_in_processes  # noqa: E402
from profiling import profiled  # noqa: E402
from profiling import summarize as profile_summary  # noqa: E402

DEMO_AGENT = "tech-radar"
#: The demo agent's max_steps (app/resources/demo.yaml); longer runs use the bench agent.
DEMO_MAX_STEPS = 8
BENCH_AGENT = "bench"
TOOL_ROUND: dict[str, Any] = {
    "type": "tool_calls",
    "calls": [{"id": "c1", "name": "search_technologies", "arguments": {"query": "database"}}],
    "usage": {"input_tokens": 120, "output_tokens": 20},
}
FINAL: dict[str, Any] = {
    "type": "final",
    "text": "PostgreSQL is in adopt [source:s1]",
    "usage": {"input_tokens": 300, "output_tokens": 22},
}
#: Statuses a run can be advanced from; awaiting_approval would need a person.
ADVANCING = ("queued", "running")
ACTIVE = (*ADVANCING, "awaiting_approval")
WAIT_S = 30
#: After a workload, time for its last trailing writes (lease hand-back and the like) to land
#: in its own WAL window rather than the next one's.
SETTLE_S = 0.5

#: Defaults: the whole bench takes about five minutes on a 2-core machine.
FULL = {
    "seq_runs": 50,
    "long_runs": 5,
    "longest_runs": 3,
    "c16_runs": 400,
    "c64_runs": 640,
    "in_flight": 500,
    "parked": 1000,
    "pgbench_seconds": 10,
}
QUICK = {
    "seq_runs": 10,
    "long_runs": 1,
    "longest_runs": 1,
    "c16_runs": 64,
    "c64_runs": 128,
    "in_flight": 100,
    "parked": 200,
    "pgbench_seconds": 3,
}


def agent_for(rounds: int) -> str:
    return DEMO_AGENT if rounds + 1 <= DEMO_MAX_STEPS else BENCH_AGENT


def script(rounds: int, delay_ms: int = 0) -> list[dict[str, Any]]:
    """`rounds` tool rounds, then the final answer; every model turn sleeps `delay_ms`."""
    delay = {"delay_ms": delay_ms} if delay_ms else {}
    return [*({**TOOL_ROUND, **delay} for _ in range(rounds)), {**FINAL, **delay}]


# -- the server ------------------------------------------------------------------------------
def write_config(folder: Path, rounds: int) -> Path:
    """The demo config, caps raised, plus the agent `bench` allowing `rounds` tool rounds."""
    config = yaml.safe_load(DEMO_CONFIG_PATH.read_text())
    caps = {
        "max_steps": rounds + 1,
        "deadline_s": 3600.0,
        "max_tokens": 10**9,
        "max_cost_usd": 1000.0,
        "max_tool_calls": rounds,
    }
    config["limits"] = {k: max(v, config.get("limits", {}).get(k, v)) for k, v in caps.items()}
    config["agents"][BENCH_AGENT] = {**config["agents"][DEMO_AGENT], "limits": caps}
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


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


async def try_sql(url: str, statements: list[str]) -> None:
    """Runs `--try` statements on the migrated bench database: a schema change measured
    before its migration is written."""
    connection = await asyncpg.connect(**pg_params(url))
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (uvicorn's workers, multiprocessing helpers)."""
    parent_of: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            # The command name may hold spaces or parentheses; what follows the last ')' not.
            parent_of[int(stat.parent.name)] = int(stat.read_text().rpartition(")")[2].split()[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children = [c for c, p in parent_of.items() if p == parent]
        found += children
        frontier += children
    return found


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f} MiB"


def postgres_cpu_s() -> float:
    """CPU seconds of every `postgres` process of this machine (the local server's
    backends, gone ones excepted: a bound, for the Postgres server on this box)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            text = stat.read_text()
            if text[text.index("(") + 1 : text.rindex(")")] == "postgres":
                total += cpu_s(int(stat.parent.name))
    return total


def load_cpu_s() -> float:
    """CPU seconds of this process and its client processes (those that ended)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cpu_s(pid: int, system_only: bool = False) -> float:
    """User + system (or system only) CPU seconds of a process; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    # utime and stime are fields 14 and 15 of proc_pid_stat(5); fields[0] is field 3.
    ticks = int(fields[12]) if system_only else int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> tuple[int, int]:
    """(current, peak) resident memory of a process, in KiB; (0, 0) once it is gone."""
    fields = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    base: str

    def pids(self) -> list[int]:
        return [self.process.pid, *descendants(self.process.pid)]

    def rss_kib(self) -> int:
        """Resident memory of all the server's processes together."""
        return sum(rss_kib(pid)[0] for pid in self.pids())

    def cpu_s(self) -> float:
        """CPU time (user + system) the server's live processes have used."""
        return sum(cpu_s(pid) for pid in self.pids())

    def system_s(self) -> float:
        """The part of cpu_s() spent in the kernel (sockets, epoll, page faults)."""
        return sum(cpu_s(pid, system_only=True) for pid in self.pids())

    def memory_line(self) -> str:
        parts = []
        for pid in self.pids():
            rss, peak = rss_kib(pid)
            parts.append(f"pid {pid} {mib(rss)} (peak {mib(peak)})")
        return f"{mib(self.rss_kib())} in all: " + ", ".join(parts)


@contextlib.contextmanager
def serving(
    url: str, config: Path, workers: int, max_active: int, log: Path, pooler: str = "none"
) -> Iterator[Server]:
    port = free_port()
    env = {
        **os.environ,
        "TOOLGATE_DATABASE_URL": url,
        "TOOLGATE_CONFIG": str(config),
        "TOOLGATE_MAX_ACTIVE_RUNS": str(max_active),
        # Straight at Postgres all the same: what is measured is the cost of keeping no
        # statement prepared, not a pooler's own.
        "TOOLGATE_DATABASE_POOLER": pooler,
        "TOOLGATE_LISTEN_DATABASE_URL": url,
    }
    command = [sys.executable, "-m", "app", "serve", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--workers", str(workers)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield Server(process, f"http://127.0.0.1:{port}")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def log_summary(log: Path) -> list[str]:
    """Counts of the server log's warnings and errors, and the first few distinct ones."""
    lines = log.read_text(errors="replace").splitlines()
    pattern = re.compile(r"\b(WARNING|ERROR|CRITICAL|Traceback)\b")
    found = [(m.group(1), ln) for ln in lines if (m := pattern.search(ln))]
    counts = Counter(level for level, _ in found)
    distinct = list(dict.fromkeys(ln.strip()[:160] for _, ln in found))[:5]
    summary = ", ".join(f"{n} {level}" for level, n in counts.items())
    return [f"{len(lines)} lines: {summary or 'no warnings or errors'}", *distinct]


async def wait_healthy(client: httpx.AsyncClient, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            break
        with contextlib.suppress(httpx.HTTPError):
            if (await client.get("/healthz")).status_code == 200:
                return
        await asyncio.sleep(0.1)
    raise SystemExit("the server did not start")


# -- Postgres figures ------------------------------------------------------------------------
def pg_params(url: str) -> dict[str, Any]:
    base = make_url(url)
    return {
        "user": base.username or "postgres",
        "password": base.password,
        "host": base.query.get("host") or base.host or "127.0.0.1",
        "port": base.port or 5432,
        "database": base.database or "postgres",
    }


@dataclass
class Mark:
    lsn: str
    xact_commit: int
    slot: str | None


@dataclass
class WalFigures:
    bytes: int
    #: COMMIT records of transactions that wrote to the bench database (None: not measured).
    commits: int | None
    #: COMMIT records of every database of the server.
    commits_all: int | None
    #: Bytes of the WAL records that touched the bench database, and its COMMITs.
    own_bytes: int | None
    #: pg_stat_database.xact_commit of the bench database, read-only transactions included.
    xact_commit: int


# The WAL is the whole server's: other databases' activity (the other users of this Postgres)
# adds to `bytes` and to `commits_all`. `commits` keeps only transactions with a WAL record
# touching a block of the bench database, which filters that noise out. pg_stat_database lags
# (a backend reports its counts when it goes idle, at most every second, or after 10 s), so
# xact_commit is approximate.
WAL_COMMITS = r"""
WITH r AS (SELECT xid, record_length,
                  block_ref ~ ('rel \d+/' || $3::text || '/') AS ours,
                  resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%' AS commit
           FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)),
     writers AS (SELECT DISTINCT xid FROM r WHERE ours)
SELECT count(*) FILTER (WHERE commit AND xid IN (SELECT xid FROM writers)),
       count(*) FILTER (WHERE commit),
       coalesce(sum(record_length) FILTER (
           WHERE ours OR (commit AND xid IN (SELECT xid FROM writers))), 0)::bigint
FROM r
"""


class Probe:
    """An admin connection to the bench database that measures what a workload wrote."""

    def __init__(self, connection: asyncpg.Connection, oid: int, walinspect: bool) -> None:
        self.connection = connection
        self.oid = oid
        self.walinspect = walinspect

    @classmethod
    async def open(cls, url: str) -> Probe:
        connection = await asyncpg.connect(**pg_params(url))
        try:
            await connection.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            walinspect = True
        except asyncpg.PostgresError as exc:
            print(f"(pg_walinspect unavailable, no transaction counts: {exc})")
            walinspect = False
        oid = await connection.fetchval(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        )
        return cls(connection, oid, walinspect)

    async def step_times(self, steps: int) -> tuple[float, float] | None:
        """Mean time between consecutive model turns in the first and the last quarter of
        the newest run of `steps` steps, from its events: does a step cost more late in a
        run than early? (None if the run table's shape changed.)"""
        try:
            # A row holds one write's events (migration 0021): a turn is one of them.
            ats = await self.connection.fetch(
                "SELECT e.at FROM event e JOIN (SELECT tenant_id, id FROM run WHERE steps = $1 "
                "ORDER BY created_at DESC LIMIT 1) r ON e.tenant_id = r.tenant_id "
                "AND e.run_id = r.id "
                "CROSS JOIN LATERAL json_array_elements(e.events) WITH ORDINALITY AS i(item, ord) "
                "WHERE i.item ->> 0 = 'turn.completed' ORDER BY e.last_seq, i.ord",
                steps,
            )
        except asyncpg.PostgresError:
            return None
        gaps = [
            (b["at"] - a["at"]).total_seconds() * 1000 for a, b in zip(ats, ats[1:], strict=False)
        ]
        quarter = len(gaps) // 4
        if quarter < 2:
            return None
        return statistics.fmean(gaps[:quarter]), statistics.fmean(gaps[-quarter:])

    async def in_flight(self) -> int | None:
        """Runs queued or running, read from the run table (None if its shape changed).
        Read here rather than through the API so that sampling adds no load to the server."""
        try:
            return await self.connection.fetchval(
                "SELECT count(*) FROM run WHERE status IN ('queued', 'running')"
            )
        except asyncpg.PostgresError:
            return None

    async def xact_commit(self) -> int:
        await self.connection.execute("SELECT pg_stat_clear_snapshot()")
        return await self.connection.fetchval(
            "SELECT xact_commit FROM pg_stat_database WHERE datid = $1", self.oid
        )

    async def mark(self) -> Mark:
        slot = None
        if self.walinspect:
            # A temporary slot keeps the workload's WAL from being recycled by a checkpoint
            # before it is read; it goes with this connection if the bench dies.
            slot = f"toolgate_bench_{secrets.token_hex(4)}"
            try:
                await self.connection.execute(
                    "SELECT pg_create_physical_replication_slot($1, true, true)", slot
                )
            except asyncpg.PostgresError:
                slot = None
        lsn = await self.connection.fetchval("SELECT pg_current_wal_flush_lsn()::text")
        return Mark(lsn, await self.xact_commit(), slot)

    async def since(self, mark: Mark) -> WalFigures:
        await asyncio.sleep(SETTLE_S)
        lsn = await self.connection.fetchval("SELECT pg_current_wal_flush_lsn()::text")
        size = await self.connection.fetchval(
            "SELECT pg_wal_lsn_diff($1::text::pg_lsn, $2::text::pg_lsn)::bigint", lsn, mark.lsn
        )
        commits = commits_all = own_bytes = None
        if self.walinspect:
            try:
                commits, commits_all, own_bytes = await self.connection.fetchrow(
                    WAL_COMMITS, mark.lsn, lsn, str(self.oid)
                )
            except asyncpg.PostgresError as exc:
                print(f"(reading the WAL failed: {exc})")
        if mark.slot is not None:
            await self.connection.execute("SELECT pg_drop_replication_slot($1)", mark.slot)
        xact_commit = await self.xact_commit() - mark.xact_commit
        return WalFigures(size, commits, commits_all, own_bytes, xact_commit)


# -- driving runs ----------------------------------------------------------------------------
@dataclass
class Tally:
    runs: int = 0
    ok: int = 0
    steps: int = 0
    server_errors: int = 0
    followed_up: int = 0
    #: Why runs were not ok: "http 503", "finished/max_steps", "ReadTimeout", ...
    failures: Counter[str] = field(default_factory=Counter)
    #: Seconds from create to final, ok runs only.
    latencies: list[float] = field(default_factory=list)

    def fail(self, reason: str) -> None:
        self.failures[reason] += 1


def auth(key: str, *, idempotent: bool = False) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key}"}
    if idempotent:
        headers["Idempotency-Key"] = secrets.token_hex(8)
    return headers


def body(agent: str, rounds: int, wait_s: float = WAIT_S, delay_ms: int = 0) -> dict[str, Any]:
    return {
        "agent": agent,
        "input": "Which databases?",
        "script": script(rounds, delay_ms),
        "wait_s": wait_s,
    }


async def follow(
    client: httpx.AsyncClient, key: str, run_id: str, tally: Tally, give_up_at: float
) -> dict[str, Any] | None:
    """Advances a run past its create request's wait_s until it ends, or None on an error."""
    while time.perf_counter() < give_up_at:
        response = await client.post(
            f"/v1/runs/{run_id}/advance", headers=auth(key), json={"wait_s": WAIT_S}
        )
        if response.status_code == 409:  # it ended between two looks
            response = await client.get(f"/v1/runs/{run_id}", headers=auth(key))
        if response.status_code != 200:
            tally.server_errors += response.status_code >= 500
            tally.fail(f"http {response.status_code} (following)")
            return None
        run = response.json()
        if run["status"] not in ADVANCING:
            return run
    tally.fail("still active at --run-timeout")
    return None


def settle(tally: Tally, run: dict[str, Any], started: float) -> None:
    if run["termination_reason"] == "final":
        tally.ok += 1
        tally.steps += run["usage"]["steps"]
        tally.latencies.append(time.perf_counter() - started)
    else:
        tally.fail(f"{run['status']}/{run['termination_reason']}")


async def run_once(
    client: httpx.AsyncClient, key: str, payload: dict[str, Any], tally: Tally, timeout_s: float
) -> None:
    tally.runs += 1
    started = time.perf_counter()
    try:
        response = await client.post("/v1/runs", headers=auth(key, idempotent=True), json=payload)
        if response.status_code != 201:
            tally.server_errors += response.status_code >= 500
            tally.fail(f"http {response.status_code}")
            return
        run: dict[str, Any] | None = response.json()
        if run is not None and run["status"] in ADVANCING:
            tally.followed_up += 1
            run = await follow(client, key, run["id"], tally, started + timeout_s)
    except httpx.HTTPError as exc:
        tally.fail(type(exc).__name__)
        return
    if run is not None:
        settle(tally, run, started)


async def drive(
    client: httpx.AsyncClient,
    key: str,
    payload: dict[str, Any],
    runs: int,
    clients: int,
    *,
    timeout_s: float,
) -> tuple[Tally, float]:
    """`runs` runs by `clients` clients each doing one run after another; (tally, seconds)."""
    tally = Tally()
    left = iter(range(runs))

    async def client_loop() -> None:
        for _ in left:
            await run_once(client, key, payload, tally, timeout_s)

    started = time.perf_counter()
    await asyncio.gather(*(client_loop() for _ in range(clients)))
    return tally, time.perf_counter() - started


# -- runs in flight --------------------------------------------------------------------------
async def count_active(client: httpx.AsyncClient, key: str) -> int:
    """Runs not yet finished, by the runs list (the bench tenant has no others)."""
    total = 0
    for status in ACTIVE:
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"status": status, "limit": 200}
            if cursor:
                params["cursor"] = cursor
            response = await client.get("/v1/runs", params=params, headers=auth(key))
            response.raise_for_status()
            page = response.json()
            total += len(page["items"])
            cursor = page["next_cursor"]
            if not cursor:
                break
    return total


async def sample(
    server: Server, probe: Probe, into: list[tuple[int, int | None]], stop: asyncio.Event
) -> None:
    """(server RSS in KiB, runs in flight) every quarter second until `stop`."""
    while not stop.is_set():
        into.append((server.rss_kib(), await probe.in_flight()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.25)


@dataclass
class InFlight:
    ids: list[str]
    created_s: float
    #: Active runs by the runs list right after the last create.
    active_after_create: int
    #: From the first create until the runs list showed none active (None: gave up).
    finished_s: float | None
    #: (server RSS in KiB, runs in flight) four times a second.
    samples: list[tuple[int, int | None]]


async def put_in_flight(ctx: Context, tally: Tally) -> InFlight:
    """Creates the runs with wait_s 0, then watches until none is active."""
    client, key, args = ctx.client, ctx.key, ctx.args
    payload = body(DEMO_AGENT, 1, wait_s=0, delay_ms=args.delay_ms)
    ids: list[str] = []
    left = iter(range(args.in_flight))

    async def creator() -> None:
        for _ in left:
            tally.runs += 1
            try:
                response = await client.post(
                    "/v1/runs", headers=auth(key, idempotent=True), json=payload
                )
            except httpx.HTTPError as exc:
                tally.fail(type(exc).__name__)
                continue
            if response.status_code == 201:
                ids.append(response.json()["id"])
            else:
                tally.server_errors += response.status_code >= 500
                tally.fail(f"http {response.status_code}")

    samples: list[tuple[int, int | None]] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample(ctx.server, ctx.probe, samples, stop))
    started = time.perf_counter()
    try:
        await asyncio.gather(*(creator() for _ in range(args.create_clients)))
        created = time.perf_counter() - started
        active = await count_active(client, key)
        finished = None
        while time.perf_counter() < started + args.run_timeout:
            if await count_active(client, key) == 0:
                finished = time.perf_counter() - started
                break
            await asyncio.sleep(0.25)
    finally:
        stop.set()
        await sampler
    return InFlight(ids, created, active, finished, samples)


async def check_runs(
    client: httpx.AsyncClient, key: str, ids: list[str], tally: Tally, clients: int
) -> None:
    """Reads each run once it has ended; its latency is the server's created to updated."""
    left = iter(ids)

    async def reader() -> None:
        for run_id in left:
            try:
                response = await client.get(f"/v1/runs/{run_id}", headers=auth(key))
            except httpx.HTTPError as exc:
                tally.fail(f"{type(exc).__name__} (reading)")
                continue
            if response.status_code != 200:
                tally.server_errors += response.status_code >= 500
                tally.fail(f"http {response.status_code} (reading)")
                continue
            run = response.json()
            if run["termination_reason"] != "final":
                tally.fail(f"{run['status']}/{run['termination_reason']}")
                continue
            tally.ok += 1
            tally.steps += run["usage"]["steps"]
            took = parse_time(run["updated_at"]) - parse_time(run["created_at"])
            tally.latencies.append(took)

    await asyncio.gather(*(reader() for _ in range(clients)))


def parse_time(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


# -- workloads -------------------------------------------------------------------------------
@dataclass
class Result:
    title: str
    rounds: int
    tally: Tally
    elapsed: float
    wal: WalFigures
    #: CPU seconds the server used during the workload.
    cpu_s: float
    memory: str
    notes: list[str] = field(default_factory=list)
    #: The part of cpu_s spent in the kernel.
    system_s: float = 0.0
    #: CPU seconds of the machine's Postgres processes, and of the load generator.
    postgres_s: float = 0.0
    load_s: float = 0.0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


def report(result: Result) -> None:
    t, wal, steps_per_run = result.tally, result.wal, result.rounds + 1
    print(f"\n== {result.title}")
    failures = ", ".join(f"{k}: {v}" for k, v in t.failures.most_common()) or "none"
    print(
        f"runs              {t.runs}   ok {t.ok}   failures {t.runs - t.ok} ({failures})   "
        f"5xx {t.server_errors}   still active after wait_s {t.followed_up}"
    )
    if t.latencies:
        p50 = pct(t.latencies, 0.50)
        print(
            f"latency           p50 {p50:9.1f} ms   p95 {pct(t.latencies, 0.95):9.1f} ms   "
            f"max {pct(t.latencies, 1.0):9.1f} ms   mean "
            f"{statistics.fmean(t.latencies) * 1000:9.1f} ms"
        )
        print(f"per step          {p50 / steps_per_run:9.2f} ms   (p50 / {steps_per_run} steps)")
    print(
        f"throughput        {t.ok / result.elapsed:9.1f} runs/s   "
        f"{t.steps / result.elapsed:9.1f} steps/s   ({result.elapsed:.2f} s)"
    )
    runs = max(t.runs, 1)
    if wal.commits is not None:
        print(
            f"write xacts       {wal.commits / runs:9.2f} per run   "
            f"{wal.commits / runs / steps_per_run:6.2f} per step   "
            f"({wal.commits} COMMITs touching the bench db; {wal.commits_all} on the server)"
        )
    print(
        f"xact_commit       {wal.xact_commit / runs:9.2f} per run   "
        f"(pg_stat_database, read-only included, approximate)"
    )
    print(
        f"WAL               {wal.bytes / runs:9.0f} B per run   "
        f"{wal.bytes / runs / steps_per_run:7.0f} B per step   "
        f"({wal.bytes / 2**20:.1f} MiB, whole server, by LSN)"
    )
    if wal.own_bytes is not None:
        print(
            f"  bench db's      {wal.own_bytes / runs:9.0f} B per run   "
            f"{wal.own_bytes / runs / steps_per_run:7.0f} B per step   "
            f"(its records' lengths, without page headers and padding)"
        )
    print(
        f"server CPU        {result.cpu_s:9.2f} s   "
        f"{result.cpu_s / result.elapsed:6.0%} of one core   "
        f"{result.cpu_s * 1000 / max(t.steps, 1):.2f} ms per step   "
        f"({result.system_s / max(result.cpu_s, 1e-9):.0%} of it in the kernel)"
    )
    if result.postgres_s or result.load_s:
        steps = max(t.steps, 1)
        print(
            f"postgres CPU      {result.postgres_s:9.2f} s   "
            f"{result.postgres_s * 1000 / steps:.2f} ms per step (all its processes)   "
            f"load generator {result.load_s * 1000 / steps:.2f} ms per step"
        )
    for note in result.notes:
        print(note)
    print(f"server RSS        {result.memory}")
    sys.stdout.flush()


async def closed_loop(
    number: int, title: str, rounds: int, runs: int, clients: int, ctx: Context
) -> Result:
    """`runs` runs, each client creating its next once its last has ended."""
    payload = body(agent_for(rounds), rounds)
    mark, cpu, system = await ctx.probe.mark(), ctx.server.cpu_s(), ctx.server.system_s()
    postgres, load = postgres_cpu_s(), load_cpu_s()
    processes = ctx.args.client_processes if clients > 1 else 1
    driving = 0.0  # CPU of client processes while they drove
    if processes > 1:
        tally, elapsed, driving = await drive_in_processes(
            ctx.server.base, ctx.key, payload, runs, clients, processes,
            timeout_s=ctx.args.run_timeout,
        )  # fmt: skip
    else:
        tally, elapsed = await drive(
            ctx.client, ctx.key, payload, runs, clients, timeout_s=ctx.args.run_timeout
        )
    cpu, system = ctx.server.cpu_s() - cpu, ctx.server.system_s() - system
    postgres = postgres_cpu_s() - postgres
    load = (load_cpu_s() - load if processes == 1 else 0.0) + driving
    wal = await ctx.probe.since(mark)
    label = f"{number}. {title}, N={rounds} ({rounds + 1} steps), {clients} client(s), "
    label += f"{runs} runs" + (f", {processes} client processes" if processes > 1 else "")
    notes = []
    if clients == 1 and rounds >= 20:
        times = await ctx.probe.step_times(rounds + 1)
        if times is not None:
            notes.append(
                f"within a run      {times[0]:.2f} ms a step in its first quarter, "
                f"{times[1]:.2f} ms in its last (the newest run, from its events)"
            )
    return Result(
        label, rounds, tally, elapsed, wal, cpu, ctx.memory(), notes, system, postgres, load
    )


async def in_flight(number: int, ctx: Context) -> Result:
    """Runs created with wait_s 0 whose model turns sleep: memory while they are in flight,
    and how long the server takes to finish them all."""
    args = ctx.args
    before = ctx.server.rss_kib()
    tally = Tally()
    mark, cpu = await ctx.probe.mark(), ctx.server.cpu_s()
    flight = await put_in_flight(ctx, tally)
    cpu = ctx.server.cpu_s() - cpu
    elapsed = flight.finished_s if flight.finished_s is not None else args.run_timeout
    wal = await ctx.probe.since(mark)
    await check_runs(ctx.client, ctx.key, flight.ids, tally, args.create_clients)
    peak = max((rss for rss, _ in flight.samples), default=0)
    counts = [n for _, n in flight.samples if n is not None]
    most = f"at most {max(counts)} running or queued at once" if counts else "count unknown"
    finished = (
        f"{flight.finished_s:.2f} s after the first create, "
        f"{flight.finished_s - flight.created_s:.2f} s after the last"
        if flight.finished_s is not None
        else f"NOT within --run-timeout {args.run_timeout} s"
    )
    notes = [
        f"created           {len(flight.ids)} in {flight.created_s:.2f} s "
        f"({args.create_clients} clients, wait_s 0); {flight.active_after_create} active then; "
        f"{most}",
        f"all finished      {finished}   (model time per run: 2 x {args.delay_ms} ms; "
        f"TOOLGATE_MAX_ACTIVE_RUNS={args.max_active_runs})",
        f"RSS in flight     peak {mib(peak)} over {len(flight.samples)} samples "
        f"(before: {mib(before)}, +{mib(peak - before)}, "
        f"{(peak - before) / max(len(flight.ids), 1):.0f} KiB per run)",
        "latency above     the server's created_at to updated_at of each run",
    ]
    title = f"{number}. in flight, N=1, {args.delay_ms} ms turns, {args.in_flight} runs"
    return Result(title, 1, tally, elapsed, wal, cpu, ctx.memory(), notes)


async def parked(number: int, ctx: Context) -> Result:
    """Runs that park awaiting an approval: what they cost the server while they wait."""
    args = ctx.args
    tech_id = await ctx.probe.connection.fetchval(
        "SELECT id FROM technology WHERE tenant_id = 'bench' AND name = 'Kafka'"
    )
    move = {
        "type": "tool_calls",
        "calls": [
            {
                "id": "m1",
                "name": "move_technology_ring",
                "arguments": {"technology_id": tech_id, "ring": "adopt", "rationale": "bench"},
            }
        ],
    }
    payload = {"agent": DEMO_AGENT, "input": "move it", "script": [move, FINAL], "wait_s": 5}
    before = ctx.server.rss_kib()
    tally = Tally()
    mark, cpu = await ctx.probe.mark(), ctx.server.cpu_s()
    left = iter(range(args.parked))
    started = time.perf_counter()

    async def creator() -> None:
        for _ in left:
            tally.runs += 1
            response = await ctx.client.post(
                "/v1/runs", headers=auth(ctx.key, idempotent=True), json=payload
            )
            if response.status_code == 201 and response.json()["status"] == "awaiting_approval":
                tally.ok += 1
                tally.steps += 1
            else:
                tally.server_errors += response.status_code >= 500
                tally.fail(f"http {response.status_code} {response.json().get('status')}")

    await asyncio.gather(*(creator() for _ in range(args.create_clients)))
    elapsed = time.perf_counter() - started
    await asyncio.sleep(2.0)  # settled: what the server keeps while they all wait
    after = ctx.server.rss_kib()
    cpu = ctx.server.cpu_s() - cpu
    wal = await ctx.probe.since(mark)
    waiting, leased = await ctx.probe.connection.fetchrow(
        "SELECT count(*) FILTER (WHERE status = 'awaiting_approval'),"
        " count(*) FILTER (WHERE status = 'awaiting_approval' AND lease_token IS NOT NULL)"
        " FROM run WHERE tenant_id = 'bench'"
    )
    notes = [
        f"parked            {waiting} runs awaiting approval, {leased} of them holding a lease",
        f"RSS while parked  {mib(after)} (before: {mib(before)}, {mib(after - before)} more, "
        f"{(after - before) / max(waiting, 1):.1f} KiB per parked run)",
        await running_beside(ctx, RUNNING_BESIDE),
    ]
    title = f"{number}. parked, {args.parked} runs awaiting approval"
    return Result(title, 0, tally, elapsed, wal, cpu, ctx.memory(), notes)


#: Runs advancing (2 s model turns) while the parked ones wait, for the memory figure.
RUNNING_BESIDE = 50


async def running_beside(ctx: Context, count: int) -> str:
    """`count` runs created with wait_s 0 whose model turns take 2 s, beside the parked
    ones: each server process's largest RSS while they run."""
    payload = body(DEMO_AGENT, 1, wait_s=0, delay_ms=2000)
    peak: dict[int, int] = {}

    async def create() -> None:
        await ctx.client.post("/v1/runs", headers=auth(ctx.key, idempotent=True), json=payload)

    await asyncio.gather(*(create() for _ in range(count)))
    for _ in range(16):  # 4 s: both model turns of every run
        for pid in ctx.server.pids():
            peak[pid] = max(peak.get(pid, 0), rss_kib(pid)[0])
        await asyncio.sleep(0.25)
    running = await ctx.probe.connection.fetchval(
        "SELECT count(*) FROM run WHERE tenant_id = 'bench' AND status IN ('queued', 'running')"
    )
    largest = max(peak.values(), default=0)
    each = ", ".join(f"pid {pid} {mib(kib)}" for pid, kib in peak.items())
    return (
        f"with {count} running beside them ({running} still active after 4 s): "
        f"largest process {mib(largest)} ({each})"
    )


@dataclass
class Context:
    args: argparse.Namespace
    server: Server
    client: httpx.AsyncClient
    probe: Probe
    key: str

    def memory(self) -> str:
        return self.server.memory_line()


async def run_workloads(
    server: Server, url: str, key: str, args: argparse.Namespace
) -> list[Result]:
    probe = await Probe.open(url)
    limits = httpx.Limits(max_connections=max(args.c16_clients, args.c64_clients, 64) + 8)
    timeout = httpx.Timeout(WAIT_S + 30.0)
    results: list[Result] = []
    async with httpx.AsyncClient(base_url=server.base, timeout=timeout, limits=limits) as client:
        await wait_healthy(client, server.process)
        ctx = Context(args, server, client, probe, key)
        print(f"server up         {ctx.memory()}")
        # First requests pay for imports and pool connections; keep them out of workload 1.
        await drive(client, key, body(DEMO_AGENT, 2), args.warmup, 1, timeout_s=args.run_timeout)
        if args.analyze:
            # What autovacuum does within about a minute of a new database's first writes
            # (here after seconds): until then every plan is made on empty tables and kept,
            # and a step's write walked the run table, growing with it (docs/performance.md,
            # "Plans made on empty tables"). So the workloads measure a database past that
            # first pass, as a service in use is.
            await probe.connection.execute("ANALYZE")
        # number: (title, rounds, runs, clients); 6 is `in_flight`.
        closed = {
            1: ("sequential", args.short_rounds, args.seq_runs, 1),
            2: ("sequential", args.long_rounds, args.long_runs, 1),
            3: ("sequential", args.longest_rounds, args.longest_runs, 1),
            4: ("concurrent", args.short_rounds, args.c16_runs, args.c16_clients),
            5: ("concurrent", args.short_rounds, args.c64_runs, args.c64_clients),
        }
        with contextlib.ExitStack() as stack:
            if args.profile:
                stack.enter_context(profiled(server.process.pid, args.profile))
            for number in args.only:
                if number in closed:
                    result = await closed_loop(number, *closed[number], ctx)
                elif number == 6:
                    result = await in_flight(number, ctx)
                else:
                    result = await parked(number, ctx)
                report(result)
                results.append(result)
    await probe.connection.close()
    if args.profile:
        steps = sum(r.tally.steps for r in results)
        print(f"\n== profile ({args.profile}, py-spy collapsed stacks)")
        print("\n".join(profile_summary(args.profile, steps)))
    return results


# -- pgbench ---------------------------------------------------------------------------------
def find_pgbench(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    installed = sorted(Path("/usr/lib/postgresql").glob("*/bin/pgbench"), reverse=True)
    return shutil.which("pgbench") or (str(installed[0]) if installed else None)


def pgbench(server_url: str, args: argparse.Namespace) -> tuple[float, list[str]] | None:
    """TPS of `pgbench -N` on a scratch database of the same server, and its summary lines."""
    exe = find_pgbench(args.pgbench)
    if exe is None:
        print("\n(pgbench not found: no TPS to compare with; --pgbench PATH names it)")
        return None
    with fresh_database(server_url) as url:
        params = pg_params(url)
        env = {
            **os.environ,
            "PGHOST": str(params["host"]),
            "PGPORT": str(params["port"]),
            "PGUSER": params["user"],
        }
        if params["password"]:
            env["PGPASSWORD"] = params["password"]
        database = params["database"]
        init = [exe, "-i", "-q", "-s", str(args.pgbench_scale), database]
        subprocess.run(init, env=env, check=True, capture_output=True)
        command = [exe, "-N", "-c", str(args.pgbench_clients), "-j", str(args.pgbench_jobs)]
        command += ["-T", str(args.pgbench_seconds), database]
        out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    found = re.search(r"^tps = ([\d.]+)", out, re.MULTILINE)
    if found is None:
        print(f"\n(pgbench printed no tps line:)\n{out}")
        return None
    wanted = ("number of transactions actually processed", "latency average", "tps = ")
    lines = [ln for ln in out.splitlines() if ln.startswith(wanted)]
    return float(found.group(1)), [" ".join(command[:-1]) + " <scratch db>", *lines]


def summarize(results: list[Result], tps: float | None) -> None:
    print("\n== summary" + (f" (ratio: steps/s / pgbench -N tps {tps:.0f})" if tps else ""))
    columns = ("p50", "runs/s", "steps/s", "xacts/run", "WAL/step", "own/step", "cpu/step")
    print(f"{'workload':<60}" + "".join(f"{c:>10}" for c in (*columns, "ratio")))
    for r in results:
        t = r.tally
        runs, steps_s = max(t.runs, 1), t.steps / r.elapsed
        per_step = runs * (r.rounds + 1)
        p50 = pct(t.latencies, 0.50) if t.latencies else None
        cells = [
            "n/a" if p50 is None else f"{p50:.1f} ms",
            f"{t.ok / r.elapsed:.1f}",
            f"{steps_s:.1f}",
            "n/a" if r.wal.commits is None else f"{r.wal.commits / runs:.2f}",
            f"{r.wal.bytes / per_step:.0f} B",
            "n/a" if r.wal.own_bytes is None else f"{r.wal.own_bytes / per_step:.0f} B",
            f"{r.cpu_s * 1000 / max(t.steps, 1):.1f} ms",
            f"{steps_s / tps:.4f}" if tps else "n/a",
        ]
        print(f"{r.title[:60]:<60}" + "".join(f"{c:>10}" for c in cells))


# -- main ------------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    add("--quick", action="store_true", help="a short smoke run: fewer runs, shorter pgbench")
    add(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="serve --workers (default: one per core, as the README advises)",
    )
    add("--max-active-runs", type=int, default=512, help="TOOLGATE_MAX_ACTIVE_RUNS (512)")
    add(
        "--pooler",
        choices=("none", "transaction"),
        default="none",
        help="TOOLGATE_DATABASE_POOLER (none): transaction measures statements kept unprepared",
    )
    add("--only", default="1,2,3,4,5,6,7", help="workloads to run, e.g. 1,6 (default all)")
    add("--warmup", type=int, default=100, help="runs before workload 1, not measured (100)")
    add(
        "--no-analyze",
        dest="analyze",
        action="store_false",
        help="skip the ANALYZE after the warm-up: plans stay as made on the new database's "
        "empty tables, as in the first minute of a new deployment",
    )
    add("--short-rounds", type=int, default=2, help="N of workloads 1, 4, 5 (2)")
    add("--long-rounds", type=int, default=50, help="N of workload 2 (50)")
    add("--longest-rounds", type=int, default=200, help="N of workload 3 (200)")
    for name, what in [
        ("seq-runs", "runs of workload 1"),
        ("long-runs", "runs of workload 2"),
        ("longest-runs", "runs of workload 3"),
        ("c16-runs", "runs of workload 4"),
        ("c64-runs", "runs of workload 5"),
        ("in-flight", "runs of workload 6"),
        ("parked", "runs of workload 7"),
        ("pgbench-seconds", "pgbench -T"),
    ]:
        key = name.replace("-", "_")
        add(f"--{name}", type=int, help=f"{what} ({FULL[key]}; --quick: {QUICK[key]})")
    add(
        "--client-processes",
        type=int,
        default=4,
        help="processes driving workloads 4 and 5 (4); 1 drives them from this process",
    )
    add("--c16-clients", type=int, default=16, help="clients of workload 4 (16)")
    add("--c64-clients", type=int, default=64, help="clients of workload 5 (64)")
    add("--delay-ms", type=int, default=2000, help="sleep of each model turn, workload 6 (2000)")
    add("--create-clients", type=int, default=16, help="clients creating workload 6's runs (16)")
    add("--run-timeout", type=float, default=300, help="give up on a run after (300 s)")
    add("--no-pgbench", action="store_true", help="skip pgbench")
    add(
        "--try",
        dest="try_sql",
        action="append",
        metavar="SQL",
        help="a statement run on the migrated database before the server starts, to measure "
        "a schema change before its migration is written (repeatable)",
    )
    add(
        "--no-one-worker",
        action="store_true",
        help="skip workload 1's second measurement on a server of one worker",
    )
    add(
        "--profile",
        nargs="?",
        const=Path("bench/profile.txt"),
        type=Path,
        help="sample the server with py-spy while the workloads run; write its collapsed "
        "stacks to this file (bench/profile.txt) and print the CPU by layer",
    )
    add("--pgbench", help="pgbench executable (default: on PATH or /usr/lib/postgresql)")
    add("--pgbench-clients", type=int, default=16, help="pgbench -c (16)")
    add("--pgbench-jobs", type=int, default=2, help="pgbench -j (2)")
    add("--pgbench-scale", type=int, default=1, help="pgbench -i -s (1)")
    args = parser.parse_args()
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.only = [int(n) for n in args.only.split(",") if n.strip()]
    if not set(args.only) <= set(range(1, 8)):
        parser.error("--only takes workload numbers 1 to 7")
    return args


def header(url: str, args: argparse.Namespace) -> None:
    def git(*command: str) -> str:
        out = subprocess.run(["git", *command], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip()

    async def version() -> str:
        connection = await asyncpg.connect(**pg_params(url))
        try:
            return await connection.fetchval("SHOW server_version")
        finally:
            await connection.close()

    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "app") else ""
    print(f"toolgate bench    {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"code              {git('rev-parse', '--short', 'HEAD')}{dirty} at {ROOT}")
    print(f"postgres          {asyncio.run(version())} at {make_url(url).host or 'socket'}")
    print(
        f"server            serve --workers {args.workers}, "
        f"TOOLGATE_MAX_ACTIVE_RUNS={args.max_active_runs}, "
        f"TOOLGATE_DATABASE_POOLER={args.pooler}; {os.cpu_count()} CPUs"
    )


def main() -> None:
    args = parse_args()
    server_url = os.environ.get(
        "TOOLGATE_BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    header(server_url, args)
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="toolgate-bench-") as folder,
        fresh_database(server_url) as url,
    ):
        key = asyncio.run(prepare(url))
        if args.try_sql:
            asyncio.run(try_sql(url, args.try_sql))
        longest = max(200, args.short_rounds, args.long_rounds, args.longest_rounds)
        config = write_config(Path(folder), longest)
        log = Path(folder) / "server.log"
        lone: list[Result] = []
        if args.workers != 1 and 1 in args.only and not args.no_one_worker:
            # The lone client first on one process, then the same on the server under test
            # (both on an all but fresh database): two workers must not cost it latency.
            one = argparse.Namespace(**{**vars(args), "only": [1], "profile": None})
            alone = Path(folder) / "one-worker.log"
            print("\n== workload 1 on a server of one worker (compared with the one below)")
            with serving(url, config, 1, args.max_active_runs, alone, args.pooler) as server:
                lone = asyncio.run(run_workloads(server, url, key, one))
        with serving(url, config, args.workers, args.max_active_runs, log, args.pooler) as server:
            results = asyncio.run(run_workloads(server, url, key, args))
        results += [replace(r, title=r.title + ", 1 worker") for r in lone]
        print("\n== server log")
        print("\n".join(log_summary(log)))
    tps = None
    if not args.no_pgbench:
        measured = pgbench(server_url, args)
        if measured is not None:
            tps, lines = measured
            print("\n== pgbench")
            print("\n".join(lines))
    summarize(results, tps)
    print(f"\nbench took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
