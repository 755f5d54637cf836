"""A database crash under load: a real server process on its own embedded Postgres, which
the test stops (`pg_ctl -m immediate`, a crash) and starts again while clients keep
creating runs and runs are in the middle of slow tool calls.

What must hold: every answer during the outage is a clean `503` problem (or a normal
answer); no run is lost; the runs in flight go on as soon as the database is back, not a
lease later; a retried Idempotency-Key gets its run, not `409` for the lock's lifetime;
and the log says one warning when the database goes and one line when it is back, in
structured lines, with no traceback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from sqlalchemy import text

from app.db import migrate
from app.db.session import make_engine, make_sessionmaker
from tests.support.backend import Answer, FakeBackend, serving
from tests.support.factories import final, tool_calls
from tests.support.processes import caller_key, free_port, wait_healthy
from tests.support.waiting import until

LEASE_S = 60  # far longer than the test allows runs to take after the database is back
CLIENTS = 6
TOOL_DELAY_S = 0.8


@dataclass
class Postgres:
    """An embedded Postgres this test may crash and start again."""

    folder: Path
    server: Any

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@/postgres?host={self.folder}"

    def _pg_ctl(self, *args: str) -> None:
        from pgserver._commands import pg_ctl

        pg_ctl(["-w", *args], pgdata=self.folder, user=self.server.system_user, timeout=60)

    def crash(self) -> None:
        self._pg_ctl("-m", "immediate", "stop")

    def start(self) -> None:
        # The options pgserver itself starts with: no TCP, the socket in the data folder.
        self._pg_ctl("-o", '-h ""', "-o", f"-k {self.folder}", "-l", str(self.server.log), "start")


@contextlib.contextmanager
def restartable_postgres() -> Iterator[Postgres]:
    import pgserver

    folder = Path(tempfile.mkdtemp(prefix="tg-pg-"))
    server = pgserver.get_server(str(folder), cleanup_mode="delete")
    try:
        yield Postgres(folder, server)
    finally:
        with contextlib.suppress(Exception):
            server.cleanup()


def slow_tool_config(backend: FakeBackend, folder: Path) -> Path:
    """The demo agent with one read-only HTTP tool that answers slowly, so that runs are
    in the middle of a call when the database goes."""
    config = {
        "models": {"scripted": {"provider": "scripted"}},
        "tools": {
            "slow_read": {
                "kind": "http",
                "description": "Reads slowly.",
                "input_schema": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"q": {"type": "string"}},
                },
                "url": backend.tool_url("slow_read"),
                "timeout_s": 5,
            }
        },
        "agents": {
            "slow": {
                "model": "scripted",
                "instructions": "Answer.",
                "tools": ["slow_read"],
                "limits": {"deadline_s": 300},
            }
        },
    }
    path = folder / "outage.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@dataclass
class Load:
    """Clients that each create runs one after another, retrying a refused request with
    the same Idempotency-Key until it is answered with a run."""

    base: str
    headers: dict[str, str]
    statuses: list[int] = field(default_factory=list)
    problems: list[tuple[int, str, str | None, str]] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)  # Idempotency-Key → run id
    #: When each key got its run, and the 409s answered after the database was back.
    late_conflicts: int = 0
    database_back_at: float | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    #: When each client sent the request it last had answered.
    answered_sent: dict[int, float] = field(default_factory=dict)

    def all_answered_since(self, at: float) -> bool:
        """Whether every client has had an answer to a request sent after `at` (so none
        is still waiting on one sent before)."""
        return len(self.answered_sent) == CLIENTS and min(self.answered_sent.values()) > at

    async def client(self, number: int) -> None:
        loop = asyncio.get_running_loop()
        async with httpx.AsyncClient(base_url=self.base, timeout=30) as http:
            serial = 0
            while not self.stop.is_set():
                serial += 1
                key = f"client-{number}-{serial}"
                body = {
                    "agent": "slow",
                    "input": "q",
                    "wait_s": 2,
                    "script": [tool_calls(("c1", "slow_read", {"q": key})), final("done")],
                }
                while key not in self.runs:
                    sent = loop.time()
                    response = await http.post(
                        "/v1/runs", headers={**self.headers, "Idempotency-Key": key}, json=body
                    )
                    self.statuses.append(response.status_code)
                    self.answered_sent[number] = sent
                    if response.status_code in (200, 201, 202):
                        self.runs[key] = response.json()["id"]
                        break
                    self.problems.append(
                        (
                            response.status_code,
                            response.headers.get("content-type", ""),
                            response.headers.get("retry-after"),
                            response.text,
                        )
                    )
                    back = self.database_back_at
                    if response.status_code == 409 and back is not None and loop.time() > back + 3:
                        self.late_conflicts += 1
                    await asyncio.sleep(0.25)  # sooner than Retry-After: a busy client
                await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def server_process(env: dict[str, str], port: int, log: Path) -> AsyncIterator[None]:
    import os
    import signal
    import sys

    from tests.support.processes import ROOT

    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "app",
            "serve",
            "--port",
            str(port),
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
        try:
            yield
        finally:
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    await asyncio.wait_for(process.wait(), 15)
                except TimeoutError:
                    os.killpg(process.pid, signal.SIGKILL)


async def test_a_database_crash_under_load_loses_nothing_and_is_said_once() -> None:
    loop = asyncio.get_running_loop()
    with restartable_postgres() as pg, tempfile.TemporaryDirectory() as scratch:
        engine = make_engine(pg.url, pool_size=2)
        await migrate.upgrade(engine)
        key = await caller_key(make_sessionmaker(engine))
        await engine.dispose()

        async with serving() as backend:
            slow = Answer(200, {"output": {"ok": True}}, delay_s=TOOL_DELAY_S)
            backend.answer("slow_read", *[slow] * 10_000)
            log = Path(scratch) / "server.log"
            port = free_port()
            env = {
                "TOOLGATE_DATABASE_URL": pg.url,
                "TOOLGATE_CONFIG": str(slow_tool_config(backend, Path(scratch))),
                "TOOLGATE_LEASE_S": str(LEASE_S),
                "TOOLGATE_DRIVER_POLL_S": "0.5",
            }
            async with server_process(env, port, log):
                base = f"http://127.0.0.1:{port}"
                await wait_healthy(base)
                load = Load(base, {"Authorization": f"Bearer {key}"})
                clients = [asyncio.create_task(load.client(n)) for n in range(CLIENTS)]
                # Steady state: every client has had a run.
                await until(lambda: len(load.runs) >= CLIENTS, timeout_s=30, what="the load")
                await in_flight(backend, "slow_read")  # crash with runs mid tool call
                await asyncio.to_thread(pg.crash)
                crashed_at = loop.time()
                before = len(load.statuses)
                # Down until clients were refused, a run caught mid-step waits for it, and
                # every request made before the crash has had its answer (its wait_s over):
                # none spans the outage.
                await until(
                    lambda: (
                        503 in load.statuses[before:]
                        and load.all_answered_since(crashed_at)
                        and "waits for the database" in log.read_text()
                    ),
                    timeout_s=30,
                    what="the outage seen",
                )
                await asyncio.to_thread(pg.start)
                load.database_back_at = back = loop.time()
                # The load goes on against the recovered database: as many runs again as
                # there are clients.
                made = len(load.runs)
                await until(lambda: len(load.runs) >= made + CLIENTS, timeout_s=30, what="runs")
                load.stop.set()
                await asyncio.wait_for(asyncio.gather(*clients), 60)
                recovered_s = loop.time() - back

                # Every key has its run, and every run finishes well within one lease.
                finished = await all_finished(base, load.headers, load.runs, timeout_s=30)
                settled_s = loop.time() - back

        log_lines = log.read_text().splitlines()
        stored = await _count_runs(pg.url)

    # No run lost, none made twice: one run per key, each stored once.
    assert len(set(load.runs.values())) == len(load.runs) == stored

    assert set(load.statuses) <= {200, 201, 202, 409, 503}, load.statuses
    assert 503 in load.statuses, "the outage was seen by clients"
    for status, content_type, retry_after, body in load.problems:
        assert content_type.startswith("application/problem+json"), body
        assert "Traceback" not in body and "SELECT" not in body
        if status == 503:
            assert retry_after is not None and json.loads(body)["status"] == 503
    assert load.late_conflicts == 0, "a retried key stayed locked after the database was back"
    assert recovered_s < 20
    entries = [json.loads(line) for line in log_lines if line.startswith("{")]
    failed = [e["exception"] for e in entries if "exception" in e]  # why, when it fails
    assert settled_s < LEASE_S / 4, (f"runs waited {settled_s:.1f}s: given up", failed[:1])
    assert finished and set(finished.values()) == {"final"}, finished

    assert len(entries) == len([line for line in log_lines if line.strip()]), "non-JSON lines"
    loud = [e for e in entries if e["level"] in ("WARNING", "ERROR", "CRITICAL")]
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= set(entry)
        assert "exception" not in entry, f"{entry['message']}: {entry.get('exception')}"
    outage = [e for e in entries if e["logger"] == "app.outage"]
    assert [e["message"].startswith("the database is unavailable") for e in outage] == [
        True,
        False,
    ], outage
    assert outage[1]["message"] == "the database answers again"
    assert len(loud) == 2, loud
    # Runs caught mid-step by the crash were held on to, and went on once it was over.
    waited = {e["run_id"] for e in entries if e["message"].endswith("waits for the database")}
    went_on = {e["run_id"] for e in entries if e["message"].endswith(" goes on")}
    # (A run whose write landed just as the database went, its answer lost, finds on
    # recovery that it was finished or handed on by that write, and has nothing to resume.)
    assert waited and went_on and went_on <= waited, (waited, went_on, loud)


async def in_flight(backend: FakeBackend, tool: str, timeout_s: float = 20) -> None:
    """Until a call of `tool` is being answered right now."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while backend.busy[tool] == 0:
        assert loop.time() < end, f"no call of {tool} was ever in flight"
        await asyncio.sleep(0.01)


async def all_finished(
    base: str, headers: dict[str, str], runs: dict[str, str], timeout_s: float
) -> dict[str, str]:
    """Each run's termination reason, once all have finished (or what there is at the end)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    reasons: dict[str, str] = {}
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        while loop.time() < end:
            for run_id in set(runs.values()) - set(reasons):
                body = (await http.get(f"/v1/runs/{run_id}", headers=headers)).json()
                if body["status"] == "finished":
                    reasons[run_id] = body["termination_reason"]
            if len(reasons) == len(set(runs.values())):
                return reasons
            await asyncio.sleep(0.3)
    return {**{r: "unfinished" for r in runs.values()}, **reasons}


async def _count_runs(url: str) -> int:
    engine = make_engine(url, pool_size=1)
    try:
        async with engine.connect() as connection:
            return int((await connection.execute(text("SELECT count(*) FROM run"))).scalar_one())
    finally:
        await engine.dispose()
