"""Chaos trials against real server processes on one database (`make chaos`).

- `takeover`: a replica holding runs mid-call, and a create in flight under an
  Idempotency-Key, is SIGKILLed; the other takes its runs over and answers the key.
  Figures: seconds from the kill to the survivor's claim and to the key's answer.
- `crashloop`: 16 clients create runs (one idempotent side effect of 0.8 s each) across
  two replicas while replica A is SIGKILLed every 3 s and restarted at once. Figures:
  runs finished, out of deadline, lost, effects per run, the longest retried create.
- `failover`: a primary and a synchronous standby; under load the primary is crashed and
  the standby promoted, the service on a multi-host URL. Figures: 5xx answers by code,
  acknowledged runs lost, seconds from the promotion to the first success.

Each trial gets a fresh database (on TOOLGATE_DATABASE_URL, else the local server at
127.0.0.1:5432), its own replicas and a fake tool backend that counts sends and
effects. Figures are printed, not asserted: the tests hold the rules, this holds the
numbers (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.backend import FakeBackend, serving  # noqa: E402
from tests.support.dbserver import fresh_database  # noqa: E402
from tests.support.processes import cli_out, free_port  # noqa: E402
from tests.support.replication import fail_over, pgbouncer_for, replicated_pair  # noqa: E402

DEFAULT_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
#: The side effect's duration in the crash loop (the issue's trial).
EFFECT_S = 0.8
DEADLINE_S = 120.0


def tool_config(backend_url: str) -> dict[str, Any]:
    ticket = {
        "kind": "http",
        "description": "Open a ticket.",
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"q": {"type": "string"}, "title": {"type": "string"}},
        },
        "url": f"{backend_url}/tools/ticket",
        "status_url": f"{backend_url}/operations",
        "side_effects": True,
        "idempotent": True,
        "timeout_s": 20,
    }
    return {
        "models": {"scripted": {"provider": "scripted"}},
        "tools": {"ticket": ticket},
        "agents": {"chaos": {"model": "scripted", "tools": ["ticket"]}},
    }


def run_body(title: str, slow: str, wait_s: float) -> dict[str, Any]:
    call = {"id": "c1", "name": "ticket", "arguments": {"q": slow, "title": title}}
    return {
        "agent": "chaos",
        "input": "open a ticket",
        "wait_s": wait_s,
        "limits": {"deadline_s": DEADLINE_S},
        "script": [
            {"type": "tool_calls", "calls": [call]},
            {"type": "final", "text": "opened"},
        ],
    }


# -- the database and the replicas ------------------------------------------------------
def prepared(env: dict[str, str]) -> str:
    """Migrates; a caller's key."""
    cli_out(env, "db", "upgrade")
    made = cli_out(
        env, "keys", "create", "--tenant", "acme", "--subject", "chaos", "--roles", "caller"
    )
    return str(json.loads(made.strip().splitlines()[-1])["key"])


@dataclass
class Replica:
    name: str
    env: dict[str, str]
    log: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.starts += 1
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", str(self.port)],
                cwd=ROOT,
                env={**os.environ, **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    async def healthy(self, timeout_s: float = 60) -> None:
        end = time.monotonic() + timeout_s
        async with httpx.AsyncClient(base_url=self.base, timeout=2) as client:
            while time.monotonic() < end:
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get("/readyz")).status_code == 200:
                        return
                await asyncio.sleep(0.1)
        raise SystemExit(f"replica {self.name} never became ready (see {self.log})")


@contextlib.contextmanager
def replicas(env: dict[str, str], folder: Path, names: str = "ab") -> Iterator[list[Replica]]:
    started = [Replica(n, env, folder / f"{n}.log") for n in names]
    try:
        for replica in started:
            replica.start()
        yield started
    finally:
        for replica in started:
            replica.stop()


