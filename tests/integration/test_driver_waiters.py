"""Who a step this process commits wakes: a request waiting for its run's end (`wait_s`)
only when the run is finished or parked, or no longer advanced here; a watcher of every
step (an approval's commit following its call) on every step."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.domain.lifecycle.status import RunStatus
from app.domain.limits.budget import Usage
from tests.support.factories import final, run_body


async def test_a_step_that_leaves_the_run_running_wakes_only_the_watchers_of_every_step(
    harness_factory: Any,
) -> None:
    h = await harness_factory(run_driver=False)
    headers = await h.key()
    body = {**run_body(final("done")), "wait_s": 0}
    created = await h.client.post("/v1/runs", headers=headers, json=body)
    assert created.status_code == 201
    run = await h.driver.wait("acme", created.json()["id"], 0)
    key = (run.tenant_id, run.id)
    driver = h.driver
    with (
        driver.watching(*key, every_step=False) as end,
        driver.watching(*key) as step,
    ):
        driver._progress(key, replace(run, status=RunStatus.RUNNING, usage=Usage(steps=1)))
        assert step.is_set() and not end.is_set()
        step.clear()
        driver._progress(
            key, replace(run, status=RunStatus.AWAITING_APPROVAL, usage=Usage(steps=2))
        )
        assert step.is_set() and end.is_set()
        step.clear()
        end.clear()
        driver._progress(key, replace(run, status=RunStatus.FINISHED, usage=Usage(steps=3)))
        assert step.is_set() and end.is_set()
    assert key not in driver._waiters
