"""Steppers that crash and steppers that take over: a process stopped mid-step, and two
harnesses on one database whose clocks are a lease apart."""

from __future__ import annotations

import asyncio
from typing import Any

from app.db.clock import DbTime
from tests.support.fakes import FakeClock
from tests.support.harness import Harness

LEASE_S = 30


async def crash(h: Harness, run_id: str) -> None:
    """Stops this process's stepper mid-step without any further write, like a kill -9."""
    task = h.driver._tasks[(("acme"), run_id)]
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def two_steppers(  # type: ignore[no-untyped-def]
    harness_factory, probe_a: Any = None, probe_b: Any = None
) -> tuple[Harness, Harness]:
    """a: a process that will crash; b: another process that sees the database's clock
    past a's lease (the test's way of letting it lapse)."""
    a = await harness_factory(run_driver=False, clock_=FakeClock(), probe=probe_a)
    later = FakeClock()
    later.advance(LEASE_S + 1)
    b = await harness_factory(
        run_driver=False, clock_=later, probe=probe_b, db_time=DbTime(LEASE_S + 1)
    )
    return a, b
