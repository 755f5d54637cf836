"""`evolve` makes what `dataclasses.replace` makes, at a fraction of its cost, and leaves
to `replace` the records whose `__init__` does more than store its arguments."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import InitVar, dataclass, field

import pytest

from app.domain.budget import Limits
from app.domain.evolve import evolve
from app.domain.records import Run
from app.domain.status import RunStatus
from tests.support.run_records import run_record


def test_a_changed_run_is_the_one_replace_makes_and_the_original_is_untouched() -> None:
    run = run_record()
    changed = evolve(run, steps=3, status=RunStatus.FINISHED, output={"text": "ok"})
    assert changed == dataclasses.replace(
        run, steps=3, status=RunStatus.FINISHED, output={"text": "ok"}
    )
    assert type(changed) is Run and changed is not run
    assert (run.steps, run.status, run.output) == (0, RunStatus.RUNNING, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        changed.steps = 4  # type: ignore[misc]
    assert hash(evolve(Limits(1, 2, 3, 4.0, 5), max_steps=9)) == hash(Limits(9, 2, 3, 4.0, 5))


def test_a_field_that_does_not_exist_is_refused_as_replace_refuses_it() -> None:
    with pytest.raises(TypeError, match="stepz"):
        evolve(run_record(), stepz=3)


@dataclass(frozen=True)
class Checked:
    n: int

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("negative")


@dataclass(frozen=True)
class Derived:
    n: int
    double: int = field(init=False)
    seed: InitVar[int] = 0

    def __post_init__(self, seed: int) -> None:
        object.__setattr__(self, "double", 2 * self.n + seed)


@dataclass(frozen=True, slots=True)
class Slotted:
    n: int


@dataclass(frozen=True)
class Cached:
    n: int

    @functools.cached_property
    def double(self) -> int:
        return 2 * self.n


def test_records_whose_init_does_more_go_through_replace() -> None:
    with pytest.raises(ValueError, match="negative"):
        evolve(Checked(1), n=-1)
    assert evolve(Derived(1), n=5).double == 10
    assert evolve(Slotted(1), n=2) == Slotted(2)
    once = Cached(1)
    assert once.double == 2
    assert evolve(once, n=5).double == 10
