"""Death detected, not waited out (SPEC §2, on replicas): each process holds its liveness
lock on its listener's connection; a process found dead twice, `GRACE_S` apart, is taken
over (its leases lapse at once and a claim takes its runs up), while a live one, even one
whose connection just dropped and came back, keeps its runs. Two apps on the test's
database, and two real processes, one of them SIGKILLed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy import text

from app.db.lifecycle.liveness import LIVENESS_LOCK
from app.engine.process.liveness import GRACE_S
from tests.support.assertions import assert_problem
from tests.support.factories import final, tool_calls
from tests.support.fakes import FakeClock, HeldModel, ProbeTool, probe_spec
from tests.support.harness import Harness
from tests.support.processes import cli_out, free_port, server, wait_healthy
from tests.support.waiting import until


async def holder(h: Harness, key: int) -> int | None:
    """The backend holding the liveness lock of `key` (a process's), if any."""
    query = text(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
        "AND classid = :lock AND objsubid = 2 AND objid::bigint = :key"
    )
    params = {"lock": LIVENESS_LOCK, "key": key & 0xFFFFFFFF}
    async with h.runtime.reads() as session:
        return (await session.execute(query, params)).scalar()


async def lease_owner(h: Harness, run_id: str) -> str | None:
    async with h.runtime.reads() as session:
        query = text("SELECT lease_owner FROM run WHERE id = :id")
        return (await session.execute(query, {"id": run_id})).scalar()


async def terminate(h: Harness, pid: int) -> None:
    async with h.runtime.reads() as session:
        await session.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})


