"""`Lease.guarded`, the wait every model call and tool call of a step goes through: its
work's answer, or Interrupted when the run stops first, or TimeoutError; the work never
outlives the wait, and an answer that came is never dropped for a stop that came with it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.engine.process.lease import Interrupted, Lease, NotStarted


def a_lease() -> Lease:
    loop = asyncio.get_running_loop()
    return Lease(rt=None, tenant_id="acme", run_id="run_1", token="t", valid_until=loop.time() + 60)  # type: ignore[arg-type]


class Work:
    """A piece of work that says whether it ran to its end or was cancelled."""

    def __init__(self, seconds: float, answer: Any = "answer") -> None:
        self.seconds, self.answer = seconds, answer
        self.started = self.ended = self.cancelled = False

    async def __call__(self) -> Any:
        self.started = True
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.ended = True
        return self.answer


async def test_the_works_answer_and_its_error_come_back() -> None:
    lease = a_lease()
    assert await lease.guarded(Work(0)(), 5) == "answer"

    async def failing() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        await lease.guarded(failing(), 5)
    assert not lease._wakers  # nothing left behind


@pytest.mark.parametrize("stop", ["interrupt", "lose"])
async def test_a_stop_interrupts_the_work_at_once_and_cancels_it(stop: str) -> None:
    lease, work = a_lease(), Work(30)
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, getattr(lease, stop))
    started = loop.time()
    with pytest.raises(Interrupted):
        await lease.guarded(work(), 30)
    assert loop.time() - started < 5
    assert work.started and work.cancelled and not work.ended


async def test_a_stop_interrupts_even_when_the_run_is_rearmed_before_the_wait_resumes() -> None:
    lease, work = a_lease(), Work(30)

    def stop_and_rearm() -> None:
        lease.interrupt()
        lease.rearm()

    asyncio.get_running_loop().call_later(0.05, stop_and_rearm)
    with pytest.raises(Interrupted):
        await lease.guarded(work(), 30)
    assert work.cancelled


async def test_time_running_out_cancels_the_work() -> None:
    lease, work = a_lease(), Work(30)
    with pytest.raises(TimeoutError):
        await lease.guarded(work(), 0.05)
    assert work.cancelled and not work.ended
    assert not isinstance(TimeoutError(), Interrupted)


async def test_an_answer_that_came_with_a_stop_is_kept() -> None:
    lease = a_lease()
    gate = asyncio.Event()

    async def answers_then_stops() -> str:
        await gate.wait()
        lease.interrupt()  # the stop arrives in the same turn of the loop as the answer
        return "took effect"

    asyncio.get_running_loop().call_soon(gate.set)
    assert await lease.guarded(answers_then_stops(), 30) == "took effect"


async def test_nothing_starts_once_the_run_is_stopping() -> None:
    lease, work = a_lease(), Work(0)
    lease.interrupt()
    with pytest.raises(NotStarted):
        await lease.guarded(work(), 30)
    assert not work.started


async def test_the_work_does_not_outlive_a_cancelled_waiter() -> None:
    lease, work = a_lease(), Work(30)
    waiter = asyncio.ensure_future(lease.guarded(work(), 30))
    await asyncio.sleep(0.05)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await asyncio.sleep(0)
    assert work.cancelled and not lease._wakers


async def test_a_fenced_lease_starts_nothing_and_lets_work_in_flight_end() -> None:
    lease = a_lease()
    flight = asyncio.ensure_future(lease.guarded(Work(0.05)(), 5))
    lease.fence()  # the process lost its liveness lock
    assert lease.stopping and not lease.lapsed
    with pytest.raises(Interrupted):
        lease.check()
    assert await flight == "answer"  # what was in flight is not cut
    waiting = asyncio.ensure_future(lease.until_unfenced())
    await asyncio.sleep(0.02)
    assert not waiting.done()
    lease.unfence()  # the lock is held again, nobody took the process over
    await asyncio.wait_for(waiting, 1)
    lease.check()  # new work may start


async def test_a_fenced_wait_ends_on_a_cancel_and_waits_again_once_rearmed() -> None:
    lease = a_lease()
    lease.fence()
    waiting = asyncio.ensure_future(lease.until_unfenced())
    lease.interrupt()  # a cancel: its step is taken up once the fence is lifted
    await asyncio.wait_for(waiting, 1)
    lease.rearm()
    again = asyncio.ensure_future(lease.until_unfenced())
    await asyncio.sleep(0.02)
    assert not again.done() and lease.cancel_seen  # no busy loop while still fenced
    lease.lose()  # taken over: the wait ends, and the lease is gone
    await asyncio.wait_for(again, 1)
    assert lease.lapsed
