"""Several steppers on one database: a run cut off mid-step is finished by another
stepper without repeating the step, and concurrent advances never run a step twice."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from pydantic import SecretStr
from sqlalchemy import func, select

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from app.db.clock import DbTime
from app.db.errors import is_unavailable
from app.db.lifecycle import runs as runs_repo
from app.db.tables import turn
from app.domain.tools.specs import Principal
from app.engine.lifecycle.runs import CreateRun, start_run
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fakes import FakeClock, HeldModel, ProbeTool, probe_spec
from tests.support.harness import DEFAULT_AGENT, Harness
from tests.support.leases import LEASE_S, crash, stopped, turns_written, two_steppers
from tests.support.statements import commit_answer_lost, counting
from tests.support.stored_events import stored_events
from tests.support.waiting import until


async def state(h: Harness, run_id: str) -> Any:
    async with h.runtime.sessions() as session:
        record = await runs_repo.get(session, "acme", run_id)
        turns = (
            await session.execute(
                select(func.count()).select_from(turn).where(turn.c.run_id == run_id)
            )
        ).scalar_one()
    return record, turns


async def start(h: Harness, headers: dict[str, str], *script: Any, wait_s: float) -> Any:
    response = await h.client.post(
        "/v1/runs",
        headers=headers,
        json={"agent": "tech-radar", "input": "q", "wait_s": wait_s, "script": list(script)},
    )
    assert response.status_code == 201
    return response.json()


async def claim_polls(seen: Any, count: int) -> None:
    """Until the driver's claim poll has run `count` times among the statements seen."""
    await until(lambda: sum("SKIP LOCKED" in s for s in seen.all) >= count, what="claim polls")


async def renewed(h: Harness, run_id: str, since: Any) -> Any:
    """Until the run's lease expires later than `since`: its expiry then."""

    async def later() -> bool:
        return (await state(h, run_id))[0].lease.expires_at > since

    await until(later, what="a renewal")
    return (await state(h, run_id))[0].lease.expires_at


async def picked_up(b: Harness, run_id: str) -> Any:
    """b, past the crashed holder's lease, claims the run and advances it to its end."""
    assert await b.driver.poll_once() == 1
    return await b.driver.wait("acme", run_id, 10)


async def take_over(a: Harness, b: Harness, run_id: str) -> Any:
    """a crashes; b takes the run over to its end."""
    await crash(a, run_id)
    return await picked_up(b, run_id)


async def test_model_call_cut_off_is_asked_again_by_another_stepper(harness_factory) -> None:  # type: ignore[no-untyped-def]
    held = HeldModel()  # a's model never answers; b's answers at once
    a, b = await two_steppers(harness_factory, model_a=held)
    headers = await a.key()
    run = await start(a, headers, final("answer", usage=(10, 5)), wait_s=0)
    run_id = run["id"]
    await asyncio.wait_for(held.started.wait(), 10)
    await crash(a, run_id)
    record, turns = await state(a, run_id)
    assert record.model_calls == 0 and turns == 0 and record.lease is not None

    assert await b.driver.poll_once() == 1  # by b's clock the lease has expired
    final_record = await b.driver.wait("acme", run_id, 10)
    record, turns = await state(b, run_id)
    assert final_record.termination_reason == "final"
    assert record.model_calls == 1 and record.usage.steps == 1 and turns == 1
    assert record.usage.input_tokens == 10


async def read_in_flight(harness_factory: Any, hold_ms: float) -> Any:  # type: ignore[no-untyped-def]
    """A run on a, its turn's one read hanging there (a's tool never answers), with a's
    turns held for `hold_ms`; b, a process past a's lease whose tool answers."""
    stuck = ProbeTool(probe_spec(), gate=asyncio.Event())
    healthy = ProbeTool(probe_spec())
    a, b = await two_steppers(harness_factory, stuck, healthy)
    a.runtime.settings.turn_hold_ms = hold_ms
    headers = await a.key()
    script = [tool_calls(("c1", "probe", {"q": "x"})), final("done [source:s1]")]
    run_id = (await start(a, headers, *script, wait_s=0))["id"]
    await asyncio.wait_for(stuck.started.wait(), 10)
    return a, b, headers, run_id, stuck, healthy


