"""A step's patch of its run: the columns it sets and nothing else, a later patch's
values over an earlier one's, `None` a value like any other."""

from __future__ import annotations

from dataclasses import fields

from app.domain.lifecycle.run_patch import KEEP, RunPatch
from app.domain.lifecycle.status import RunStatus


def test_a_patch_sets_only_what_it_was_given_and_a_later_one_writes_over_it() -> None:
    assert RunPatch().values() == {}
    first = RunPatch(status=RunStatus.RUNNING, steps=3, lease_token="t", error=None)
    assert first.values() == {
        "status": RunStatus.RUNNING,
        "error": None,
        "lease_token": "t",
        "steps": 3,
    }
    both = first.then(RunPatch(steps=4, lease_token=None))
    assert both.values() == {
        "status": RunStatus.RUNNING,
        "error": None,
        "lease_token": None,
        "steps": 4,
    }
    assert both.sets("lease_token") and not both.sets("output")
    every = {f.name for f in fields(RunPatch)}
    assert {n for n in every if getattr(both, n) is not KEEP} == set(both.values())


def test_a_released_patch_hands_the_lease_back() -> None:
    released = RunPatch.released(status=RunStatus.FINISHED)
    assert released.values() == {
        "status": RunStatus.FINISHED,
        "lease_owner": None,
        "lease_token": None,
        "lease_expires_at": None,
    }
