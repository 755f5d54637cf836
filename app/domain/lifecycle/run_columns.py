"""A run's columns as its table holds them, flat, and the records `Run` nests some of them
in: its usage, its lease, its reservations and its children's usage. Rows and patches
(`RunPatch`, a step's write) name columns; these turn them into a `Run` and back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from app.domain.lifecycle.records import Run, RunLease
from app.domain.limits.budget import Reserved, Usage

#: Each nested column: the `Run` field that holds it, and its name there.
NESTED: dict[str, tuple[str, str]] = {
    **{f.name: ("usage", f.name) for f in fields(Usage)},
    "lease_owner": ("lease", "owner"),
    "lease_token": ("lease", "token"),
    "lease_expires_at": ("lease", "expires_at"),
    **{f"reserved_{f.name}": ("reserved", f.name) for f in fields(Reserved)},
    **{
        f"children_{f.name}": ("children", f.name)
        for f in fields(Usage)
        if f.name != "steps"  # a run's steps are its own: its children's are not added up
    },
}
_RECORDS = frozenset(record for record, _ in NESTED.values())
#: Every column of the run's table, by name.
COLUMNS: tuple[str, ...] = (
    *(f.name for f in fields(Run) if f.name not in _RECORDS),
    *NESTED,
)


def _split(columns: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """`columns` as `Run`'s own fields and, by record, the nested ones' values."""
    top: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for name, value in columns.items():
        place = NESTED.get(name)
        if place is None:
            top[name] = value
        else:
            nested.setdefault(place[0], {})[place[1]] = value
    return top, nested


def _lease(values: Mapping[str, Any]) -> RunLease | None:
    """A lease from its columns: a run holds one exactly when it has a token."""
    token = values.get("token")
    if token is None:
        return None
    return RunLease(values["owner"], token, values.get("expires_at"))


def _record(run: Run | None, record: str, values: Mapping[str, Any]) -> Any:
    if record == "lease":
        held = None if run is None else run.lease
        was = {} if held is None else vars(held)
        return _lease({**was, **values})
    if run is None:
        return (Reserved if record == "reserved" else Usage)(**values)
    held = getattr(run, record)
    # Every step's write answers the children's columns, which seldom move: kept as they are.
    if all(getattr(held, name) == value for name, value in values.items()):
        return held
    return replace(held, **values)


def run_of(columns: Mapping[str, Any]) -> Run:
    """The run a row's columns (all of them) hold."""
    top, nested = _split(columns)
    for record, values in nested.items():
        top[record] = _record(None, record, values)
    return Run(**top)


def with_columns(run: Run, columns: Mapping[str, Any]) -> Run:
    """`run` with the columns `columns` sets (a patch's, a write's answer)."""
    top, nested = _split(columns)
    for record, values in nested.items():
        top[record] = _record(run, record, values)
    # Every field is an init field stored as given: the copy built from the record's own
    # values, not through `replace` (which looks each field up again).
    return Run(**{**vars(run), **top})


def columns_of(run: Run) -> dict[str, Any]:
    """The run's columns, as its row holds them."""
    lease = run.lease
    row: dict[str, Any] = {}
    for name in COLUMNS:
        place = NESTED.get(name)
        if place is None:
            row[name] = getattr(run, name)
        elif place[0] == "lease":
            row[name] = None if lease is None else getattr(lease, place[1])
        else:
            row[name] = getattr(getattr(run, place[0]), place[1])
    return row
