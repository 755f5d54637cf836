"""What a replay compares (`python -m app replay`): a run's transitions, normalized so that
two runs that did the same thing compare equal, and the first transition where they did
not.

A transition is one event of the run's timeline (`GET /v1/runs/{id}/events`) by its type
and the data fields that do not vary by run. Left out:

- events about which process did the work rather than what the run did (`run.claimed`,
  `step.failed`): a crash or a restart adds them, the run's course stays the same;
- data fields made anew by every run: ids (`preview_id`, `operation_id`, ...) and times
  (`expires_at`, ...). The event's own `seq` and `at` are not data; the seq is shown, the
  order compared.

Read-only calls of one round run concurrently and their `call.started` / `call.succeeded`
/ `call.failed` events are written in the order the calls happened to finish: such a
stretch of events is put in proposal order (each call's own events keep theirs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from itertools import zip_longest
from typing import Any

from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.status import PreviewStatus

#: Events about the processes, not the run.
#: The scratch tenants a replay makes its runs in: no key may belong to one, and no
#: process's poller claims their runs (only the replay steps them, with its scripted
#: routes; a service process would call its real model with the recorded input).
SCRATCH_PREFIX = "replay-"


def is_scratch(tenant_id: str) -> bool:
    return tenant_id.startswith(SCRATCH_PREFIX)


PROCESS_EVENTS = frozenset({EventType.RUN_CLAIMED, EventType.STEP_FAILED})

#: Data fields that every run makes anew (ids and times), at any depth.
VARYING_FIELDS = frozenset(
    {
        "run_id",
        "preview_id",
        "new_preview_id",
        "operation_id",
        "trace_id",
        "span_id",
        "expires_at",
        "decided_at",
        "committed_at",
        "observed_at",
        "at",
        "latency_ms",
        "duration_ms",
        # A replay's calls are scripted: their input is bounded by the recorded count, not
        # by the request's size, so the budgets leave them another output cap.
        "output_cap",
    }
)

#: The events a round of concurrent read-only calls writes in the order they finish.
CONCURRENT_EVENTS = frozenset(
    {EventType.CALL_STARTED, EventType.CALL_SUCCEEDED, EventType.CALL_FAILED}
)


@dataclass(frozen=True)
class Transition:
    seq: int
    type: str
    data: dict[str, Any]

    def same_as(self, other: Transition) -> bool:
        return self.type == other.type and self.data == other.data

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "type": self.type, "data": self.data}


@dataclass(frozen=True)
class Difference:
    """The first transition where two runs went apart; None on a side that had ended."""

    recorded: Transition | None
    replayed: Transition | None

    @property
    def seq(self) -> int:
        shown = self.recorded or self.replayed
        assert shown is not None
        return shown.seq


def stable_data(value: Any) -> Any:
    """`value` without the fields in VARYING_FIELDS, at any depth."""
    if isinstance(value, Mapping):
        return {k: stable_data(v) for k, v in value.items() if k not in VARYING_FIELDS}
    if isinstance(value, list | tuple):
        return [stable_data(v) for v in value]
    return value


def transitions(events: Iterable[Mapping[str, Any]]) -> list[Transition]:
    """A timeline's transitions (events as `{"seq", "type", "data"}`, in seq order),
    normalized as the module says."""
    kept = [
        Transition(int(e["seq"]), str(e["type"]), stable_data(e.get("data") or {}))
        for e in events
        if e["type"] not in PROCESS_EVENTS
    ]
    proposed = [
        (t.data.get("step"), t.data.get("call_id"))
        for t in kept
        if t.type == EventType.CALL_PROPOSED
    ]
    order = {key: n for n, key in reversed(list(enumerate(proposed)))}
    return _in_proposal_order(kept, order)


def _in_proposal_order(
    kept: list[Transition], order: Mapping[tuple[Any, Any], int]
) -> list[Transition]:
    """Each stretch of one step's concurrent call events, stably sorted by proposal."""
    result: list[Transition] = []
    stretch: list[Transition] = []

    def position(t: Transition) -> int:
        return order.get((t.data.get("step"), t.data.get("call_id")), len(order))

    def close() -> None:
        result.extend(sorted(stretch, key=position))
        stretch.clear()

    for t in kept:
        joins = t.type in CONCURRENT_EVENTS and (
            not stretch or stretch[-1].data.get("step") == t.data.get("step")
        )
        if not joins:
            close()
        if t.type in CONCURRENT_EVENTS:
            stretch.append(t)
        else:
            result.append(t)
    close()
    return result


def first_difference(
    recorded: Iterable[Transition], replayed: Iterable[Transition]
) -> Difference | None:
    """The first position where the two differ (one side may have ended), or None."""
    for mine, theirs in zip_longest(recorded, replayed):
        if mine is None or theirs is None or not mine.same_as(theirs):
            return Difference(mine, theirs)
    return None


class Decision(StrEnum):
    """What the replay does when its run awaits approval, after the recorded decision on
    the run's preview of the same rank (the first, the second, ...)."""

    #: Approve and commit, as an approver did (a superseded preview was approved and its
    #: commit met a changed resource: the replay commits, and the resource says again).
    COMMIT = "commit"
    #: Reject with the recorded reason.
    REJECT = "reject"
    #: Approve only: the recorded run ended before anyone committed.
    APPROVE = "approve"
    #: Nothing the replay could reproduce (the preview expired or was never decided, or
    #: the recorded run had no such preview): the replay cancels its run there.
    STOP = "stop"


def decision_for(status: PreviewStatus | None) -> Decision:
    """The replay's decision after a recorded preview's final status (None: no preview)."""
    if status in (PreviewStatus.COMMITTED, PreviewStatus.SUPERSEDED):
        return Decision.COMMIT
    if status is PreviewStatus.REJECTED:
        return Decision.REJECT
    if status is PreviewStatus.APPROVED:
        return Decision.APPROVE
    return Decision.STOP
