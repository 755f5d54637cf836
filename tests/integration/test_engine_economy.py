"""What a step costs the database, counted (never timed): one committed write
transaction per step, a few statements each, no read of what the holder wrote, and the
history read only by a process that claims a run."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.factories import final, run_body, search_rounds, seed_radar
from tests.support.harness import Harness
from tests.support.statements import counting


@pytest.mark.parametrize(("n", "hold_ms"), [(1, 50.0), (5, 50.0), (1, 0.0), (5, 0.0)])
async def test_a_run_of_n_read_only_rounds_commits_at_most_2n_plus_3_write_transactions(
    harness_factory, n: int, hold_ms: float
) -> None:  # type: ignore[no-untyped-def]
    h: Harness = await harness_factory(run_driver=False)
    h.runtime.settings.turn_hold_ms = hold_ms
    await seed_radar(h)
    headers = await h.key()
    # The first run pays once for its key's first use and its config version's row.
    await h.client.post("/v1/runs", headers=headers, json=run_body(*search_rounds(n)))
    with counting(h.app.state.engine) as seen:
        response = await h.client.post(
            "/v1/runs", headers=headers, json=run_body(*search_rounds(n))
        )
    run = response.json()
    assert response.status_code == 201 and run["termination_reason"] == "final"
    assert run["usage"]["tool_calls"] == n and run["usage"]["steps"] == n + 1
    writes = seen.committed_writes
    assert len(writes) <= 2 * n + 3, [w[0][:60] for w in writes]
    # Alone, each write goes in a batch of its own: the run's creation, 2N + 1 steps
    # (turns, rounds, the finish) and the Idempotency-Key's answer; a turn of reads
    # held for their outcomes (here they settle at once) is one write with its round.
    rounds = n if hold_ms else 2 * n
    assert len(seen.step_writes()) == rounds + 3
    assert sum(len(w) for w in writes) / len(writes) <= 5
    # The holder keeps the run's state: it never reads back the run, its turns or calls.
    assert seen.reading("run") == [] and seen.reading("turn") == []
    assert seen.reading("tool_call") == []


async def test_what_the_holder_kept_in_memory_is_what_the_database_holds(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h: Harness = await harness_factory(run_driver=False)
    await seed_radar(h)
    headers = await h.key()
    created = (
        await h.client.post("/v1/runs", headers=headers, json=run_body(*search_rounds(3)))
    ).json()
    stored = (await h.client.get(f"/v1/runs/{created['id']}", headers=headers)).json()
    assert created == stored
    events = (
        await h.client.get(f"/v1/runs/{created['id']}/events?limit=200", headers=headers)
    ).json()["items"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert stored["version"] > 1 and events[-1]["type"] == "run.finished"


async def test_a_claimed_run_reads_its_history_once(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """A run queued (no free slot here) and then claimed by the driver: the claim is one
    transaction, and the steps after it read nothing back."""
    h: Harness = await harness_factory(run_driver=False)
    await seed_radar(h)
    headers = await h.key()
    first = (
        await h.client.post(
            "/v1/runs",
            headers=headers,
            json=run_body(final("x", delay_ms=60_000), wait_s=0),
        )
    ).json()
    assert first["status"] == "running"
    script = search_rounds(4)
    # Another run, queued (the driver has no free slot for it), then claimed by the poller.
    h.runtime.settings.max_active_runs = 1
    queued = (
        await h.client.post("/v1/runs", headers=headers, json=run_body(*script, wait_s=0))
    ).json()
    assert queued["status"] == "queued"
    h.runtime.settings.max_active_runs = 64
    with counting(h.app.state.engine) as seen:
        assert await h.driver.poll_once() == 1
        finished = await h.driver.wait("acme", queued["id"], 10)
    assert finished.termination_reason == "final"
    # Claimed before its first step, it has no history to read; later steps read nothing.
    assert seen.reading("turn") == [] and seen.reading("tool_call") == []
    # The claim, four rounds of two transactions, the final turn.
    assert len(seen.committed_writes) <= 2 * 4 + 2


async def test_concurrent_creates_never_lease_past_the_free_slots(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """A slot is held from the create's start to its adoption: of two creates at once with
    one slot free, one run is leased here and the other queued for any driver."""
    h: Harness = await harness_factory(run_driver=False)
    await seed_radar(h)
    headers = await h.key()
    h.runtime.settings.max_active_runs = 1
    body = run_body(final("x", delay_ms=60_000), wait_s=0)
    answers = await asyncio.gather(
        *(h.client.post("/v1/runs", headers=headers, json=body) for _ in range(2))
    )
    assert sorted(a.json()["status"] for a in answers) == ["queued", "running"]