@contextlib.asynccontextmanager
async def trial_setup(
    url: str, extra_env: dict[str, str] | None = None
) -> AsyncIterator[tuple[FakeBackend, dict[str, str], str, Path]]:
    """The database at `url` migrated, a tool backend and a config: (backend, env, key,
    folder)."""
    async with contextlib.AsyncExitStack() as stack:
        backend = await stack.enter_async_context(serving())
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="toolgate-chaos-")))
        config = folder / "toolgate.yaml"
        config.write_text(json.dumps(tool_config(backend.url)))
        env = {"TOOLGATE_DATABASE_URL": url, "TOOLGATE_CONFIG": str(config), **(extra_env or {})}
        key = await asyncio.to_thread(prepared, env)
        yield backend, env, key, folder


def effects_by_title(backend: FakeBackend) -> tuple[Counter[str], Counter[str]]:
    """Effects (distinct operations applied) and sends, per run title."""
    title_of: dict[str, str] = {}
    sends: Counter[str] = Counter()
    for received in backend.sent("ticket"):
        title = str(received.body["arguments"]["title"])
        sends[title] += 1
        title_of[received.headers.get("idempotency-key", "")] = title
    effects: Counter[str] = Counter(title_of[k] for k in backend.effects if k in title_of)
    return effects, sends


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def at(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp()


# -- trial 1: SIGKILL takeover --------------------------------------------------------------
async def takeover_round(url: str, held: int) -> dict[str, float]:
    async with trial_setup(url) as (backend, env, key, folder):
        backend.echo_delays["ticket"] = {"slow": 3.0}
        auth = {"Authorization": f"Bearer {key}"}
        with replicas(env, folder) as (a, b):
            await a.healthy()
            await b.healthy()
            async with httpx.AsyncClient(timeout=60, headers=auth) as client:
                ids = []
                for i in range(held):
                    made = await client.post(
                        f"{a.base}/v1/runs",
                        json=run_body(f"t{i}", "slow", 0),
                        headers={**auth, "Idempotency-Key": secrets.token_hex(8)},
                    )
                    assert made.status_code == 201, made.text
                    ids.append(made.json()["id"])
                keyed = {**auth, "Idempotency-Key": f"in-flight-{secrets.token_hex(4)}"}
                body = run_body("keyed", "slow", 30)
                first = asyncio.create_task(
                    client.post(f"{a.base}/v1/runs", json=body, headers=keyed)
                )
                # Every call under way (the fake backend records; it signals nothing).
                while len(backend.sent("ticket")) < held + 1:  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
                a.kill()
                killed = time.time()
                with contextlib.suppress(httpx.HTTPError):
                    await first
                while True:  # the client's retry, on the survivor, as Retry-After says
                    retried = await client.post(f"{b.base}/v1/runs", json=body, headers=keyed)
                    if retried.status_code != 409:
                        break
                    await asyncio.sleep(float(retried.headers.get("Retry-After", "1")))
                answered = time.time() - killed
                ids.append(retried.json()["id"])
                claims, finished = [], 0
                for run_id in ids:
                    while True:
                        got = (await client.get(f"{b.base}/v1/runs/{run_id}")).json()
                        if got["status"] == "finished":
                            break
                        await asyncio.sleep(0.1)
                    finished += got["termination_reason"] == "final"
                    events = await client.get(f"{b.base}/v1/runs/{run_id}/events?limit=200")
                    claimed = [e for e in events.json()["items"] if e["type"] == "run.claimed"]
                    claims += [at(e) - killed for e in claimed if at(e) > killed]
                done = time.time() - killed
        effects, _ = effects_by_title(backend)
    return {
        "taken": min(claims) if claims else float("nan"),
        "answered": answered,
        "all_done": done,
        "finished": finished,
        "runs": len(ids),
        "duplicates": sum(1 for n in effects.values() if n > 1),
    }


def takeover(server_url: str, rounds: int) -> None:
    print(f"== takeover: {rounds} rounds, 4 runs mid-call + 1 keyed create, SIGKILL")
    results = []
    for _ in range(rounds):
        with fresh_database(server_url) as url:
            results.append(asyncio.run(takeover_round(url, 4)))
    for name in ("taken", "answered", "all_done"):
        values = [r[name] for r in results]
        print(f"  {name:9} p50 {statistics.median(values):5.2f} s   max {max(values):5.2f} s")
    runs = sum(r["runs"] for r in results)
    print(f"  runs finished final {sum(r['finished'] for r in results)}/{runs}")
    print(f"  runs with a duplicate effect {sum(r['duplicates'] for r in results)}")


# -- trial 2: a crash loop -------------------------------------------------------------------
@dataclass
class LoopTally:
    acknowledged: dict[str, str] = field(default_factory=dict)  # title -> run id
    statuses: Counter[int] = field(default_factory=Counter)
    transport_errors: int = 0
    retry_waits: list[float] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)


