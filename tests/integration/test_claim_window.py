"""Claims in proportion to capacity (SPEC §2, on replicas): a process that has committed
no step yet takes up `START` runs by its poll, however many slots it has free, and takes
more once the runs it holds have stepped, or once it has lived `OPEN_AFTER_S`. In a crash
loop, the replica about to die again strands a few runs, not its whole capacity."""

from __future__ import annotations

from app.domain.lifecycle.claim_window import OPEN_AFTER_S, START
from tests.support.factories import final, run_body, seed_radar
from tests.support.harness import Harness


async def queued_runs(h: Harness, count: int, delay_ms: int) -> list[str]:
    """`count` runs queued for any poller (none leased at their creation)."""
    headers = await h.key()
    h.runtime.settings.max_active_runs = 0
    made = [
        await h.client.post(
            "/v1/runs", headers=headers, json=run_body(final("x", delay_ms=delay_ms), wait_s=0)
        )
        for _ in range(count)
    ]
    h.runtime.settings.max_active_runs = 64
    assert [m.json()["status"] for m in made] == ["queued"] * count
    return [m.json()["id"] for m in made]


async def test_a_process_that_has_stepped_nothing_claims_START_runs_and_no_more(  # type: ignore[no-untyped-def]
    harness_factory,
) -> None:
    h: Harness = await harness_factory(run_driver=False)
    await seed_radar(h)
    await queued_runs(h, START + 6, delay_ms=60_000)  # model turns that outlast the test
    assert h.driver.free_slots == 64
    assert await h.driver.poll_once() == START
    assert await h.driver.poll_once() == 0  # none has stepped: the window is full
    h.travel(OPEN_AFTER_S)  # alive that long, it is in no crash loop: the window opens
    assert await h.driver.poll_once() == 6


async def test_the_window_widens_as_the_runs_it_holds_step(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h: Harness = await harness_factory(run_driver=False)
    await seed_radar(h)
    ids = await queued_runs(h, START + 6, delay_ms=0)
    assert await h.driver.poll_once() == START
    taken = [i for i in ids if h.driver.is_advancing("acme", i)]
    claimed = [await h.driver.wait("acme", run_id, 10) for run_id in taken]
    assert [r.termination_reason for r in claimed] == ["final"] * START
    # Each finished run committed at least one step: the window now holds the other six.
    assert h.driver.window.width >= START + START
    assert await h.driver.poll_once() == 6
