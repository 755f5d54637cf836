"""A frozen record with some fields changed: `dataclasses.replace` without its cost.

`replace` builds the changed copy through `__init__` again: for a run (49 fields) that is
11 us, and a step makes about ten such copies (docs/performance.md). A record whose
`__init__` only stores its arguments (no `__post_init__`, every field an init field, a
`__dict__` that holds only them: no cached property) is copied by its attributes
instead, 0.5 us, the same record; any other type goes through `replace`, as before."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, TypeVar

T = TypeVar("T")


@functools.cache
def _plain_fields(cls: type) -> frozenset[str] | None:
    """The field names of a dataclass whose instances may be copied attribute by
    attribute, or None when only `replace` builds them right."""
    if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        return None
    if any(isinstance(getattr(cls, name, None), functools.cached_property) for name in dir(cls)):
        return None  # a value cached on the record must not follow it into the copy
    names = frozenset(f.name for f in dataclasses.fields(cls))
    if set(inspect.signature(cls).parameters) != names:
        return None  # an init=False field or an InitVar: __init__ does more than store
    return names


def evolve(record: T, **changes: Any) -> T:
    """`record` with `changes`, as `dataclasses.replace(record, **changes)` makes it."""
    cls = type(record)
    names = _plain_fields(cls)
    if names is None:
        return dataclasses.replace(record, **changes)  # type: ignore[type-var]
    unknown = changes.keys() - names
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    copied = object.__new__(cls)
    state = copied.__dict__
    state.update(record.__dict__)
    state.update(changes)
    return copied
