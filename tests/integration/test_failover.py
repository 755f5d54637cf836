"""Database failover under load (docs/runbook.md, "Database failover"): a primary and a
synchronous streaming standby (tests/support/replication.py), a real server process on
them, clients creating runs, reading them and approving previews. The primary is crashed
(`pg_ctl stop -m immediate`) and the standby promoted, the service is not restarted.

What must hold: while there is no primary, every answer that is not a success is a clean
`503` problem with `Retry-After`, never a `500`; the service writes again within seconds
of the promotion; nothing it acknowledged is lost: every run it answered with is on the
new primary and finishes `final` with its tool call, and every approval it answered is
recorded there. Once straight on a multi-host URL (libpq's form, as operators write it),
once through a PgBouncer that the operator points at the new primary and reloads."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import httpx
import pytest

from tests.support.factories import final, run_body, tool_calls
from tests.support.processes import cli_out, free_port, server, wait_healthy
from tests.support.replication import Pair, Pooler, pgbouncer_for, replicated_pair
from tests.support.waiting import until

CREATORS = 4
READERS = 2
#: The 503s the clients meet before the promotion (so that they did meet the failover).
REFUSALS = 2 * CREATORS
#: The bound on writing again after the promotion (or the pooler's reload).
RECOVERY_BOUND_S = 10.0
TENANT = "acme"


@dataclass(frozen=True)
class Answer:
    what: str
    #: Whether an earlier request of the same operation (its Idempotency-Key) was refused.
    retried: bool
    status: int
    sent: float
    at: float
    content_type: str
    retry_after: str | None
    body: str


@dataclass
class Load:
    """Creators (one run after another, a refused create retried with the same
    Idempotency-Key), readers (a run, the list) and an approver (a run that proposes a
    move, its preview approved), until `stop`."""

    base: str
    caller: dict[str, str]
    approver: dict[str, str]
    technology_id: str
    answers: list[Answer] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)  # acknowledged: key -> run id
    approved: set[str] = field(default_factory=set)  # acknowledged approvals' previews
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def _send(
        self, what: str, request: Awaitable[httpx.Response], *, retried: bool = False
    ) -> httpx.Response:
        loop = asyncio.get_running_loop()
        sent = loop.time()
        response = await request
        self.answers.append(
            Answer(
                what,
                retried,
                response.status_code,
                sent,
                loop.time(),
                response.headers.get("content-type", ""),
                response.headers.get("retry-after"),
                response.text,
            )
        )
        return response

    async def _until_ok(
        self, what: str, request: Callable[[], Awaitable[httpx.Response]]
    ) -> httpx.Response | None:
        """`request()` again until it succeeds (None once the load stops first)."""
        retried = False
        while not self.stop.is_set():
            response = await self._send(what, request(), retried=retried)
            if response.is_success:
                return response
            retried = True
            await asyncio.sleep(0.2)  # sooner than Retry-After: a busy client
        return None

    async def creator(self, number: int) -> None:
        search = tool_calls(("c1", "search_technologies", {"query": "database"}))
        body = run_body(search, final("done"), wait_s=2)
        async with httpx.AsyncClient(base_url=self.base, headers=self.caller, timeout=30) as http:
            for serial in range(1_000_000):
                key = f"create-{number}-{serial}"
                headers = {"Idempotency-Key": key}
                created = await self._until_ok(
                    "create", lambda h=headers: http.post("/v1/runs", json=body, headers=h)
                )
                if created is None:
                    return
                self.runs[key] = created.json()["id"]
                await asyncio.sleep(0.05)

    async def reader(self) -> None:
        async with httpx.AsyncClient(base_url=self.base, headers=self.caller, timeout=30) as http:
            while not self.stop.is_set():
                if self.runs:
                    run_id = random.choice(list(self.runs.values()))
                    await self._send("read", http.get(f"/v1/runs/{run_id}"))
                await self._send("read", http.get("/v1/runs", params={"limit": 5}))
                await asyncio.sleep(0.1)

    async def approving(self) -> None:
        arguments = {"technology_id": self.technology_id, "ring": "hold", "rationale": "drill"}
        body = run_body(tool_calls(("m1", "move_technology_ring", arguments)), final("moved"))
        async with (
            httpx.AsyncClient(base_url=self.base, headers=self.caller, timeout=30) as caller,
            httpx.AsyncClient(base_url=self.base, headers=self.approver, timeout=30) as approver,
        ):
            for serial in range(1_000_000):
                key = {"Idempotency-Key": f"move-{serial}"}
                parked = await self._until_ok(
                    "create", lambda k=key: caller.post("/v1/runs", json=body, headers=k)
                )
                if parked is None:
                    return
                run = parked.json()
                self.runs[key["Idempotency-Key"]] = run["id"]
                while run["status"] in ("queued", "running"):  # not parked within wait_s
                    await asyncio.sleep(0.1)
                    got = await self._until_ok(
                        "read", lambda r=run["id"]: caller.get(f"/v1/runs/{r}")
                    )
                    if got is None:
                        return
                    run = got.json()
                if not run["pending_approvals"]:  # say why it did not park on its preview
                    calls = await caller.get(f"/v1/runs/{run['id']}/calls")
                    raise AssertionError(f"{run}\n{calls.text}")
                preview = run["pending_approvals"][0]["preview_id"]
                seen = await self._until_ok(
                    "read", lambda p=preview: approver.get(f"/v1/previews/{p}")
                )
                if seen is None:
                    return
                decision = {"content_hash": seen.json()["content_hash"]}
                approve_key = {"Idempotency-Key": f"approve-{serial}"}
                approved = await self._until_ok(
                    "approve",
                    lambda p=preview, d=decision, k=approve_key: approver.post(
                        f"/v1/previews/{p}/approve", json=d, headers=k
                    ),
                )
                if approved is None:
                    return
                self.approved.add(preview)

    def refused_since(self, at: float) -> bool:
        """Whether the clients met REFUSALS 503s to requests sent after `at`."""
        return sum(a.status == 503 and a.sent > at for a in self.answers) >= REFUSALS

    def writes_after(self, at: float) -> list[Answer]:
        """Acknowledged creates and approvals sent after `at`."""
        return [
            a for a in self.answers if a.what != "read" and a.sent > at and 200 <= a.status < 300
        ]


@contextlib.asynccontextmanager
async def loaded(load: Load) -> AsyncIterator[Load]:
    tasks = [asyncio.create_task(load.creator(n)) for n in range(CREATORS)]
    tasks += [asyncio.create_task(load.reader()) for _ in range(READERS)]
    tasks.append(asyncio.create_task(load.approving()))
    try:
        # Steady state: runs created and a preview approved.
        await until(
            lambda: len(load.runs) >= 2 * CREATORS and load.approved,
            timeout_s=30,
            what="the load",
        )
        yield load
    finally:
        load.stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 60)


def prepared(env: dict[str, str], pair: Pair) -> tuple[dict[str, str], dict[str, str], str]:
    """The schema, the demo radar and two keys (a caller, an approver) on the primary,
    through the CLI on `env`'s URL: the caller's and the approver's headers, and the id
    of a technology to move (to `hold`: one not there yet)."""
    cli_out(env, "db", "upgrade")
    cli_out(env, "demo", "seed", "--tenant", TENANT)
    keys = []
    for subject, role in (("svc", "caller"), ("bob", "approver")):
        argv = ("keys", "create", "--tenant", TENANT, "--subject", subject, "--roles", role)
        keys.append({"Authorization": f"Bearer {json.loads(cli_out(env, *argv))['key']}"})
    technology = pair.primary.sql(
        f"SELECT id FROM technology WHERE tenant_id = '{TENANT}' AND ring <> 'hold' LIMIT 1"
    )
    return keys[0], keys[1], technology


async def finished_on(pair: Pair, runs: dict[str, str], timeout_s: float = 30) -> dict[str, str]:
    """The status of each of `runs` as the new primary holds it, once none of the load's
    runs is still running (the parked ones wait on a commit nobody makes)."""
    ids = ", ".join(f"'{r}'" for r in runs.values())
    query = f"SELECT id, coalesce(termination_reason, status) FROM run WHERE id IN ({ids})"
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while True:
        rows = await asyncio.to_thread(pair.standby.sql, query)
        found = dict(line.split("|") for line in rows.splitlines())
        moving = {"running", "queued"} & set(found.values())
        if not moving or loop.time() > end:
            return found
        await asyncio.sleep(0.3)


def assert_nothing_lost(pair: Pair, load: Load, statuses: dict[str, str]) -> None:
    moves = {r for k, r in load.runs.items() if k.startswith("move-")}
    creates = set(load.runs.values()) - moves
    assert set(statuses) == set(load.runs.values()), "an acknowledged run is not on the primary"
    assert {statuses[r] for r in creates} == {"final"}, statuses
    assert {statuses[r] for r in moves} == {"awaiting_approval"}, statuses
    ids = ", ".join(f"'{r}'" for r in creates)
    called = pair.standby.sql(
        f"SELECT count(DISTINCT run_id) FROM tool_call WHERE run_id IN ({ids}) "
        "AND tool = 'search_technologies' AND status = 'succeeded'"
    )
    assert int(called) == len(creates), "an acknowledged run's tool call is missing"
    previews = ", ".join(f"'{p}'" for p in load.approved)
    decided = pair.standby.sql(f"SELECT status FROM preview WHERE id IN ({previews})")
    assert decided.splitlines() == ["approved"] * len(load.approved), decided


def assert_clean_refusals(load: Load, back_at: float) -> tuple[int, int]:
    """Every answer a success or a `503` problem with Retry-After; but a retry of an
    operation whose first request was cut off by the crash after its Idempotency-Key was
    claimed may hear `409 idempotency-key-in-flight` (with Retry-After) until the claim is
    given up, once the database answers again (within the recovery bound). A retried
    approval whose first request committed is answered `200` (its key is bound in the
    approval's transaction). The counts of 503s and of those 409s."""
    refused = [a for a in load.answers if not 200 <= a.status < 300]
    conflicts = [a for a in refused if a.status == 409 and a.retried and "in-flight" in a.body]
    unexpected = [
        (a.what, a.status, a.body[:600]) for a in refused if a.status != 503 and a not in conflicts
    ]
    assert unexpected == []
    for answer in refused:
        assert answer.content_type.startswith("application/problem+json"), answer.body
        assert json.loads(answer.body)["status"] == answer.status, answer.body
        assert "Traceback" not in answer.body and "SELECT" not in answer.body
        if answer.status == 503 or "in-flight" in answer.body:
            assert answer.retry_after is not None and int(answer.retry_after) >= 1, answer
    assert all(a.at < back_at + RECOVERY_BOUND_S for a in conflicts), "a key stayed claimed"
    return len(refused) - len(conflicts), len(conflicts)


async def listening_on(pair: Pair) -> bool:
    """Whether the service's LISTEN connection is on the new primary."""
    found = await asyncio.to_thread(
        pair.standby.sql,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'toolgate-listen'",
    )
    return int(found) >= 1


def service_env(url: str, **more: str) -> dict[str, str]:
    return {"TOOLGATE_DATABASE_URL": url, "TOOLGATE_DRIVER_POLL_S": "0.5", **more}


def said(process: object) -> str:
    output = process.output  # type: ignore[attr-defined]
    output.seek(0)
    return output.read().decode(errors="replace")[-4000:]


@pytest.mark.timeout(120)
async def test_the_service_goes_on_after_the_standby_is_promoted() -> None:
    with replicated_pair() as pair:
        # libpq's form, as operators write it; the service takes it as the dialect's.
        env = service_env(pair.url(libpq=True))

        async def promote(_load: Load) -> None:
            await asyncio.to_thread(pair.promote)

        await ridden_through("direct", env, pair, promote)


async def ridden_through(
    kind: str, env: dict[str, str], pair: Pair, fail_over: Callable[[Load], Awaitable[None]]
) -> None:
    """The service on `env` under load; the primary crashed, then `fail_over`: every answer
    a success or a clean refusal, writes back within the bound, LISTEN on the new primary,
    nothing acknowledged lost."""
    loop = asyncio.get_running_loop()
    caller, approver, technology = prepared(env, pair)
    port = free_port()
    with server(["serve", "--port", str(port)], env) as process:
        base = f"http://127.0.0.1:{port}"
        await wait_healthy(base, process=process)
        async with loaded(Load(base, caller, approver, technology)) as load:
            crashed_at = loop.time()
            await asyncio.to_thread(pair.crash_primary)
            await until(lambda: load.refused_since(crashed_at), 20, "the crash met")
            await fail_over(load)
            back_at = loop.time()
            written = await recovered(load, back_at, process)
            count = len(load.runs)
            await until(lambda: len(load.runs) >= count + CREATORS, 20, "more runs")
            await until(lambda: listening_on(pair), 20, "LISTEN on the new primary")
        statuses = await finished_on(pair, load.runs)
    refused, in_flight = assert_clean_refusals(load, back_at)
    report(kind, (crashed_at, back_at, written), (refused, in_flight), load)
    assert refused > 0, "the clients met the failover"
    assert written - back_at < RECOVERY_BOUND_S
    assert_nothing_lost(pair, load, statuses)


async def recovered(load: Load, since: float, process: object) -> float:
    """When the first write sent after `since` was acknowledged."""
    try:
        await until(lambda: load.writes_after(since), 2 * RECOVERY_BOUND_S, "a write")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the service said:\n{said(process)}") from None
    return min(a.at for a in load.writes_after(since))


def report(
    kind: str, times: tuple[float, float, float], refused: tuple[int, int], load: Load
) -> None:
    crashed_at, back_at, written = times
    print(
        f"\nfailover ({kind}): the primary crashed, {back_at - crashed_at:.2f} s to the new "
        f"primary, writes again {written - back_at:.2f} s after it; of {len(load.answers)} "
        f"answers {refused[0]} were 503 and {refused[1]} 409 to a retry; {len(load.runs)} runs "
        f"and {len(load.approved)} approvals acknowledged, none lost"
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("order", ["promote, then reload", "reload, then promote"])
async def test_through_pgbouncer_pointed_at_the_new_primary(order: str) -> None:
    """Operators promote the standby, then point the pooler at it. The other way round,
    the pooler sends writes to a standby for a while (`25006 read_only_sql_transaction`):
    that too is an outage, answered 503, and never fails a run's step."""
    with replicated_pair() as pair, pgbouncer_for(pair) as pooler:

        async def repoint(load: Load) -> None:
            if order == "promote, then reload":
                await asyncio.to_thread(pair.promote)
                await asyncio.to_thread(pooler.point_at, pair.standby)
                return
            # Writes meet the standby through the pooler meanwhile.
            await asyncio.to_thread(pooler.point_at, pair.standby)
            reloaded_at = asyncio.get_running_loop().time()
            await until(lambda: load.refused_since(reloaded_at), 20, "the standby met")
            await asyncio.to_thread(pair.promote)

        await ridden_through(f"pgbouncer, {order}", pooled_env(pooler), pair, repoint)


def pooled_env(pooler: Pooler) -> dict[str, str]:
    """The service through the pooler: its pool in transaction mode, LISTEN and the
    migrations through the same PgBouncer's session-mode alias."""
    return service_env(
        pooler.url,
        TOOLGATE_DATABASE_POOLER="transaction",
        TOOLGATE_LISTEN_DATABASE_URL=pooler.session_url,
    )
