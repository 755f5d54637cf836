"""Values by identity: computed once per object that lives on, never kept for an object
made anew for one use (`Unkept`, a long run's digest rebuilt each step)."""

from __future__ import annotations

import gc
import weakref

from app.domain.memo import Unkept, by_identity


def test_a_value_is_computed_once_per_object_and_an_unkept_one_each_time() -> None:
    calls: list[object] = []

    def size(subject: dict) -> int:  # type: ignore[type-arg]
        calls.append(subject)
        return len(subject)

    memo = by_identity(size)
    kept = {"a": 1}
    assert memo(kept) == memo(kept) == 1 and len(calls) == 1
    fresh = Unkept(a=1, b=2)
    assert memo(fresh) == memo(fresh) == 2 and len(calls) == 3
    gone = weakref.ref(fresh)
    calls.clear()
    del fresh
    gc.collect()
    assert gone() is None  # nothing kept it alive