async def create_until_answered(
    clients: list[httpx.AsyncClient], first: int, title: str, tally: LoopTally
) -> dict[str, Any] | None:
    """POST /v1/runs under one Idempotency-Key, on the other replica after a transport
    error, after Retry-After on 409/503; how long the retries waited."""
    headers = {"Idempotency-Key": f"loop-{title}"}
    body = run_body(title, "slow", 30)
    failed_at: float | None = None
    target = first
    for _ in range(600):
        try:
            answer = await clients[target].post("/v1/runs", json=body, headers=headers)
        except httpx.HTTPError:
            tally.transport_errors += 1
            failed_at = failed_at or time.monotonic()
            target = 1 - target
            await asyncio.sleep(0.1)
            continue
        tally.statuses[answer.status_code] += 1
        if answer.status_code in (409, 429, 503):
            failed_at = failed_at or time.monotonic()
            await asyncio.sleep(float(answer.headers.get("Retry-After", "1")))
            continue
        if failed_at is not None:
            tally.retry_waits.append(time.monotonic() - failed_at)
        answer.raise_for_status()
        return dict(answer.json())
    return None


async def follow(
    clients: list[httpx.AsyncClient], first: int, run: dict[str, Any]
) -> dict[str, Any]:
    target = first
    while run["status"] != "finished":
        await asyncio.sleep(0.2)
        try:
            run = (await clients[target].get(f"/v1/runs/{run['id']}")).json()
        except httpx.HTTPError:
            target = 1 - target
    return run


async def crashloop(url: str, runs: int, clients_n: int, every_s: float) -> None:
    print(
        f"== crashloop: {runs} runs, {clients_n} clients, a side effect of {EFFECT_S} s each,"
        f" replica A SIGKILLed every {every_s} s and restarted"
    )
    async with trial_setup(url) as (backend, env, key, folder):
        backend.echo_delays["ticket"] = {"slow": EFFECT_S}
        tally = LoopTally()
        with replicas(env, folder) as (a, b):
            await a.healthy()
            await b.healthy()
            auth = {"Authorization": f"Bearer {key}"}
            pairs = [
                [httpx.AsyncClient(base_url=r.base, timeout=60, headers=auth) for r in (a, b)]
                for _ in range(clients_n)
            ]
            queue = list(range(runs))
            started = time.monotonic()

            async def client_loop(c: int) -> None:
                clients = pairs[c]
                while queue:
                    i = queue.pop()
                    first = i % 2
                    t0 = time.monotonic()
                    made = await create_until_answered(clients, first, f"r{i}", tally)
                    if made is None:
                        continue
                    tally.acknowledged[f"r{i}"] = made["id"]
                    done = await follow(clients, first, made)
                    tally.durations.append(time.monotonic() - t0)
                    tally.reasons[str(done.get("termination_reason"))] += 1

            async def killer() -> int:
                kills = 0
                while queue:
                    await asyncio.sleep(every_s)
                    if not queue:
                        break
                    a.kill()
                    kills += 1
                    a.start()
                return kills

            kill_task = asyncio.create_task(killer())
            await asyncio.gather(*(client_loop(c) for c in range(clients_n)))
            kills = await kill_task
            elapsed = time.monotonic() - started
            stalls = await takeover_stalls(pairs, list(tally.acknowledged.values()))
            for pair in pairs:
                for client in pair:
                    await client.aclose()
        effects, sends = effects_by_title(backend)
    acknowledged = len(tally.acknowledged)
    finished = sum(tally.reasons.values())
    print(f"  kills {kills}, in {elapsed:.0f} s")
    lost = acknowledged - finished
    print(f"  acknowledged {acknowledged}/{runs}, finished {finished}, lost {lost}")
    print(f"  ended: {dict(tally.reasons)}")
    print(f"  out of deadline: {tally.reasons.get('deadline', 0)}")
    dup = sum(1 for t in tally.acknowledged if effects[t] > 1)
    none = sum(1 for t in tally.acknowledged if effects[t] == 0)
    applied = sum(effects.values())
    print(f"  effects: {applied} for {acknowledged} runs; duplicated {dup}, none {none}")
    print(f"  sends: {sum(sends.values())} (an idempotent re-send after a kill is allowed)")
    answers = dict(sorted(tally.statuses.items()))
    print(f"  answers: {answers}, transport errors {tally.transport_errors}")
    print(
        f"  runs taken over {len(stalls)}: the stall before the new claim p50 "
        f"{pct(stalls, 50):.2f} s, max {max(stalls, default=0):.2f} s"
    )
    waits = tally.retry_waits
    print(
        f"  retried creates {len(waits)}: wait p50 {pct(waits, 50):.2f} s, max "
        f"{max(waits, default=0):.2f} s"
    )
    print(
        f"  run seconds p50 {pct(tally.durations, 50):.2f}, p99 {pct(tally.durations, 99):.2f},"
        f" max {max(tally.durations, default=0):.2f}"
    )


