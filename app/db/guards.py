"""A status guard as SQL: the statuses a move starts from (`domain.lifecycle.moves`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def status_in(column: Any, statuses: Iterable[str]) -> Any:
    """`column = 'x'` for one status (a plain comparison, nothing to expand at execution,
    as a step's write needs it), `column IN (…)` for several."""
    values = sorted(statuses)
    return column == values[0] if len(values) == 1 else column.in_(values)