async def read_finished_once(
    b: Harness, headers: dict[str, str], run_id: str, healthy: ProbeTool
) -> tuple[Any, list[dict[str, Any]]]:
    """b finishes the run of `read_in_flight`: each script item consumed once, the read
    run once there and recorded once. The run's record and events."""
    finished = await picked_up(b, run_id)
    assert finished.termination_reason == "final"
    record, turns = await state(b, run_id)
    assert turns == 2 and record.model_calls == 2  # each script item consumed once
    assert record.usage.tool_calls == 1 and healthy.executions == 1
    calls = (await b.client.get(f"/v1/runs/{run_id}/calls", headers=headers)).json()["items"]
    assert [(c["call_id"], c["status"], c["attempts"], c["source_id"]) for c in calls] == [
        ("c1", "succeeded", 1, "s1")
    ]
    events = await b.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)
    return record, events.json()["items"]


@pytest.mark.parametrize("hold_ms", [0.0, 50.0])
async def test_a_read_only_call_cut_off_mid_round_is_run_again_and_recorded_once(
    harness_factory, hold_ms: float
) -> None:  # type: ignore[no-untyped-def]
    """A read needs no commit before it runs: after the crash nothing of it was written,
    the next holder runs it again, and the round records it once. Its turn is written
    first (hold 0), or alone once the read outlasts the turn's hold."""
    a, b, headers, run_id, stuck, healthy = await read_in_flight(harness_factory, hold_ms)
    await turns_written(a, run_id, 1)  # while the read still hangs
    assert not stuck.gate.is_set() and stuck.executions == 1
    await crash(a, run_id)
    record, turns = await state(a, run_id)
    assert turns == 1 and record.model_calls == 1 and record.usage.steps == 1

    _, items = await read_finished_once(b, headers, run_id, healthy)
    kinds = [e["type"] for e in items]
    assert kinds.count("call.started") == 1 and kinds.count("call.succeeded") == 1
    assert kinds.count("turn.completed") == 2
    succeeded = next(e for e in items if e["type"] == "call.succeeded")
    assert succeeded["data"]["source_id"] == "s1"


