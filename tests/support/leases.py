"""Steppers that crash and steppers that take over: a process stopped mid-step, and two
harnesses on one database whose clocks are a lease apart."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import func, select

from app.db.clock import DbTime
from app.db.tables import turn
from tests.support.fakes import FakeClock
from tests.support.harness import Harness
from tests.support.waiting import until

LEASE_S = 30


async def crash(h: Harness, run_id: str) -> None:
    """Stops this process's stepper mid-step without any further write, like a kill -9."""
    task = h.driver._tasks[(("acme"), run_id)]
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def two_steppers(  # type: ignore[no-untyped-def]
    harness_factory, probe_a: Any = None, probe_b: Any = None, model_a: Any = None
) -> tuple[Harness, Harness]:
    """a: a process that will crash (its model `model_a`, if given); b: another process
    that sees the database's clock past a's lease (the test's way of letting it lapse)."""
    models = {"scripted": model_a} if model_a is not None else None
    a = await harness_factory(run_driver=False, clock_=FakeClock(), probe=probe_a, models=models)
    later = FakeClock()
    later.advance(LEASE_S + 1)
    b = await harness_factory(
        run_driver=False, clock_=later, probe=probe_b, db_time=DbTime(LEASE_S + 1)
    )
    return a, b


async def turns_written(h: Harness, run_id: str, count: int) -> None:
    """Waits until the run has `count` turns in the database (a turn held back for its
    reads goes alone once its hold is over)."""
    for _ in range(200):
        async with h.runtime.sessions() as session:
            query = select(func.count()).select_from(turn).where(turn.c.run_id == run_id)
            if (await session.execute(query)).scalar_one() == count:
                return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{count} turns never written")


async def stopped(h: Harness, run_id: str) -> None:
    """Waits until this process no longer advances the run."""
    await until(lambda: not h.driver.is_advancing("acme", run_id), what="the stepper's stop")
