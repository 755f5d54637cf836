"""A reference for bench_runs.py: DBOS Transact running the same loop, in-process.

    make bench-dbos                                   # creates .venv-dbos, runs this
    .venv-dbos/bin/python bench/bench_dbos.py [--quick] [--only 1,4] [--queue] [...]

Self-contained on purpose: it imports only the standard library, dbos, and the SQLAlchemy and
psycopg that dbos brings, so that it runs in its own virtualenv (.venv-dbos) and DBOS's
pinned dependencies never meet Toolgate's.

Creates a fresh database on the Postgres server at DBOS_BENCH_DATABASE_URL (default: the
local server, postgresql://postgres@127.0.0.1:5432/postgres), seeds a `technology` table
with the twelve rows of Toolgate's demo radar, launches DBOS in this process with that
database as its system database (DBOS's tables in its `dbos` schema, the radar in
`public`), runs the workloads, and drops the database.

A run of N rounds is one DBOS workflow: N times a checkpointed step `model_turn` returning
the scripted proposal (a tool call of search_technologies, the same dict bench_runs.py
scripts), then a checkpointed step `search_technologies` running the radar search (the
statement of app/db/radar/technologies.py: case-insensitive substring of name, category or
description, the total by a window function, ordered by name, limit 5) and returning the
tool's result; then a last `model_turn` returning the final answer, which the workflow
returns. So N + 1 model turns, as in bench_runs.py, and 2N + 1 DBOS steps; "steps" in the
figures below are model turns, as there, so that per-step figures compare.

Workloads (numbered as in bench_runs.py; defaults, --quick in brackets):

    1. N = 2, sequential (1 client), 50 runs [10]
    2. N = 50, sequential, 5 runs [1]
    3. N = 200, sequential, 3 runs [1]
    4. N = 2, 16 concurrent clients, 400 runs [64]
    5. N = 2, 64 concurrent clients, 640 runs [128]

Concurrency: by default each client is a thread that calls the workflow function and
waits for its result, one run after another, as a DBOS application serving requests from a
thread pool would (a workflow called directly runs in the caller's thread, its status row
written before its first step). With --queue the clients instead enqueue each run on a DBOS
queue (one queue, worker_concurrency 64, polled every --queue-poll-s; the clients' closed
loop bounds the runs in flight) and wait on its handle (polled every --result-poll-s);
DBOS's executor threads run the workflows.

Per workload it prints runs, failures, latency (median, p95), runs/s and steps/s, write
transactions per run (COMMIT records in the WAL of transactions that touched the bench
database, via pg_walinspect), WAL bytes per run and per step (pg_current_wal_flush_lsn
before and after, the whole server; and the bench database's own records), this process's
CPU per step (getrusage: DBOS, its background threads, and the client threads, which do
little), and for the long sequential runs the time between model turns early and late in
a run (from DBOS's checkpoint timestamps). It also prints xact_commit per run from
pg_stat_database, read-only transactions included: read --stats-settle-s (11 s) after each
workload, since backends report their counts late, and also shown net of what DBOS commits
at rest over the same window (its pollers, measured before the first workload).

DBOS runs with its own defaults (sys_db_pool_size 20, pool_pre_ping on its system
database's engine) unless --pool-size or --no-pre-ping say otherwise. Prints figures;
asserts nothing about them. All traffic stays on the given server.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import secrets
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import dbos
import psycopg
import sqlalchemy as sa
from dbos import DBOS
from sqlalchemy.engine import URL, make_url

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
TENANT = "bench"
#: Toolgate's demo radar (app/adapters/tools/builtin/demo_data.py), copied so that this
#: script needs nothing from app/.
SAMPLE: list[tuple[str, str, str, str]] = [
    (
        "PostgreSQL",
        "database",
        "adopt",
        "Relational database. Our default store for transactional data.",
    ),
    (
        "Kafka",
        "messaging",
        "trial",
        "Distributed event log. Trialled for event streaming between services.",
    ),
    ("Kubernetes", "platform", "adopt", "Container orchestration. Runs every production service."),
    ("GraphQL", "api", "assess", "Query language for APIs. Being assessed for the mobile backend."),
    (
        "CORBA",
        "middleware",
        "hold",
        "Distributed object middleware. Do not start new work with it.",
    ),
    ("Redis", "database", "adopt", "In-memory data store. Used for caches and rate limits."),
    ("MongoDB", "database", "hold", "Document database. New services should prefer PostgreSQL."),
    ("DuckDB", "database", "assess", "Embedded analytical database. Assessed for local analytics."),
    ("RabbitMQ", "messaging", "trial", "Message broker. Trialled for task queues."),
    (
        "OpenTelemetry",
        "observability",
        "adopt",
        "Vendor-neutral tracing and metrics. Required in new services.",
    ),
    ("gRPC", "api", "trial", "RPC framework over HTTP/2. Trialled between internal services."),
    (
        "Terraform",
        "platform",
        "adopt",
        "Infrastructure as code. Every cloud resource is declared with it.",
    ),
]
SCHEMA = """
CREATE TABLE technology (
    tenant_id varchar(64) NOT NULL,
    id varchar(64) NOT NULL,
    name varchar(200) NOT NULL,
    category varchar(100) NOT NULL,
    ring varchar(16) NOT NULL,
    description text NOT NULL,
    version integer NOT NULL DEFAULT 1,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, name)
)
"""
#: technology_repo.search's statement (without a ring): strpos, not LIKE, as there.
SEARCH = sa.text(
    "SELECT id, name, category, ring, description, version, updated_at,"
    " count(*) OVER () AS total FROM technology"
    " WHERE tenant_id = :tenant_id AND (strpos(lower(name), lower(:needle)) > 0"
    " OR strpos(lower(category), lower(:needle)) > 0"
    " OR strpos(lower(description), lower(:needle)) > 0)"
    " ORDER BY name LIMIT :limit"
)
FULL = {"seq_runs": 50, "long_runs": 5, "longest_runs": 3, "c16_runs": 400, "c64_runs": 640}
QUICK = {"seq_runs": 10, "long_runs": 1, "longest_runs": 1, "c16_runs": 64, "c64_runs": 128}

#: The radar's engine, set in main() before DBOS launches: module state, as an
#: application's engine would be, since a workflow's arguments are serialized.
RADAR: dict[str, sa.Engine] = {}


# -- the workflow ----------------------------------------------------------------------------
@DBOS.step()
def model_turn(turn: int, rounds: int) -> dict[str, Any]:
    """The scripted model: a tool call for each of the first `rounds` turns, then final."""
    return dict(TOOL_ROUND if turn < rounds else FINAL)


def summary(description: str) -> str:
    first = description.split(". ")[0].strip()
    return first if len(first) <= 160 else first[:157] + "..."


@DBOS.step()
def search_technologies(arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool: the radar search, its result as Toolgate's tool returns it."""
    params = {"tenant_id": TENANT, "needle": arguments["query"].strip(), "limit": 5}
    with RADAR["engine"].connect() as connection:
        rows = connection.execute(SEARCH, params).all()
    items = [
        {"id": r.id, "name": r.name, "category": r.category, "ring": r.ring}
        | {"summary": summary(r.description)}
        for r in rows
    ]
    return {"items": items, "total": int(rows[0].total) if rows else 0}