async def test_a_turn_held_for_its_reads_is_lost_with_its_process_and_asked_again(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """A turn of reads waits for their outcomes to be written with them: a crash in that
    window leaves nothing of the turn, and the next holder asks the model again (the
    same script item) and records the turn and its read once."""
    # A hold far longer than the crash takes to come, even on a loaded machine (past the
    # setting's bound, which holds for its value from the environment).
    a, b, headers, run_id, _, healthy = await read_in_flight(harness_factory, 60_000)
    shown = (await a.client.get(f"/v1/runs/{run_id}", headers=headers)).json()
    assert shown["usage"]["steps"] == 0 and shown["status"] == "running"
    await crash(a, run_id)
    record, turns = await state(a, run_id)
    assert turns == 0 and record.model_calls == 0 and record.usage.steps == 0

    record, items = await read_finished_once(b, headers, run_id, healthy)
    assert record.usage.steps == 2
    assert [e["seq"] for e in items] == list(range(1, len(items) + 1))
    kinds = [e["type"] for e in items]
    assert kinds.count("turn.completed") == 2 and kinds.count("call.proposed") == 1
    # b's turn and its read went in one write: one transaction wrote their events.
    async with b.runtime.sessions() as session:
        rows = [r for r in await stored_events(session) if r.run_id == run_id]
    xid = {r.type: r.xid for r in rows if r.type in ("call.proposed", "call.succeeded")}
    first_turn = next(r for r in rows if r.type == "turn.completed")
    assert xid["call.proposed"] == xid["call.succeeded"] == first_turn.xid


async def test_a_held_turn_whose_lease_moved_on_is_never_reported(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """b takes the run over while a holds its turn back for a read: a's write of it is
    refused (its lease is gone), and what a then tells its waiters is the run as the
    database held it, without the turn it never wrote."""
    stuck_a = ProbeTool(probe_spec(), gate=asyncio.Event())
    stuck_b = ProbeTool(probe_spec(), gate=asyncio.Event())
    a, b = await two_steppers(harness_factory, stuck_a, stuck_b)
    # Holds that outlast the test, even on a loaded machine.
    a.runtime.settings.turn_hold_ms = b.runtime.settings.turn_hold_ms = 60_000
    headers = await a.key()
    script = [tool_calls(("c1", "probe", {"q": "x"})), final("done [source:s1]")]
    run_id = (await start(a, headers, *script, wait_s=0))["id"]
    await asyncio.wait_for(stuck_a.started.wait(), 10)
    assert await b.driver.poll_once() == 1
    await asyncio.wait_for(stuck_b.started.wait(), 10)
    # What a tells a waiter at each of its steps, as an approval's request reads it.
    reported: list[Any] = []
    with a.driver.watching("acme", run_id) as stepped:
        stuck_a.gate.set()  # a's read answers; its write finds the lease gone
        async with asyncio.timeout(10):
            while a.driver.is_advancing("acme", run_id):
                await stepped.wait()
                stepped.clear()
                if a.driver.is_advancing("acme", run_id):
                    reported.append(await a.driver.wait("acme", run_id, 0))
    record, turns = await state(a, run_id)
    assert turns == 0 and record.usage.steps == 0
    assert reported and all(r.usage.steps == 0 and r.model_calls == 0 for r in reported)
    stuck_b.gate.set()
    finished = await b.driver.wait("acme", run_id, 10)
    assert finished.termination_reason == "final"


@pytest.mark.parametrize("hold_ms", [0.0, 50.0])
async def test_a_request_waiting_on_a_slow_read_sees_its_turn(
    harness_factory, hold_ms: float
) -> None:  # type: ignore[no-untyped-def]
    """A turn held for a read that outlasts the hold is written alone, and a request
    waiting on the run is answered with it, as when the turn is written first."""
    probe = ProbeTool(probe_spec(), gate=asyncio.Event())
    h = await harness_factory(probe=probe, settings_override={"turn_hold_ms": hold_ms})
    headers = await h.key()
    script = [tool_calls(("c1", "probe", {"q": "x"})), final("done [source:s1]")]
    # The read hangs all along; the turn is written well within the wait.
    shown = await start(h, headers, *script, wait_s=0.5)
    record, turns = await state(h, shown["id"])
    probe.gate.set()
    assert turns == 1 and record.usage.steps == 1
    assert shown["status"] == "running" and shown["usage"]["steps"] == 1, shown["usage"]
    finished = await h.driver.wait("acme", shown["id"], 10)
    assert finished.termination_reason == "final"


async def test_a_held_lease_is_not_taken(harness_factory) -> None:  # type: ignore[no-untyped-def]
    held = HeldModel()
    a = await harness_factory(run_driver=False, models={"scripted": held})
    b = await harness_factory(run_driver=False)
    headers = await a.key()
    run_id = (await start(a, headers, final("slow"), wait_s=0))["id"]
    await asyncio.wait_for(held.started.wait(), 10)
    assert await b.driver.poll_once() == 0  # a holds an unexpired lease
    held.gate.set()
    finished = await b.driver.wait("acme", run_id, 10)  # b only watches
    assert finished.termination_reason == "final"
    record, turns = await state(a, run_id)
    assert record.model_calls == 1 and turns == 1


async def test_concurrent_advances_never_run_a_step_twice(harness_factory) -> None:  # type: ignore[no-untyped-def]
    a = await harness_factory(run_driver=False)
    b = await harness_factory(run_driver=False)
    await seed_radar(a)
    headers = await a.key()
    script = [
        tool_calls(("c1", "search_technologies", {"query": "db"}), delay_ms=50),
        tool_calls(("c1", "search_technologies", {"query": "kafka"}), delay_ms=50),
        final("done [source:s1] [source:s2]", delay_ms=50),
    ]
    runs = []
    for _ in range(3):
        record = (
            await start_run(
                a.runtime,
                principal=Principal("acme", "svc"),
                request=CreateRun(agent="tech-radar", input="q", script=script),
            )
        ).run
        runs.append(record.id)
    responses = await asyncio.gather(
        *[
            h.client.post(f"/v1/runs/{run_id}/advance", headers=headers, json={"wait_s": 10})
            for run_id in runs
            for h in (a, b, a, b)
        ]
    )
    assert all(r.status_code in (200, 409) for r in responses)
    for run_id in runs:
        record, turns = await state(a, run_id)
        assert record.termination_reason == "final"
        assert record.model_calls == 3 and record.usage.steps == 3 and turns == 3
        assert record.usage.tool_calls == 2
        items = (await a.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)).json()[
            "items"
        ]
        steps = [e["data"]["step"] for e in items if e["type"] == "turn.completed"]
        assert steps == [1, 2, 3]
        started = [e for e in items if e["type"] == "call.started"]
        assert len(started) == 2
        assert [e["seq"] for e in items] == list(range(1, len(items) + 1))


async def test_the_driver_picks_up_a_run_nobody_advances(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(run_driver=True)
    record = (
        await start_run(
            h.runtime,
            principal=Principal("acme", "svc"),
            request=CreateRun(agent="tech-radar", input="q", script=[final("ok")]),
        )
    ).run
    finished = await h.driver.wait("acme", record.id, 10)
    assert finished.termination_reason == "final"
    assert h.driver._waiters == {}  # nothing kept per run once nobody waits


async def test_a_call_interrupted_on_every_attempt_is_not_retried_forever(harness_factory) -> None:  # type: ignore[no-untyped-def]
    # A side effect (idempotent, so it may be retried) is committed as started before it
    # is sent; a read would not be, and is simply run again.
    spec = probe_spec(max_attempts=1, side_effects=True, idempotent=True)
    stuck = ProbeTool(spec, gate=asyncio.Event())
    healthy = ProbeTool(spec)
    a, b = await two_steppers(harness_factory, stuck, healthy)
    headers = await a.key()
    script = [tool_calls(("c1", "probe", {"q": "x"})), final("never")]
    run_id = (await start(a, headers, *script, wait_s=0))["id"]
    await asyncio.wait_for(stuck.started.wait(), 10)
    finished = await take_over(a, b, run_id)
    assert finished.termination_reason == "tool_failed"
    assert finished.error["code"] == "interrupted" and healthy.executions == 0


async def test_a_stepper_that_loses_its_lease_stops_without_writing(harness_factory) -> None:  # type: ignore[no-untyped-def]
    held = HeldModel()
    a, b = await two_steppers(harness_factory, model_a=held)
    headers = await a.key()
    run_id = (await start(a, headers, final("answer", usage=(4, 2)), wait_s=0))["id"]
    await asyncio.wait_for(held.started.wait(), 10)
    assert await b.driver.poll_once() == 1  # b takes the lease while a is mid model call
    finished = await b.driver.wait("acme", run_id, 10)
    held.gate.set()  # a's model answers only now
    await stopped(a, run_id)  # a noticed and stopped by itself
    assert finished.termination_reason == "final"
    record, turns = await state(b, run_id)
    assert record.model_calls == 1 and turns == 1 and record.usage.input_tokens == 4
    kinds = [
        e["type"]
        for e in (
            await b.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)
        ).json()["items"]
    ]
    assert kinds.count("run.claimed") == 2 and kinds.count("turn.completed") == 1


async def test_one_statement_renews_every_lease_and_a_cancel_from_another_process_arrives(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    # Renewal every 40 s: within this test only LISTEN/NOTIFY can deliver the cancel.
    settings = {"lease_s": 120, "driver_poll_s": 0.05}
    a = await harness_factory(run_driver=True, settings_override=settings)
    b = await harness_factory(run_driver=False)
    headers = await a.key()
    ids = [(await start(a, headers, final("slow", delay_ms=60_000), wait_s=0))["id"] for _ in "abc"]
    await asyncio.wait_for(a.driver.listener.ready.wait(), 10)
    before = {run_id: (await state(a, run_id))[0].lease.expires_at for run_id in ids}

    with counting(a.app.state.engine) as idle:
        await claim_polls(idle, 6)  # a window longer than a waiter's look (0.2 s)
    # Held runs cost nothing while they wait: no per-run look, only the driver's claim poll
    # and its look for dead processes.
    assert all("SKIP LOCKED" in s or "FROM process" in s for s in idle.all), idle.all

    with counting(a.app.state.engine) as renewal:
        await a.driver.keeper.renew_once()
    # (The driver's poll may run meanwhile: it is not lease upkeep.)
    upkeep = [s for s in renewal.all if "SKIP LOCKED" not in s and "FROM process" not in s]
    assert len(upkeep) == 1, upkeep
    after = {run_id: (await state(a, run_id))[0].lease.expires_at for run_id in ids}
    assert all(after[r] > before[r] for r in ids)

    cancelled = await b.client.post(f"/v1/runs/{ids[0]}/cancel", headers=headers)
    assert cancelled.json()["termination_reason"] == "cancelled"  # within the 5 s it waits
    for run_id in ids[1:]:
        record, _ = await state(a, run_id)
        assert record.status == "running" and record.lease is not None


async def test_a_lease_is_not_taken_over_early_when_clocks_disagree(harness_factory) -> None:  # type: ignore[no-untyped-def]
    behind = FakeClock()
    behind.advance(-60)  # the holder's clock is a minute slow
    # Its model call in flight until the test ends.
    a = await harness_factory(run_driver=False, clock_=behind, models={"scripted": HeldModel()})
    ahead = FakeClock()
    ahead.advance(LEASE_S + 1)  # and the other replica's runs ahead
    b = await harness_factory(run_driver=False, clock_=ahead)
    headers = await a.key()
    run_id = (await start(a, headers, final("slow"), wait_s=0))["id"]
    taken = (await state(a, run_id))[0].lease.token
    # Expiry is compared on the database's clock: neither process's skew hands it over.
    assert await b.driver.poll_once() == 0
    record, _ = await state(a, run_id)
    assert taken is not None and record.lease.token == taken
    b.runtime.db_time.advance(LEASE_S + 1)  # the database's time passes the lease
    assert await b.driver.poll_once() == 1


async def test_a_process_without_the_poller_still_keeps_its_leases(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """`serve --no-driver` turns off only the poller: a run created there is renewed, so
    another process never takes it over in the middle of a step."""
    # A lease of 3 s, renewed every second: a loaded machine (tests in parallel) may be
    # late to a renewal by a second or two without the lease lapsing.
    held = HeldModel()  # mid model call until the test has seen the lease renewed
    a = await harness_factory(
        run_driver=False, settings_override={"lease_s": 3.0}, models={"scripted": held}
    )
    b = await harness_factory(run_driver=False)
    headers = await a.key()
    run_id = (await start(a, headers, final("slow"), wait_s=0))["id"]
    await asyncio.wait_for(held.started.wait(), 10)
    first = (await state(a, run_id))[0].lease.expires_at
    for _ in range(2):  # renewed twice, by the keeper alone, and never taken
        seen = await renewed(a, run_id, first)
        assert await b.driver.poll_once() == 0
        first = seen
    held.gate.set()
    finished = await a.driver.wait("acme", run_id, 10)
    record, turns = await state(a, run_id)
    assert finished.termination_reason == "final" and record.model_calls == 1 and turns == 1


async def test_a_run_whose_tool_left_the_config_ends_tool_unavailable(harness_factory) -> None:  # type: ignore[no-untyped-def]
    stuck = ProbeTool(probe_spec(), gate=asyncio.Event())
    a = await harness_factory(run_driver=False, probe=stuck)
    # b runs a config without the probe tool, and sees a's lease lapsed.
    b = await harness_factory(run_driver=False, db_time=DbTime(LEASE_S + 1))
    headers = await a.key()
    script = [tool_calls(("c1", "probe", {"q": "x"})), final("never")]
    run_id = (await start(a, headers, *script, wait_s=0))["id"]
    await asyncio.wait_for(stuck.started.wait(), 10)
    await turns_written(a, run_id, 1)  # the call was proposed under the old config
    finished = await take_over(a, b, run_id)
    assert finished.termination_reason == "tool_failed"
    assert finished.error["code"] == "tool_unavailable"


async def test_a_run_whose_model_route_left_the_config_ends_model_unavailable(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    held = HeldModel()
    a = await harness_factory(run_driver=False, models={"scripted": held})
    other = parse_config(
        {
            "models": {"other": {"provider": "scripted"}},
            "agents": {"tech-radar": {**DEFAULT_AGENT, "model": "other"}},
        },
        builtin_tools=SPECS,
    )
    b = await harness_factory(run_driver=False, config=other, db_time=DbTime(LEASE_S + 1))
    headers = await a.key()
    run_id = (await start(a, headers, final("slow"), wait_s=0))["id"]
    await asyncio.wait_for(held.started.wait(), 10)
    finished = await take_over(a, b, run_id)
    assert finished.termination_reason == "model_failed"
    assert finished.error["code"] == "model_unavailable"


async def test_a_side_effect_left_in_flight_by_a_crash_is_never_recorded_cancelled(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    spec = probe_spec(side_effects=True)
    stuck = ProbeTool(spec, gate=asyncio.Event())
    a, b = await two_steppers(harness_factory, stuck, ProbeTool(spec))
    headers = await a.key()
    run_id = (
        await start(a, headers, tool_calls(("c1", "probe", {"q": "x"})), final("x"), wait_s=0)
    )["id"]
    await asyncio.wait_for(stuck.started.wait(), 10)
    await crash(a, run_id)  # sent, never answered; then the client cancels
    cancelled = (await b.client.post(f"/v1/runs/{run_id}/cancel", headers=headers)).json()
    assert cancelled["termination_reason"] == "cancelled"
    calls = (await b.client.get(f"/v1/runs/{run_id}/calls", headers=headers)).json()["items"]
    assert [(c["status"], c["error"]["code"]) for c in calls] == [("failed", "outcome_unknown")]


async def test_a_claim_whose_answer_was_lost_hands_its_leases_back(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """The poller's claim committed, but its answer was lost: the run it leased, which
    nobody here advances, is handed back as soon as the database answers, and the next
    poll takes it up, rather than when the lease lapses (30 s here)."""
    h: Harness = await harness_factory(run_driver=False)
    headers = await h.key()
    h.runtime.settings.max_active_runs = 0  # created queued, for the poller
    body = run_body(final("done"), wait_s=0)
    queued = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    assert queued["status"] == "queued"
    h.runtime.settings.max_active_runs = 64
    with commit_answer_lost(h.app.state.engine, "lease_owner") as hit:
        failed = await asyncio.gather(h.driver.poll_once(), return_exceptions=True)
    assert len(hit) == 1 and is_unavailable(failed[0]), failed  # type: ignore[arg-type]
    async with h.runtime.sessions() as session:
        stranded = await runs_repo.get(session, "acme", queued["id"])
    assert stranded is not None and stranded.lease is not None  # leased, not driven
    assert await h.driver.poll_once() == 0  # its lease holds
    assert await h.runtime.deferred.pay() == 1
    assert await h.driver.poll_once() == 1
    done = await h.driver.wait("acme", queued["id"], 10)
    assert done.termination_reason == "final"


async def test_a_cancel_reaches_the_holder_for_a_tenant_whose_name_has_a_space(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    # Renewal every 40 s: within this test only the notification can deliver the cancel,
    # whose payload is "tenant run" (the run id has no space; the tenant's name may).
    a = await harness_factory(run_driver=True, settings_override={"lease_s": 120})
    b = await harness_factory(run_driver=False)
    headers = await a.key(tenant="acme corp")
    run_id = (await start(a, headers, final("slow", delay_ms=60_000), wait_s=0))["id"]
    await asyncio.wait_for(a.driver.listener.ready.wait(), 10)
    cancelled = await b.client.post(f"/v1/runs/{run_id}/cancel", headers=headers)
    assert cancelled.json()["termination_reason"] == "cancelled"  # within the 5 s it waits


async def test_a_process_serves_once_it_hears_notifications(harness_factory, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A list or a principal read before the listener connects could be older than a change
    # announced meanwhile: a starting process waits for its listener (here a slow one).
    connect = asyncpg.connect

    async def slow_connect(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("server_settings", {}).get("application_name") == "toolgate-listen":
            await asyncio.sleep(0.5)
        return await connect(*args, **kwargs)

    monkeypatch.setattr(asyncpg, "connect", slow_connect)
    h = await harness_factory()
    assert h.driver.listener.ready.is_set()


async def test_a_process_whose_listener_cannot_connect_serves_all_the_same(  # type: ignore[no-untyped-def]
    harness_factory, caplog
) -> None:
    nobody = SecretStr("postgresql+asyncpg://postgres@127.0.0.1:1/toolgate")  # refused
    h = await harness_factory(settings_override={"listen_database_url": nobody})
    assert not h.driver.listener.ready.is_set()
    assert (await h.client.get("/v1/runs", headers=await h.key())).status_code == 200
    assert any("before notifications are heard" in r.getMessage() for r in caplog.records)