async def takeover_stalls(pairs: list[list[httpx.AsyncClient]], ids: list[str]) -> list[float]:
    """For each run claimed again (its holder died), the seconds from its last event before
    that claim to the claim: how long the run stood still."""
    stalls: list[float] = []
    todo = list(ids)

    async def reader(client: httpx.AsyncClient) -> None:
        while todo:
            run_id = todo.pop()
            items = (await client.get(f"/v1/runs/{run_id}/events?limit=200")).json()["items"]
            claims = 0
            for before, event in itertools.pairwise(items):
                if event["type"] == "run.claimed":
                    claims += 1
                    if claims > 1 or before["type"] != "run.created":  # not its first
                        stalls.append(at(event) - at(before))

    await asyncio.gather(*(reader(pair[1]) for pair in pairs))
    return stalls


# -- trial 3: a failover under load ---------------------------------------------------------
@dataclass
class Answered:
    at: float
    status: int  # 0: no answer (transport error)
    retry_after: bool


async def failover(clients_n: int, load_s: float, synchronous: bool, pooler: bool) -> None:
    mode = "synchronous" if synchronous else "asynchronous"
    via = " through PgBouncer" if pooler else " on a multi-host URL"
    print(f"== failover: {mode} standby{via}, {clients_n} clients, primary crashed under load")
    with contextlib.ExitStack() as stack:
        pair = stack.enter_context(replicated_pair(synchronous=synchronous))
        extra: dict[str, str] = {}
        server_url = pair.url()
        bouncer = None
        if pooler:
            bouncer = stack.enter_context(pgbouncer_for(pair))
            server_url = bouncer.url
            extra["TOOLGATE_LISTEN_DATABASE_URL"] = bouncer.session_url
            extra["TOOLGATE_DATABASE_POOLER"] = "transaction"
        async with trial_setup(server_url, extra) as (backend, env, key, folder):
            backend.echo_delays["ticket"] = {"slow": 0.2}
            with replicas(env, folder) as (a, b):
                await a.healthy()
                await b.healthy()
                figures = await failover_load(pair, a, b, key, clients_n, load_s, bouncer)
            effects, _ = effects_by_title(backend)
    answers, acknowledged, lost, unfinished, crashed_at, promoted_at = figures
    codes = Counter(x.status for x in answers)
    bad = [x for x in answers if x.status >= 500 and not (x.status == 503 and x.retry_after)]
    after = [x.at for x in answers if x.at > promoted_at and 200 <= x.status < 300]
    print(f"  answers: {dict(sorted(codes.items()))} (0: no answer)")
    print(f"  5xx other than 503 with Retry-After: {len(bad)}")
    print(f"  primary down to standby promoted: {promoted_at - crashed_at:.2f} s")
    print(f"  promoted to the first success: {(min(after) - promoted_at) if after else -1:.2f} s")
    print(f"  acknowledged runs {len(acknowledged)}, lost {lost}, not finished {unfinished}")
    dup = sum(1 for t in acknowledged if effects[t] > 1)
    print(f"  runs with a duplicate effect {dup}")


