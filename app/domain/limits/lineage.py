"""Child runs (SPEC §3.5): what a child may be granted of its parent's budgets and time.

A child's deadline and its token, cost and tool-call budgets are at most what its parent
has left; its grant (its limits) is reserved on the parent by its creation and given back
when it finishes, when its own usage joins its ancestors'. Steps are not a shared budget:
`max_steps` counts a run's own model turns, so a child's is its own (narrowed as any
run's) and never taken from the parent's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from app.domain.lifecycle.records import Run
from app.domain.lifecycle.status import RunStatus
from app.domain.limits.budget import COST_DIGITS, Limits, Reserved, left_for_child, seconds_left

#: The budgets a child is granted from its parent, in the order they are checked.
SHARED_BUDGETS = ("max_tokens", "max_cost_usd", "max_tool_calls")


@dataclass(frozen=True)
class NoRoom:
    """Why a parent cannot take a child now: the limit with nothing left of it."""

    limit: str
    left: float

    @property
    def message(self) -> str:
        return f"the parent run has no {self.limit} left for a child ({self.left:g} left)"


def finished_message(parent: Run) -> str | None:
    """Why `parent` takes no child at all (None: it may)."""
    if parent.status is RunStatus.FINISHED:
        return "the parent run has finished; a finished run takes no children"
    if parent.cancel_requested_at is not None:
        return "the parent run is being cancelled; it takes no children"
    return None


def grant(wanted: Limits, parent: Run, now: datetime) -> Limits | NoRoom:
    """The child's limits: `wanted` (already narrowed by the caps, its agent and the
    request) clamped to what `parent` has left; or the first limit with nothing left."""
    left = left_for_child(parent.limits, parent.reserved, parent.total_usage)
    time_left = seconds_left(now, parent.deadline_at)
    granted = replace(
        wanted,
        deadline_s=min(wanted.deadline_s, time_left),
        max_tokens=min(wanted.max_tokens, left.max_tokens),
        # To the cent's fraction the column keeps: the reservation and its release
        # must be the same number.
        max_cost_usd=round(min(wanted.max_cost_usd, left.max_cost_usd), COST_DIGITS),
        max_tool_calls=min(wanted.max_tool_calls, left.max_tool_calls),
    )
    if granted.deadline_s <= 0:
        return NoRoom("deadline_s", max(0.0, time_left))
    for name in SHARED_BUDGETS:
        if getattr(granted, name) <= 0:  # integer limits are then below 1
            return NoRoom(name, max(0, getattr(left, name)))
    return granted


def reservation(granted: Limits) -> Reserved:
    """What a child with these limits holds of its parent's budgets."""
    return Reserved(granted.max_tokens, granted.max_cost_usd, granted.max_tool_calls)