async def dies(a: Harness, b: Harness, monkeypatch: pytest.MonkeyPatch) -> Any:
    """a's listener can connect no more, then its connection ends: to the others, a is
    dead (its runs and requests go on in this test's process). Answers the real connect,
    for a to come back with."""
    pid = await holder(b, a.runtime.owner_key)
    assert pid is not None, "a holds its liveness lock"
    connect = asyncpg.connect

    async def refused(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("server_settings", {}).get("application_name") == "toolgate-listen":
            raise OSError("refused")
        return await connect(*args, **kwargs)

    monkeypatch.setattr(asyncpg, "connect", refused)
    await terminate(b, pid)

    async def lock_free() -> bool:
        return await holder(b, a.runtime.owner_key) is None

    await until(lock_free)
    return connect


async def taken_over(b: Harness, clock: FakeClock) -> int:
    """b finds a dead twice, GRACE_S apart; the leases that lapsed."""
    assert await b.driver.liveness.take_over_dead() == 0
    clock.advance(GRACE_S)
    return await b.driver.liveness.take_over_dead()


async def a_holding_and_b_looking(  # type: ignore[no-untyped-def]
    harness_factory,
) -> tuple[Harness, Harness, HeldModel, FakeClock]:
    """a, whose model calls are held; b, whose clock the test moves; neither polls."""
    model = HeldModel()
    a = await harness_factory(run_driver=False, models={"scripted": model})
    clock = FakeClock()
    b = await harness_factory(run_driver=False, clock_=clock)
    return a, b, model, clock


async def start_held(h: Harness, model: HeldModel) -> str:
    """A run leased to `h`, its model call in flight (held)."""
    body = {"agent": "tech-radar", "input": "q", "wait_s": 0, "script": [final("done")]}
    made = await h.client.post("/v1/runs", headers=await h.key(), json=body)
    assert made.status_code == 201, made.text
    await asyncio.wait_for(model.started.wait(), 10)
    return str(made.json()["id"])


async def test_a_dead_process_is_taken_over_without_waiting_for_its_leases(
    harness_factory, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    a, b, model, clock = await a_holding_and_b_looking(harness_factory)
    run_id = await start_held(a, model)
    assert await lease_owner(a, run_id) == a.runtime.owner
    connect = await dies(a, b, monkeypatch)
    # Found dead once: nothing yet (a live process whose connection dropped comes back).
    assert await b.driver.liveness.take_over_dead() == 0
    assert await b.driver.poll_once() == 0
    clock.advance(GRACE_S)
    # Found dead again: its lease lapses now, decades before TOOLGATE_LEASE_S would.
    assert await b.driver.liveness.take_over_dead() == 1
    assert await b.driver.poll_once() == 1
    finished = await b.driver.wait("acme", run_id, 15)
    assert finished.termination_reason == "final"
    assert await lease_owner(b, run_id) is None

    # a's held call comes back to a run it no longer holds: nothing of it is written.
    model.gate.set()
    await until(lambda: not a.driver.is_advancing("acme", run_id), what="a letting go")
    events = (
        await b.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=await b.key())
    ).json()["items"]
    kinds = [e["type"] for e in events]
    # Claimed at its creation by a, then by b; one turn, one end.
    assert kinds == ["run.created", "run.claimed", "run.claimed", "turn.completed", "run.finished"]

    # a comes back: it holds its lock and is registered again.
    monkeypatch.setattr(asyncpg, "connect", connect)

    async def back() -> bool:
        return await holder(b, a.runtime.owner_key) is not None

    # (It came back in 2 of 8 loaded runs only before the listener looked at its
    # connection's state: a notification in flight as the session ended kept it "ready".)
    await until(back, timeout_s=20, what="a holding its lock again")


async def test_a_dead_process_s_key_is_taken_over_by_a_retry_without_waiting_for_its_lock(
    harness_factory, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    a, b, model, clock = await a_holding_and_b_looking(harness_factory)
    headers = {**await a.key(), "Idempotency-Key": "dies-with-a"}
    body = {"agent": "tech-radar", "input": "q", "wait_s": 30, "script": [final("done")]}
    first = asyncio.create_task(a.client.post("/v1/runs", headers=headers, json=body))
    await asyncio.wait_for(model.started.wait(), 10)  # a holds the key, its run mid call
    in_flight = await b.client.post("/v1/runs", headers=headers, json=body)
    assert_problem(in_flight, 409, "idempotency-key-in-flight", "/v1/runs")

    await dies(a, b, monkeypatch)
    # Found dead once: still a's (a live process whose connection dropped comes back).
    assert await b.driver.liveness.take_over_dead() == 0
    again = await b.client.post("/v1/runs", headers=headers, json=body)
    assert_problem(again, 409, "idempotency-key-in-flight", "/v1/runs")
    clock.advance(GRACE_S)
    assert await b.driver.liveness.take_over_dead() == 1
    # The retry takes the key over at once (its lock had 60 s to go), and answers the run
    # a had made under it: none is made twice.
    retried = await b.client.post("/v1/runs", headers=headers, json=body)
    assert retried.status_code == 201, retried.text
    assert retried.json()["termination_reason"] == "final"
    listed = (await b.client.get("/v1/runs", headers=headers)).json()["items"]
    assert [r["id"] for r in listed] == [retried.json()["id"]]
    model.gate.set()
    await asyncio.wait_for(first, 15)  # a's own request ends (its answer is not the key's)


async def test_a_process_that_lost_its_lock_starts_nothing_before_it_is_taken_over(
    harness_factory, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Self-fencing: from the moment its connection is gone, a process starts no call on
    the runs it holds (its in-flight model call comes back and is written); the other
    process takes the run over only later, and makes the call."""
    model = HeldModel()
    # A side effect: its turn is written before its call may start (a read-only round is
    # written with its results).
    writes = probe_spec(side_effects=True, idempotent=True, permissions=("probe:write",))
    on_a, on_b = ProbeTool(writes), ProbeTool(writes)
    a = await harness_factory(run_driver=False, models={"scripted": model}, probe=on_a)
    clock = FakeClock()
    b = await harness_factory(run_driver=False, clock_=clock, probe=on_b)
    script = [tool_calls(("c1", "probe", {})), final("done")]
    body = {"agent": "tech-radar", "input": "q", "wait_s": 0, "script": script}
    made = await a.client.post("/v1/runs", headers=await a.key(), json=body)
    run_id = made.json()["id"]
    await asyncio.wait_for(model.started.wait(), 10)

    await dies(a, b, monkeypatch)
    await until(lambda: not a.runtime.live, what="a noticing its connection is gone")
    model.gate.set()  # the model's answer comes back, and its call is not started
    await asyncio.wait_for(model.answered.wait(), 10)
    # A moment to act on it: unfenced, a would start its call at once (the fenced process
    # passes whatever the wait; the wait only gives an unfenced one time to fail).
    await asyncio.sleep(0.3)
    assert a.driver.is_advancing("acme", run_id) and on_a.executions == 0

    assert await taken_over(b, clock) == 1
    assert await b.driver.poll_once() == 1
    finished = await b.driver.wait("acme", run_id, 15)
    assert finished.termination_reason == "final"
    assert (on_a.executions, on_b.executions) == (0, 1)


async def test_a_process_whose_connection_drops_and_comes_back_keeps_its_runs(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    a, b, model, clock = await a_holding_and_b_looking(harness_factory)
    run_id = await start_held(a, model)
    pid = await holder(b, a.runtime.owner_key)
    assert pid is not None
    await terminate(b, pid)

    async def held_again() -> bool:
        now = await holder(b, a.runtime.owner_key)
        return now is not None and now != pid

    await until(held_again, timeout_s=5)  # well within GRACE_S of the drop: reconnected
    for _ in range(2):
        assert await b.driver.liveness.take_over_dead() == 0
        clock.advance(GRACE_S)
    assert await b.driver.poll_once() == 0
    assert await lease_owner(a, run_id) == a.runtime.owner
    model.gate.set()
    finished = await a.driver.wait("acme", run_id, 15)
    assert finished.termination_reason == "final"


async def test_a_process_stopped_cleanly_leaves_nothing_to_take_over(harness_factory) -> None:  # type: ignore[no-untyped-def]
    b = await harness_factory(run_driver=False)
    a = await harness_factory(run_driver=False)
    owner = a.runtime.owner

    async def registered() -> list[str]:
        async with b.runtime.reads() as session:
            return list((await session.execute(text("SELECT owner FROM process"))).scalars())

    assert owner in await registered()
    await a.driver.stop()  # as at its lifespan's end: leases handed back, row gone
    assert owner not in await registered()


# -- two real processes --------------------------------------------------------------------

CONFIG = """
models:
  scripted: {provider: scripted}
agents:
  tech-radar:
    model: scripted
    tools: [search_technologies]
"""


async def test_a_sigkilled_process_s_run_and_key_are_taken_up_by_the_other_within_seconds(
    own_database: str, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    env = {"TOOLGATE_DATABASE_URL": own_database, "TOOLGATE_CONFIG": str(config)}
    cli_out(env, "db", "upgrade")
    argv = ("keys", "create", "--tenant", "acme", "--subject", "ops", "--roles", "caller")
    made = cli_out(env, *argv)
    key = json.loads(made.strip().splitlines()[-1])["key"]
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "killed-1"}
    ports = free_port(), free_port()
    # What a takeover no longer waits for: the lease (30 s) and the key's lock (60 s).
    with (
        server(["serve", "--port", str(ports[0])], env) as a,
        server(["serve", "--port", str(ports[1])], env),
    ):
        on_a, on_b = (f"http://127.0.0.1:{p}" for p in ports)
        await wait_healthy(on_a)
        await wait_healthy(on_b)
        # A model turn of 1 s, under way on a when a is killed, with the client waiting.
        body = {
            "agent": "tech-radar",
            "input": "q",
            "wait_s": 20,
            "script": [final("done", delay_ms=1000)],
        }
        async with httpx.AsyncClient(timeout=30, headers=headers) as client:
            first = asyncio.create_task(client.post(f"{on_a}/v1/runs", json=body))
            await asyncio.sleep(0.5)
            os.killpg(a.pid, signal.SIGKILL)
            killed_at = time.time()
            a.wait(10)
            with contextlib.suppress(httpx.HTTPError):
                await first  # its connection died with a
            # The client retries on b, as told by each 409's Retry-After.
            for _ in range(60):
                retried = await client.post(f"{on_b}/v1/runs", json=body)
                if retried.status_code != 409:
                    break
                await asyncio.sleep(float(retried.headers["Retry-After"]))
            answered_s = time.time() - killed_at
            assert retried.status_code == 201, retried.text
            run_id = retried.json()["id"]
            events = (await client.get(f"{on_b}/v1/runs/{run_id}/events?limit=200")).json()
            runs = (await client.get(f"{on_b}/v1/runs")).json()["items"]
    assert retried.json()["termination_reason"] == "final"
    assert [r["id"] for r in runs] == [run_id]  # the run a made, not a second one
    claims = [e for e in events["items"] if e["type"] == "run.claimed"]
    assert len(claims) == 2, claims  # a's at the creation, b's
    taken_s = datetime.fromisoformat(claims[1]["at"].replace("Z", "+00:00")).timestamp() - killed_at
    assert 0 < taken_s < 5, taken_s  # the lease would have held it 30 s
    assert answered_s < 5 + 1 + 2, answered_s  # taken over, its 1 s turn, a retry's pause
    assert [e["type"] for e in events["items"]].count("run.finished") == 1