async def failover_load(
    pair: Any, a: Replica, b: Replica, key: str, clients_n: int, load_s: float, bouncer: Any
) -> tuple[list[Answered], dict[str, str], int, int, float, float]:
    auth = {"Authorization": f"Bearer {key}"}
    clients = [
        httpx.AsyncClient(base_url=r.base, timeout=30, headers=auth) for r in (a, b) * clients_n
    ]
    answers: list[Answered] = []
    acknowledged: dict[str, str] = {}
    stop_at = time.monotonic() + load_s
    count = itertools.count()

    async def client_loop(client: httpx.AsyncClient) -> None:
        while time.monotonic() < stop_at:
            title = f"f{next(count)}"
            headers = {"Idempotency-Key": f"failover-{title}"}
            try:
                made = await client.post(
                    "/v1/runs", json=run_body(title, "slow", 5), headers=headers
                )
            except httpx.HTTPError:
                answers.append(Answered(time.monotonic(), 0, False))
                await asyncio.sleep(0.2)
                continue
            retry = "retry-after" in made.headers
            answers.append(Answered(time.monotonic(), made.status_code, retry))
            if made.status_code in (200, 201):
                acknowledged[title] = made.json()["id"]
            elif retry:
                await asyncio.sleep(min(float(made.headers["retry-after"]), 1.0))

    loops = [asyncio.create_task(client_loop(c)) for c in clients[:clients_n]]
    await asyncio.sleep(load_s / 3)
    done = await asyncio.to_thread(fail_over, pair, down_s=1.0)
    if bouncer is not None:  # what an operator (or a failover manager) does
        await asyncio.to_thread(bouncer.point_at, pair.standby)
    await asyncio.gather(*loops)
    lost = unfinished = 0
    end = time.monotonic() + DEADLINE_S
    for run_id in acknowledged.values():
        while True:
            got = await clients[1].get(f"/v1/runs/{run_id}")
            if got.status_code == 404:
                lost += 1
                break
            if got.status_code == 200 and got.json()["status"] == "finished":
                break
            if time.monotonic() > end:
                unfinished += 1
                break
            await asyncio.sleep(0.2)
    for client in clients:
        await client.aclose()
    return answers, acknowledged, lost, unfinished, done.crashed_at, done.promoted_at


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="takeover,crashloop,failover")
    parser.add_argument("--rounds", type=int, default=5, help="takeover rounds")
    parser.add_argument("--runs", type=int, default=1000, help="crash-loop runs")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--every", type=float, default=3.0, help="seconds between kills")
    parser.add_argument("--load-s", type=float, default=15.0, help="failover: seconds of load")
    parser.add_argument("--asynchronous", action="store_true", help="failover: async standby")
    parser.add_argument("--pooler", action="store_true", help="failover: through PgBouncer")
    return parser.parse_args()


def main() -> None:
    """Each trial on a fresh database of the server (the failover's on a pair of its own)."""
    args = parse_args()
    server_url = os.environ.get("TOOLGATE_DATABASE_URL", DEFAULT_URL)
    only = set(args.only.split(","))
    if "takeover" in only:
        takeover(server_url, args.rounds)
    if "crashloop" in only:
        with fresh_database(server_url) as url:
            asyncio.run(crashloop(url, args.runs, args.clients, args.every))
    if "failover" in only:
        asyncio.run(failover(args.clients, args.load_s, not args.asynchronous, args.pooler))


if __name__ == "__main__":
    main()
