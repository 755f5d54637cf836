"""What a step writes to the WAL, broken down by relation and by record type.

    .venv/bin/python bench/wal_breakdown.py [--runs 20] [--rounds 2] [--clients 1]
        [--workers 1] [--checkpoint none|before|both] [--by-type] [--try SQL ...]

Sets up like bench_runs.py, whose functions it reuses: a fresh database on the Postgres
server at TOOLGATE_BENCH_DATABASE_URL, migrated and seeded, and one `python -m app serve`
on a loopback port. It warms the server up, then makes `--runs` runs of N = `--rounds`
(N model turns calling search_technologies, then the final answer: N + 1 steps) and reads
the WAL they wrote with pg_walinspect. Every record that touched a block of the bench
database, and the COMMIT of each transaction that wrote one, is charged to the relation of
its first block: a table's heap, one of its indexes, its TOAST table (`table/toast`), or a
fork (`table [vm]`). It prints, per step: heaps against indexes, each table (its heap,
indexes and TOAST together), each relation, each record type (and, with --by-type, each
relation by record type), with records per run, bytes per step, the record data and the
full-page images (FPI) apart.

Full-page images: the first change of a page after a checkpoint logs the whole page.
`--checkpoint before` issues a CHECKPOINT just before the measured runs, so that every page
they touch first pays one (the worst case); `none` issues none, but a checkpoint that
another session of the server causes (DROP DATABASE makes one) still shows up as FPIs, so
compare the figures without them; `both` measures one window of each kind, the checkpointed
one second. Other databases of the server are left out of every figure.

`--try SQL` runs a statement on the migrated database before the server starts, to measure
a schema change (an index dropped, a fillfactor) before writing its migration. Prints
figures, asserts nothing; all traffic stays on 127.0.0.1, bounded in count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_runs import (  # noqa: E402
    SETTLE_S,
    WAIT_S,
    Probe,
    agent_for,
    body,
    drive,
    fresh_database,
    prepare,
    serving,
    try_sql,
    wait_healthy,
    write_config,
)

#: One row per WAL record of the window that touched the bench database, or that commits
#: (or aborts) a transaction that did: its first block's relation, fork, and sizes.
RECORDS = r"""
WITH r AS (
    SELECT xid, resource_manager AS rmgr, record_type AS type, record_length, fpi_length,
           substring(block_ref from 'rel \d+/' || $3::text || '/(\d+)')::oid AS node,
           coalesce(substring(block_ref from 'rel \d+/' || $3::text || '/\d+ fork (\w+)'),
                    'main') AS fork,
           resource_manager = 'Transaction' AS ends
    FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)),
writers AS (SELECT DISTINCT xid FROM r WHERE node IS NOT NULL AND xid <> 0)
SELECT rmgr, type, node, fork, record_length, fpi_length FROM r
WHERE node IS NOT NULL OR (ends AND xid IN (SELECT xid FROM writers))
"""

#: The bench database's relations by file node: tables, indexes, TOAST tables named after
#: the table they belong to.
RELATIONS = """
SELECT pg_relation_filenode(c.oid) AS node,
       coalesce(t.relname || '/toast' || CASE WHEN c.relkind = 'i' THEN ' index' ELSE '' END,
                c.relname) AS name,
       coalesce(i.indrelid::regclass::text, t.relname, c.relname) AS owner,
       CASE c.relkind WHEN 'i' THEN 'indexes' ELSE 'heaps' END
           || CASE WHEN t.relname IS NULL THEN '' ELSE ' (TOAST)' END AS kind
