"""The service raises the garbage collector's youngest-generation threshold at start-up
(TOOLGATE_GC_GEN0_THRESHOLD): a step's many short-lived objects are not collected every
700 allocations."""

from __future__ import annotations

import gc

from tests.support.harness import Harness


async def test_start_up_raises_the_youngest_generations_threshold(harness_factory) -> None:  # type: ignore[no-untyped-def]
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, before[1], before[2])
        h: Harness = await harness_factory(settings_override={"gc_gen0_threshold": 40_000})
        assert gc.get_threshold() == (40_000, before[1], before[2])
        assert (await h.client.get("/healthz")).status_code == 200
    finally:
        gc.set_threshold(*before)