@DBOS.workflow()
def agent_run(rounds: int, prompt: str) -> dict[str, Any]:
    """Model turns until the final answer; each proposed call runs as a step of its own."""
    turn = 0
    while True:
        proposal = model_turn(turn, rounds)
        turn += 1
        if proposal["type"] == "final":
            return {"text": proposal["text"], "steps": turn}
        for call in proposal["calls"]:
            search_technologies(call["arguments"])


# -- the database ----------------------------------------------------------------------------
def psycopg_url(url: URL) -> str:
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


@contextlib.contextmanager
def fresh_database(server: URL) -> Iterator[URL]:
    """A new database on the server, dropped (with any connection left to it) afterwards."""
    name = f"dbos_bench_{secrets.token_hex(4)}"
    with psycopg.connect(psycopg_url(server), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield server.set(database=name)
    finally:
        with psycopg.connect(psycopg_url(server), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def seed(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.execute(sa.text(SCHEMA))
        connection.execute(
            sa.text(
                "INSERT INTO technology (tenant_id, id, name, category, ring, description)"
                " VALUES (:tenant_id, :id, :name, :category, :ring, :description)"
            ),
            [
                {"tenant_id": TENANT, "id": f"tech_{i:02d}", "name": name}
                | {"category": category, "ring": ring, "description": description}
                for i, (name, category, ring, description) in enumerate(SAMPLE)
            ],
        )


@dataclass
class Mark:
    lsn: str
    xact_commit: int
    slot: str | None
    #: When xact_commit was read (perf_counter).
    at: float


@dataclass
class WalFigures:
    bytes: int
    #: COMMIT records of transactions that wrote to the bench database (None: not measured).
    commits: int | None
    #: Bytes of the WAL records that touched the bench database, and its COMMITs.
    own_bytes: int | None
    #: pg_stat_database.xact_commit of the bench database, read-only transactions included.
    xact_commit: int
    #: Seconds between the two readings of xact_commit.
    window_s: float


# As in bench_runs.py: `commits` keeps only transactions with a WAL record touching a block
# of the bench database, which filters out the other databases of the server.
WAL_COMMITS = """
WITH r AS (SELECT xid, record_length,
                  block_ref ~ ('rel \\d+/' || %(oid)s::text || '/') AS ours,
                  resource_manager = 'Transaction' AND left(record_type, 6) = 'COMMIT' AS commit
           FROM pg_get_wal_records_info(%(start)s::pg_lsn, %(end)s::pg_lsn)),
     writers AS (SELECT DISTINCT xid FROM r WHERE ours)
SELECT count(*) FILTER (WHERE commit AND xid IN (SELECT xid FROM writers)),
       coalesce(sum(record_length) FILTER (
           WHERE ours OR (commit AND xid IN (SELECT xid FROM writers))), 0)::bigint
FROM r
"""


class Probe:
    """An admin connection to the bench database that measures what a workload wrote."""

    def __init__(self, url: URL) -> None:
        self.connection = psycopg.connect(psycopg_url(url), autocommit=True)
        try:
            self.connection.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            self.walinspect = True
        except psycopg.Error as exc:
            print(f"(pg_walinspect unavailable, no transaction counts: {exc})")
            self.walinspect = False
        self.oid = self.value("SELECT oid FROM pg_database WHERE datname = current_database()")

    def value(self, sql: str, params: dict[str, Any] | None = None) -> Any:
        row = self.connection.execute(sql, params).fetchone()
        assert row is not None
        return row[0]

    def step_times(self) -> tuple[float, float] | None:
        """Mean time between consecutive model turns in the first and the last quarter of
        the newest workflow, from DBOS's checkpoints: does a step cost more late in a run
        than early?"""
        rows = self.connection.execute(
            "SELECT completed_at_epoch_ms FROM dbos.operation_outputs WHERE workflow_uuid ="
            " (SELECT workflow_uuid FROM dbos.workflow_status ORDER BY created_at DESC LIMIT 1)"
            " AND function_name LIKE %(name)s ORDER BY function_id",
            {"name": "%model_turn"},
        ).fetchall()
        gaps = [b[0] - a[0] for a, b in zip(rows, rows[1:], strict=False)]
        quarter = len(gaps) // 4
        if quarter < 2:
            return None
        return statistics.fmean(gaps[:quarter]), statistics.fmean(gaps[-quarter:])

    def xact_commit(self) -> int:
        self.connection.execute("SELECT pg_stat_clear_snapshot()")
        return self.value(
            "SELECT xact_commit FROM pg_stat_database WHERE datid = %(oid)s", {"oid": self.oid}
        )

    def mark(self) -> Mark:
        slot = None
        if self.walinspect:
            # A temporary slot keeps the workload's WAL from being recycled by a checkpoint
            # before it is read; it goes with this connection if the bench dies.
            slot = f"dbos_bench_{secrets.token_hex(4)}"
            try:
                self.connection.execute(
                    "SELECT pg_create_physical_replication_slot(%(s)s, true, true)", {"s": slot}
                )
            except psycopg.Error:
                slot = None
        lsn = self.value("SELECT pg_current_wal_flush_lsn()::text")
        return Mark(lsn, self.xact_commit(), slot, time.perf_counter())

    def since(self, mark: Mark, settle_s: float) -> WalFigures:
        """What was written since `mark`, `settle_s` after the workload ended: a backend
        reports its transaction counts to pg_stat_database when it goes idle, but at most
        once a second, else 10 s later (PGSTAT_IDLE_INTERVAL)."""
        time.sleep(settle_s)
        lsn = self.value("SELECT pg_current_wal_flush_lsn()::text")
        size = self.value(
            "SELECT pg_wal_lsn_diff(%(end)s::pg_lsn, %(start)s::pg_lsn)::bigint",
            {"end": lsn, "start": mark.lsn},
        )
        commits = own_bytes = None
        if self.walinspect and size <= 0:
            commits, own_bytes = 0, 0  # nothing written: pg_walinspect refuses an empty range
        elif self.walinspect:
            try:
                params = {"oid": self.oid, "start": mark.lsn, "end": lsn}
                row = self.connection.execute(WAL_COMMITS, params).fetchone()
                assert row is not None
                commits, own_bytes = row
            except psycopg.Error as exc:
                print(f"(reading the WAL failed: {exc})")
        if mark.slot is not None:
            with contextlib.suppress(psycopg.Error):  # a temporary slot goes with its session
                self.connection.execute("SELECT pg_drop_replication_slot(%(s)s)", {"s": mark.slot})
        xact_commit = self.xact_commit() - mark.xact_commit
        return WalFigures(size, commits, own_bytes, xact_commit, time.perf_counter() - mark.at)


# -- driving runs ----------------------------------------------------------------------------
@dataclass
class Tally:
    runs: int = 0
    ok: int = 0
    steps: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    #: Seconds from call (or enqueue) to result, ok runs only.
    latencies: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def cpu() -> tuple[float, float]:
    """(user + system, system) CPU seconds of this process, every thread."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_stime


def runner(args: argparse.Namespace) -> Callable[[int], dict[str, Any]]:
    """How a client runs one workflow of `rounds` rounds and gets its result."""
    if not args.queue:
        return lambda rounds: agent_run(rounds, "Which databases?")
    # One queue for every workload: the clients' closed loop bounds the runs in flight.
    queue = DBOS.register_queue(
        "bench",
        worker_concurrency=max(args.c16_clients, args.c64_clients),
        polling_interval_sec=args.queue_poll_s,
    )

    def enqueued(rounds: int) -> dict[str, Any]:
        handle = queue.enqueue(agent_run, rounds, "Which databases?")
        return handle.get_result(polling_interval_sec=args.result_poll_s)

    return enqueued


def drive(run: Callable[[int], dict[str, Any]], rounds: int, runs: int, clients: int) -> Tally:
    """`runs` runs by `clients` threads each doing one run after another."""
    tally = Tally()
    left = iter(range(runs))
    left_lock = threading.Lock()

    def client() -> None:
        while True:
            with left_lock:
                if next(left, None) is None:
                    return
            started = time.perf_counter()
            try:
                result = run(rounds)
            except Exception as exc:  # a failed run is counted, the others go on
                with tally.lock:
                    tally.runs += 1
                    tally.failures[type(exc).__name__] += 1
                continue
            took = time.perf_counter() - started
            with tally.lock:
                tally.runs += 1
                if result.get("steps") == rounds + 1:
                    tally.ok += 1
                    tally.steps += result["steps"]
                    tally.latencies.append(took)
                else:
                    tally.failures[f"steps {result.get('steps')}"] += 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally


@dataclass
class Result:
    title: str
    rounds: int
    tally: Tally
    elapsed: float
    wal: WalFigures
    cpu_s: float
    system_s: float
    #: xact_commit per second of DBOS at rest (its pollers) and the probe's own statements.
    idle_rate: float
    #: Mean ms between model turns in the first and last quarter of the newest run.
    within: tuple[float, float] | None = None

    def xacts_net(self) -> float:
        """xact_commit per run less what DBOS commits at rest over the same window."""
        background = self.idle_rate * self.wal.window_s
        return (self.wal.xact_commit - background) / max(self.tally.runs, 1)


@dataclass
class Bench:
    args: argparse.Namespace
    probe: Probe
    run: Callable[[int], dict[str, Any]]
    idle_rate: float = 0.0

    def measure_idle(self) -> None:
        """xact_commit per second with no run in flight: DBOS's pollers, the probe's reads."""
        self.probe.since(self.probe.mark(), self.args.stats_settle_s)  # the warm-up's counts
        mark = self.probe.mark()
        wal = self.probe.since(mark, self.args.stats_settle_s)
        self.idle_rate = wal.xact_commit / wal.window_s
        print(
            f"at rest           {self.idle_rate:.1f} xact_commit/s over {wal.window_s:.1f} s "
            f"(DBOS's background pollers and this probe; subtracted below as 'net')"
        )

    def workload(self, number: int, rounds: int, runs: int, clients: int) -> Result:
        mark = self.probe.mark()
        cpu_before, system_before = cpu()
        started = time.perf_counter()
        tally = drive(self.run, rounds, runs, clients)
        elapsed = time.perf_counter() - started
        cpu_after, system_after = cpu()
        wal = self.probe.since(mark, self.args.stats_settle_s)
        how = "sequential" if clients == 1 else "concurrent"
        title = f"{number}. {how}, N={rounds} ({rounds + 1} steps), {clients} client(s), "
        title += f"{runs} runs"
        cpu_s, system_s = cpu_after - cpu_before, system_after - system_before
        within = self.probe.step_times() if clients == 1 and rounds >= 20 else None
        return Result(title, rounds, tally, elapsed, wal, cpu_s, system_s, self.idle_rate, within)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


def report(result: Result) -> None:
    t, wal, steps_per_run = result.tally, result.wal, result.rounds + 1
    print(f"\n== {result.title}")
    failures = ", ".join(f"{k}: {v}" for k, v in t.failures.most_common()) or "none"
    print(f"runs              {t.runs}   ok {t.ok}   failures {t.runs - t.ok} ({failures})")
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
            f"({wal.commits} COMMITs touching the bench db; "
            f"{2 * result.rounds + 1} DBOS steps a run)"
        )
    net = result.xacts_net()
    print(
        f"xact_commit       {wal.xact_commit / runs:9.2f} per run   "
        f"{wal.xact_commit / runs / steps_per_run:6.2f} per step   "
        f"(pg_stat_database, read-only included, over {wal.window_s:.1f} s)"
    )
    print(
        f"  net             {net:9.2f} per run   {net / steps_per_run:6.2f} per step   "
        f"(less {result.idle_rate:.1f}/s at rest over the same window)"
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
        f"process CPU       {result.cpu_s:9.2f} s   "
        f"{result.cpu_s / result.elapsed:6.0%} of one core   "
        f"{result.cpu_s * 1000 / max(t.steps, 1):.2f} ms per step   "
        f"({result.system_s / max(result.cpu_s, 1e-9):.0%} of it in the kernel)"
    )
    if result.within is not None:
        print(
            f"within a run      {result.within[0]:.2f} ms a step in its first quarter, "
            f"{result.within[1]:.2f} ms in its last (the newest run, from its checkpoints)"
        )
    sys.stdout.flush()


def summarize(results: list[Result]) -> None:
    print("\n== summary")
    columns = ("p50 ms", "p95 ms", "runs/s", "steps/s", "xacts/run", "commits/run")
    columns += ("WAL/step", "own/step")
    print(f"{'workload':<54}" + "".join(f"{c:>12}" for c in (*columns, "cpu/step")))
    for r in results:
        t = r.tally
        runs, per_step = max(t.runs, 1), max(t.runs, 1) * (r.rounds + 1)
        cells = [
            f"{pct(t.latencies, 0.5):.1f}" if t.latencies else "n/a",
            f"{pct(t.latencies, 0.95):.1f}" if t.latencies else "n/a",
            f"{t.ok / r.elapsed:.1f}",
            f"{t.steps / r.elapsed:.1f}",
            "n/a" if r.wal.commits is None else f"{r.wal.commits / runs:.2f}",
            f"{r.xacts_net():.2f}",
            f"{r.wal.bytes / per_step:.0f} B",
            "n/a" if r.wal.own_bytes is None else f"{r.wal.own_bytes / per_step:.0f} B",
            f"{r.cpu_s * 1000 / max(t.steps, 1):.2f} ms",
        ]
        print(f"{r.title[:54]:<54}" + "".join(f"{c:>12}" for c in cells))
    print(
        "xacts/run: write transactions (WAL COMMITs); commits/run: pg_stat_database "
        "xact_commit, read-only included, net of DBOS at rest; steps: model turns"
    )


# -- main ------------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    add("--quick", action="store_true", help="a short smoke run: fewer runs")
    add("--only", default="1,2,3,4,5", help="workloads to run, e.g. 1,4 (default all)")
    add("--warmup", type=int, default=5, help="runs before the first workload (5)")
    add("--short-rounds", type=int, default=2, help="N of workloads 1, 4, 5 (2)")
    add("--long-rounds", type=int, default=50, help="N of workload 2 (50)")
    add("--longest-rounds", type=int, default=200, help="N of workload 3 (200)")
    for name, what in [
        ("seq-runs", "runs of workload 1"),
        ("long-runs", "runs of workload 2"),
        ("longest-runs", "runs of workload 3"),
        ("c16-runs", "runs of workload 4"),
        ("c64-runs", "runs of workload 5"),
    ]:
        key = name.replace("-", "_")
        add(f"--{name}", type=int, help=f"{what} ({FULL[key]}; --quick: {QUICK[key]})")
    add("--c16-clients", type=int, default=16, help="clients of workload 4 (16)")
    add("--c64-clients", type=int, default=64, help="clients of workload 5 (64)")
    add(
        "--pool-size",
        type=int,
        help="sys_db_pool_size: DBOS's connections to its system database (DBOS's default)",
    )
    add(
        "--no-pre-ping",
        action="store_true",
        help="DBOS's system database engine without pool_pre_ping (on by DBOS's default)",
    )
    add("--queue", action="store_true", help="enqueue runs on a DBOS queue, not direct calls")
    add("--queue-poll-s", type=float, default=0.01, help="the queue's polling interval (0.01)")
    add("--result-poll-s", type=float, default=0.01, help="get_result's polling interval")
    add(
        "--stats-settle-s",
        type=float,
        default=11.0,
        help="wait after a workload before reading pg_stat_database (11: its 10 s idle flush)",
    )
    args = parser.parse_args()
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.only = [int(n) for n in args.only.split(",") if n.strip()]
    if not set(args.only) <= set(range(1, 6)):
        parser.error("--only takes workload numbers 1 to 5")
    return args


def launch(url: URL, args: argparse.Namespace) -> None:
    config: dbos.DBOSConfig = {
        "name": "toolgate-bench",
        "system_database_url": psycopg_url(url),
        "log_level": "WARNING",
    }
    if args.pool_size is not None:
        config["sys_db_pool_size"] = args.pool_size
    if args.no_pre_ping:
        # DBOS's engine pings each connection it checks out of its pool: a round trip and
        # a transaction of its own before each of DBOS's transactions.
        config["db_engine_kwargs"] = {"pool_pre_ping": False}
    DBOS(config=config)
    DBOS.launch()


def main() -> None:
    args = parse_args()
    server = make_url(
        os.environ.get("DBOS_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    )
    with psycopg.connect(psycopg_url(server)) as connection:
        row = connection.execute("SHOW server_version").fetchone()
    mode = (
        f"a DBOS queue (polled every {args.queue_poll_s} s, results every {args.result_poll_s} s)"
        if args.queue
        else "threads calling the workflow"
    )
    print(f"dbos bench        {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"dbos              {metadata.version('dbos')}, psycopg {metadata.version('psycopg')}")
    print(f"postgres          {row[0] if row else '?'} at {server.host or 'socket'}")
    print(f"concurrency       {mode}; {os.cpu_count()} CPUs")
    print(
        f"system database   sys_db_pool_size {args.pool_size or 'default (20)'}, "
        f"pool_pre_ping {'off' if args.no_pre_ping else 'on (DBOS default)'}"
    )
    started = time.perf_counter()
    results: list[Result] = []
    with fresh_database(server) as url:
        engine = sa.create_engine(
            url.set(drivername="postgresql+psycopg"),
            pool_size=max(args.c16_clients, args.c64_clients),
        )
        seed(engine)
        RADAR["engine"] = engine
        probe = Probe(url)
        launch(url, args)
        try:
            bench = Bench(args, probe, runner(args))
            # First runs pay for imports and pool connections; keep them out of workload 1.
            drive(bench.run, args.short_rounds, args.warmup, 1)
            bench.measure_idle()
            closed = {
                1: (args.short_rounds, args.seq_runs, 1),
                2: (args.long_rounds, args.long_runs, 1),
                3: (args.longest_rounds, args.longest_runs, 1),
                4: (args.short_rounds, args.c16_runs, args.c16_clients),
                5: (args.short_rounds, args.c64_runs, args.c64_clients),
            }
            for number in args.only:
                result = bench.workload(number, *closed[number])
                report(result)
                results.append(result)
        finally:
            DBOS.destroy()
            probe.connection.close()
            engine.dispose()
    summarize(results)
    print(f"\nbench took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