FROM pg_class c
LEFT JOIN pg_index i ON i.indexrelid = c.oid
LEFT JOIN pg_class t ON t.reltoastrelid = coalesce(i.indrelid, c.oid)
WHERE pg_relation_filenode(c.oid) IS NOT NULL
"""


@dataclass
class Tally:
    records: int = 0
    total: int = 0
    fpi: int = 0

    def add(self, length: int, fpi: int) -> None:
        self.records += 1
        self.total += length
        self.fpi += fpi


@dataclass
class Window:
    label: str
    runs: int
    steps: int
    #: Whole-server LSN difference: records, page headers and alignment of every database.
    lsn_bytes: int
    by_relation: dict[tuple[str, str], Tally]
    by_type: dict[str, Tally]
    by_relation_type: dict[tuple[str, str], Tally]
    #: heaps, indexes, TOAST, and records of no relation (COMMITs).
    by_kind: dict[str, Tally]
    total: Tally


async def relations(connection: asyncpg.Connection) -> dict[int, tuple[str, str, str]]:
    rows = await connection.fetch(RELATIONS)
    return {row["node"]: (row["owner"], row["name"], row["kind"]) for row in rows}


async def measure(
    probe: Probe, client: httpx.AsyncClient, key: str, args: argparse.Namespace, label: str
) -> Window:
    payload = body(agent_for(args.rounds), args.rounds)
    if label == "after a CHECKPOINT":
        await probe.connection.execute("CHECKPOINT")
    mark = await probe.mark()
    tally, _ = await drive(
        client, key, payload, args.runs, args.clients, timeout_s=args.run_timeout
    )
    if tally.ok != args.runs:
        print(f"({args.runs - tally.ok} runs failed: {dict(tally.failures)})")
    await asyncio.sleep(SETTLE_S)  # the last runs' trailing writes (their stored answers)
    end = await probe.connection.fetchval("SELECT pg_current_wal_flush_lsn()::text")
    rows = await probe.connection.fetch(RECORDS, mark.lsn, end, str(probe.oid))
    lsn_bytes = await probe.connection.fetchval(
        "SELECT pg_wal_lsn_diff($1::text::pg_lsn, $2::text::pg_lsn)::bigint", end, mark.lsn
    )
    await probe.since(mark)  # drops the slot that kept the window's WAL
    names = await relations(probe.connection)
    by_relation: dict[tuple[str, str], Tally] = defaultdict(Tally)
    by_type: dict[str, Tally] = defaultdict(Tally)
    by_relation_type: dict[tuple[str, str], Tally] = defaultdict(Tally)
    by_kind: dict[str, Tally] = defaultdict(Tally)
    total = Tally()
    for row in rows:
        if row["node"] is None:
            relation, group = ("(no relation)", row["rmgr"]), "no relation (COMMITs)"
        else:
            owner, name, group = names.get(row["node"], ("?", f"filenode {row['node']}", "?"))
            relation = (owner, name if row["fork"] == "main" else f"{name} [{row['fork']}]")
        kind = f"{row['rmgr']}/{row['type']}"
        buckets = (by_relation[relation], by_type[kind], by_relation_type[(relation[1], kind)])
        for bucket in (*buckets, by_kind[group], total):
            bucket.add(row["record_length"], row["fpi_length"])
    steps = args.runs * (args.rounds + 1)
    return Window(
        label, args.runs, steps, lsn_bytes, by_relation, by_type, by_relation_type, by_kind, total
    )


def print_table(title: str, rows: dict[str, Tally], window: Window) -> None:
    steps, runs = window.steps, window.runs
    print(f"\n{title:<52}{'recs/run':>9}{'B/step':>9}{'data':>8}{'FPI':>8}{'share':>7}")
    grand = max(window.total.total, 1)
    for name, t in sorted(rows.items(), key=lambda item: -item[1].total):
        print(
            f"{name[:52]:<52}{t.records / runs:>9.1f}{t.total / steps:>9.0f}"
            f"{(t.total - t.fpi) / steps:>8.0f}{t.fpi / steps:>8.0f}{t.total / grand:>7.1%}"
        )


def report(window: Window, by_type_too: bool) -> None:
    t, steps, runs = window.total, window.steps, window.runs
    print(f"\n== {window.label}: {runs} runs, {steps} steps")
    print(
        f"bench db's WAL    {t.total / steps:7.0f} B per step   "
        f"{(t.total - t.fpi) / steps:7.0f} B without full-page images   "
        f"FPI share {t.fpi / max(t.total, 1):.1%}   {t.records / runs:.1f} records per run"
    )
    print(
        f"whole server      {window.lsn_bytes / steps:7.0f} B per step by LSN "
        "(all databases, page headers and alignment)"
    )
    tables: dict[str, Tally] = defaultdict(Tally)
    for (owner, _), tally in window.by_relation.items():
        tables[owner].records += tally.records
        tables[owner].total += tally.total
        tables[owner].fpi += tally.fpi
    print_table("heaps against indexes", window.by_kind, window)
    print_table("by table (its heap, indexes, TOAST)", tables, window)
    print_table("by relation", {name: v for (_, name), v in window.by_relation.items()}, window)
    print_table("by record type", window.by_type, window)
    if by_type_too:
        rows = {f"{rel} {kind}": v for (rel, kind), v in window.by_relation_type.items()}
        print_table("by relation and record type", rows, window)


async def session(url: str, key: str, base: str, process: object, args: argparse.Namespace) -> None:
    probe = await Probe.open(url)
    if not probe.walinspect:
        raise SystemExit("pg_walinspect is needed")
    timeout = httpx.Timeout(WAIT_S + 30.0)
    async with httpx.AsyncClient(base_url=base, timeout=timeout) as client:
        await wait_healthy(client, process)  # type: ignore[arg-type]
        payload = body(agent_for(args.rounds), args.rounds)
        await drive(client, key, payload, args.warmup, 1, timeout_s=args.run_timeout)
        labels = {
            "none": ["no CHECKPOINT issued"],
            "before": ["after a CHECKPOINT"],
            "both": ["no CHECKPOINT issued", "after a CHECKPOINT"],
        }[args.checkpoint]
        for label in labels:
            report(await measure(probe, client, key, args, label), args.by_type)
    await probe.connection.close()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    add("--runs", type=int, default=20, help="measured runs per window (20)")
    add("--rounds", type=int, default=2, help="N: tool rounds per run (2)")
    add("--clients", type=int, default=1, help="concurrent clients (1)")
    add("--warmup", type=int, default=20, help="runs before the first window (20)")
    add("--workers", type=int, default=1, help="serve --workers (1)")
    add("--checkpoint", choices=("none", "before", "both"), default="both")
    add(
        "--try",
        dest="try_sql",
        action="append",
        metavar="SQL",
        help="a statement run on the migrated database before the server starts, e.g. "
        "'ALTER TABLE tool_call SET (fillfactor = 70)' (repeatable)",
    )
    add("--by-type", action="store_true", help="also print relation by record type")
    add("--run-timeout", type=float, default=120, help="give up on a run after (120 s)")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    server_url = os.environ.get(
        "TOOLGATE_BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    with (
        tempfile.TemporaryDirectory(prefix="toolgate-wal-") as folder,
        fresh_database(server_url) as url,
    ):
        key = asyncio.run(prepare(url))
        if args.try_sql:
            asyncio.run(try_sql(url, args.try_sql))
        config = write_config(Path(folder), max(args.rounds, 2))
        log = Path(folder) / "server.log"
        with serving(url, config, args.workers, 64, log) as server:
            asyncio.run(session(url, key, server.base, server.process, args))


if __name__ == "__main__":
    main()
