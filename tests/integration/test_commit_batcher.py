"""Group commit: many runs' steps in one statement, each still conditional on its own
run's lease; a write whose answer was lost is read back, never repeated; concurrent runs
cost fewer transactions than steps (a lone run's count: `test_engine_economy.py`)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from sqlalchemy import func, select

from app.db.access import idempotency
from app.db.access.idempotency import Binding
from app.db.lifecycle import runs as runs_repo
from app.db.lifecycle.step_writes import Birth, StaleWrite, StepWrite, Unencodable
from app.db.tables import idempotency_key, run, turn
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.records import Call, Run, RunLease
from app.domain.lifecycle.run_changes import Creation
from app.domain.lifecycle.run_patch import RunPatch
from app.domain.lifecycle.status import CallStatus, RunStatus
from app.domain.limits.budget import Limits
from tests.support.factories import final, run_body, search_rounds, seed_radar, tool_calls
from tests.support.fakes import ProbeTool, probe_spec
from tests.support.harness import Harness
from tests.support.leases import crash
from tests.support.statements import (
    STEP_WRITE,
    answer_lost,
    counting,
    with_births,
    with_steps,
)
from tests.support.stored_events import stored_events


async def holding(harness_factory: Any, n: int) -> tuple[Harness, list[tuple[str, str]]]:
    """A process without a poller, and `n` runs whose stepper crashed mid-model-call: (run
    id, its still valid lease token)."""
    h: Harness = await harness_factory(run_driver=False)
    headers = await h.key()
    ids = []
    for _ in range(n):
        body = {**run_body(final("never", delay_ms=30_000)), "wait_s": 0.05}
        response = await h.client.post("/v1/runs", headers=headers, json=body)
        assert response.status_code == 201
        ids.append(response.json()["id"])
    for run_id in ids:
        await crash(h, run_id)
    async with h.runtime.sessions() as session:
        rows = await session.execute(
            select(run.c.id, run.c.lease_token).where(run.c.tenant_id == "acme", run.c.id.in_(ids))
        )
        tokens = dict(rows.all())
    assert all(tokens[i] for i in ids)
    return h, [(i, tokens[i]) for i in ids]


def a_write(run_id: str, token: str, h: Harness, attempts: int) -> StepWrite:
    return StepWrite(
        tenant_id="acme",
        run_id=run_id,
        lease_token=token,
        patch=RunPatch(step_attempts=attempts),
        events=(),
        now=h.runtime.clock.now(),
    )


async def test_many_runs_steps_commit_in_one_statement_and_a_lost_lease_fails_alone(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h, held = await holding(harness_factory, 6)
    writes = [a_write(run_id, token, h, 40 + i) for i, (run_id, token) in enumerate(held)]
    lost = held[2][0]
    writes[2] = a_write(lost, "not-the-lease", h, 99)

    with counting(h.app.state.engine) as seen:
        outcomes = await asyncio.gather(
            *(h.runtime.commits.write(w) for w in writes), return_exceptions=True
        )

    assert len(seen.step_writes()) == 1  # one statement, one commit, for all six
    assert isinstance(outcomes[2], StaleWrite)
    assert all(not isinstance(o, BaseException) for i, o in enumerate(outcomes) if i != 2)
    async with h.runtime.sessions() as session:
        stored = {r.id: r for r in [await runs_repo.get(session, "acme", i) for i, _ in held]}
    for i, (run_id, _) in enumerate(held):
        expected = 0 if run_id == lost else 40 + i
        assert stored[run_id].step_attempts == expected, run_id
        if run_id != lost:
            assert outcomes[i].version == stored[run_id].version  # type: ignore[union-attr]


async def test_a_write_refused_by_postgres_fails_alone_and_the_rest_of_its_batch_commits(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """A write Postgres rejects (here a turn whose step breaks the turn table's key, as a
    bug would) makes the batch statement fail whole: each write is then tried alone."""
    h, held = await holding(harness_factory, 3)
    writes = [a_write(run_id, token, h, 7) for run_id, token in held]
    # Two calls with one row id: the second insert breaks tool_call's primary key.
    writes[1] = _with_duplicate_calls(replace(writes[1], patch=RunPatch(steps=99)), h)

    with counting(h.app.state.engine) as seen:
        outcomes = await asyncio.gather(
            *(h.runtime.commits.write(w) for w in writes), return_exceptions=True
        )

    # The batch, then each of the three alone.
    assert len(seen.step_writes()) == 4
    assert isinstance(outcomes[1], Exception) and not isinstance(outcomes[1], StaleWrite)
    assert not isinstance(outcomes[0], BaseException)
    assert not isinstance(outcomes[2], BaseException)
    async with h.runtime.sessions() as session:
        stored = [await runs_repo.get(session, "acme", i) for i, _ in held]
    assert [r.step_attempts for r in stored] == [7, 0, 7]
    assert stored[1].usage.steps == 0


def _with_duplicate_calls(write: StepWrite, h: Harness) -> StepWrite:
    now = h.runtime.clock.now()
    call = Call(
        tenant_id="acme",
        id="dup-row",
        run_id=write.run_id,
        step=1,
        position=0,
        call_id="c1",
        tool="search_technologies",
        status=CallStatus.PENDING,
        arguments={"query": "x"},
        args_hash="h",
        operation_id="op",
        created_at=now,
        updated_at=now,
    )
    return replace(write, new_calls=(call, call))


async def test_a_step_whose_answer_was_lost_is_read_back_and_never_repeated(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """The batch statement committed but the process never heard back: nothing was
    acknowledged to the stepper, which reads the run afresh and goes on from what the
    database holds. The tool runs once; every turn is written once."""
    probe = ProbeTool(probe_spec())
    h: Harness = await harness_factory(run_driver=False, probe=probe)
    headers = await h.key()
    script = [tool_calls(("c1", "probe", {"q": "x"})), final("done [source:s1]")]
    with answer_lost(h.app.state.engine, STEP_WRITE, times=2, when=with_steps) as hit:
        response = await h.client.post(
            "/v1/runs", headers=headers, json={**run_body(*script), "wait_s": 20}
        )
    body = response.json()
    assert len(hit) == 2
    assert response.status_code == 201 and body["termination_reason"] == "final", body
    assert probe.executions == 1
    assert body["usage"]["steps"] == 2 and body["usage"]["tool_calls"] == 1
    async with h.runtime.sessions() as session:
        turns = (
            await session.execute(
                select(func.count()).select_from(turn).where(turn.c.run_id == body["id"])
            )
        ).scalar_one()
    assert turns == 2


async def test_concurrent_runs_cost_fewer_write_statements_than_steps(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h: Harness = await harness_factory(run_driver=False)
    await seed_radar(h)
    headers = await h.key()
    runs, n = 16, 2

    async def one() -> dict[str, Any]:
        response = await h.client.post(
            "/v1/runs", headers=headers, json=run_body(*search_rounds(n))
        )
        return response.json()

    await one()  # the key's first use and the config version's row, once
    with counting(h.app.state.engine) as seen:
        done = await asyncio.gather(*(one() for _ in range(runs)))
    assert all(r["termination_reason"] == "final" for r in done)
    steps = sum(r["usage"]["steps"] for r in done)
    assert steps == runs * (n + 1)
    # Its birth, 2N + 1 step writes and an answer a run when each goes alone.
    assert len(seen.step_writes()) < runs * (2 * n + 3)
    assert len(seen.committed_writes) < steps, (len(seen.committed_writes), steps)


def a_birth(h: Harness, run_id: str, binding: Binding | None, leased: bool = False) -> Birth:
    now = h.runtime.clock.now()
    limits = Limits(max_steps=5, deadline_s=60, max_tokens=1000, max_cost_usd=1.0, max_tool_calls=5)
    record = Run(
        tenant_id="acme", id=run_id, agent="helper", route="scripted", status=RunStatus.QUEUED,
        input="x", tools=(), limits=limits, created_by="svc", creator_scopes=("runs:create",),
        root_run_id=run_id, deadline_at=now, created_at=now, updated_at=now,
    )  # fmt: skip
    events = ((EventType.RUN_CREATED, {"n": run_id}),)
    if leased:
        record = replace(record, status=RunStatus.RUNNING, lease=RunLease("me", "lt"))
        events = (*events, (EventType.RUN_CLAIMED, {"after_step": 0}))
    creation = Creation(record, events, script=(), lease_s=30 if leased else None)
    return Birth(creation, binding)


def a_binding(h: Harness, kind: str, key: str, token: str) -> Binding:
    now = h.runtime.clock.now()
    return Binding(kind, "acme", key, token, "fp", lock_s=30, ttl_s=3600, created_at=now)  # type: ignore[arg-type]


async def test_runs_are_born_in_the_steps_statement_each_on_its_own_key_binding(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """New runs join other runs' steps in one statement. A birth whose key binding does
    not take hold (a claim it no longer holds; a key another birth of the same batch
    claimed first) makes nothing and learns None; the others are made whole."""
    h, ((held, token),) = await holding(harness_factory, 1)
    # A claim its request took before it made its run (the `bind` kind's case).
    now = h.runtime.clock.now()
    async with h.runtime.sessions.begin() as session:
        await session.execute(
            idempotency_key.insert().values(
                tenant_id="acme", key="k-2", fingerprint="fp", state="in_flight",
                claim_token="tok-d", locked_until=now, created_at=now, expires_at=now,
            )
        )  # fmt: skip
    births = [
        a_birth(h, "run_born_free", None, leased=True),
        a_birth(h, "run_born_keyed", a_binding(h, "insert", "k-1", "tok-a")),
        a_birth(h, "run_born_twice", a_binding(h, "insert", "k-1", "tok-b")),
        a_birth(h, "run_born_unbound", a_binding(h, "bind", "k-gone", "tok-c")),
        a_birth(h, "run_born_bound", a_binding(h, "bind", "k-2", "tok-d")),
    ]

    with counting(h.app.state.engine) as seen:
        stepped, *born = await asyncio.gather(
            h.runtime.commits.write(a_write(held, token, h, 5)),
            *(h.runtime.commits.create(b) for b in births),
        )

    assert len(seen.step_writes()) == 1
    assert stepped.version > 1
    assert [b is not None for b in born] == [True, True, False, False, True]
    async with h.runtime.sessions() as session:
        made = {
            i: await runs_repo.get(session, "acme", i)
            for i in [
                "run_born_free",
                "run_born_keyed",
                "run_born_twice",
                "run_born_unbound",
                "run_born_bound",
            ]
        }
        db_now = (await session.execute(select(func.now()))).scalar_one()
        bound = await idempotency.get(session, "acme", "k-2", db_time=h.runtime.db_time)
        kinds = [
            (e.run_id, e.seq, e.type)
            for e in await stored_events(session)
            if e.run_id.startswith("run_born_")
        ]
        key = await idempotency.get(session, "acme", "k-1", db_time=h.runtime.db_time)
        scripts = await runs_repo.script_of(session, "acme", "run_born_free")
    assert made["run_born_twice"] is None and made["run_born_unbound"] is None
    free, keyed = made["run_born_free"], made["run_born_keyed"]
    assert free is not None and keyed is not None and made["run_born_bound"] is not None
    assert keyed.creator_scopes == ("runs:create",) and keyed.event_seq == 1
    # Leased on the database's clock, as its answer says.
    assert free.status is RunStatus.RUNNING and free.lease.token == "lt" and free.event_seq == 2
    assert born[0].lease_expires_at == free.lease.expires_at
    assert 20 < (free.lease.expires_at - db_now).total_seconds() <= 30
    assert sorted(kinds) == [
        ("run_born_bound", 1, "run.created"),
        ("run_born_free", 1, "run.created"),
        ("run_born_free", 2, "run.claimed"),
        ("run_born_keyed", 1, "run.created"),
    ]
    assert key is not None and key.resource_id == "run_born_keyed"
    assert bound is not None and bound.resource_id == "run_born_bound"
    assert scripts == []


async def test_a_run_whose_birth_answer_was_lost_is_handed_back_and_driven_at_once(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """The statement that made a run leased to its creator committed, but its answer was
    lost: the request answers 503, and the run, which nobody in this process drives, has
    its lease handed back once the database answers, so that a driver finishes it long
    before the lease (30 s here) would have lapsed."""
    h: Harness = await harness_factory()
    headers = await h.key()
    loop = asyncio.get_running_loop()
    started = loop.time()
    with answer_lost(h.app.state.engine, STEP_WRITE, when=with_births) as hit:
        response = await h.client.post(
            "/v1/runs", headers=headers, json={**run_body(final("made")), "wait_s": 0}
        )
    assert len(hit) == 1
    assert response.status_code == 503, response.text
    async with h.runtime.sessions() as session:
        (run_id,) = (await session.execute(select(run.c.id))).scalars().all()
    done = await h.driver.wait("acme", run_id, 10)
    assert done.termination_reason == "final"
    assert loop.time() - started < 10


async def test_an_error_after_the_batch_committed_repeats_nothing(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """An error raised once the statement ran (here reading its answer) leaves every write
    of the batch with an unknown outcome: none is sent again, as a refused batch's are."""
    h, held = await holding(harness_factory, 2)
    writes = [a_write(run_id, token, h, 11) for run_id, token in held]
    writes = [replace(w, events=((EventType.RUN_CLAIMED, {"after_step": 9}),)) for w in writes]
    with (
        counting(h.app.state.engine) as seen,
        answer_lost(h.app.state.engine, STEP_WRITE, error=lambda: TypeError("unreadable")),
    ):
        outcomes = await asyncio.gather(
            *(h.runtime.commits.write(w) for w in writes), return_exceptions=True
        )
    assert all(isinstance(o, TypeError) for o in outcomes), outcomes
    assert len(seen.step_writes()) == 1
    async with h.runtime.sessions() as session:
        stored = await stored_events(session)
        for run_id, _ in held:
            claimed = [
                e
                for e in stored
                if e.run_id == run_id and e.type == "run.claimed" and e.data["after_step"] == 9
            ]
            assert len(claimed) == 1


async def test_a_write_that_cannot_be_encoded_fails_alone(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h, held = await holding(harness_factory, 2)
    good, bad = (a_write(run_id, token, h, 13) for run_id, token in held)
    bad = replace(bad, events=((EventType.RUN_CLAIMED, {"odd": object()}),))
    outcomes = await asyncio.gather(
        h.runtime.commits.write(good), h.runtime.commits.write(bad), return_exceptions=True
    )
    assert not isinstance(outcomes[0], BaseException)
    assert isinstance(outcomes[1], Unencodable)
    async with h.runtime.sessions() as session:
        stored = [await runs_repo.get(session, "acme", run_id) for run_id, _ in held]
    assert [r.step_attempts for r in stored] == [13, 0]
