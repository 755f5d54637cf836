"""Values computed once per object, by the object's identity: for what the hot path asks
again and again of objects that live as long as the process or a run (a tool's schema, a
run's messages) and that nobody changes once made. Each entry keeps its object alive, so an
id is never reused while its entry stands; past `size` entries the memo starts afresh."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Unkept(dict):  # type: ignore[type-arg]
    """A mapping made anew for one use (a long run's digest, rebuilt each step): a memo by
    identity computes its value without keeping it, so it neither lives on in the memo nor
    pushes out what is asked again."""


def by_identity(compute: Callable[[Any], T], *, size: int = 1024) -> Callable[[Any], T]:
    known: dict[int, tuple[Any, T]] = {}

    def memoized(subject: Any) -> T:
        if isinstance(subject, Unkept):
            return compute(subject)
        entry = known.get(id(subject))
        if entry is not None and entry[0] is subject:
            return entry[1]
        if len(known) >= size:
            known.clear()
        value = compute(subject)
        known[id(subject)] = (subject, value)
        return value

    return memoized
