"""Checks of large untrusted data run in a worker thread; small ones in place (the hop
costs more than they do)."""

from __future__ import annotations

import asyncio
import threading

from app.engine import off_loop


async def test_work_from_the_threshold_on_runs_in_a_worker_thread_and_the_loop_goes_on() -> None:
    loop_thread = threading.get_ident()
    release = threading.Event()
    ticks = 0

    def slow() -> int:
        release.wait(10)  # held until the loop has shown it still runs
        assert threading.current_thread().name.startswith("toolgate-check")  # not the default pool
        return threading.get_ident()

    async def ticker() -> None:
        nonlocal ticks
        while not release.is_set():
            ticks += 1
            if ticks == 5:
                release.set()
            await asyncio.sleep(0.01)

    ran_in, _ = await asyncio.gather(off_loop.run(off_loop.THRESHOLD, slow), ticker())
    assert ran_in != loop_thread and ticks >= 5


async def test_work_below_the_threshold_runs_in_place() -> None:
    ran_in = await off_loop.run(off_loop.THRESHOLD - 1, threading.get_ident)
    assert ran_in == threading.get_ident()


def test_a_value_too_deep_to_encode_counts_as_large() -> None:
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert off_loop.json_size(deep) == off_loop.THRESHOLD
    assert off_loop.json_size({"a": "b"}) == len('{"a":"b"}')
