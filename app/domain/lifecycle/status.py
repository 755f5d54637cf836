"""Statuses and the transition tables of runs and calls."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from app.domain.errors import ToolgateError


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    FINISHED = "finished"


class TerminationReason(StrEnum):
    FINAL = "final"
    MAX_STEPS = "max_steps"
    DEADLINE = "deadline"
    BUDGET = "budget"
    CANCELLED = "cancelled"
    POLICY_DENIED = "policy_denied"
    TOOL_FAILED = "tool_failed"
    MODEL_FAILED = "model_failed"
    CONTEXT_EXHAUSTED = "context_exhausted"


class CallStatus(StrEnum):
    PENDING = "pending"
    REJECTED = "rejected"
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED = "approved"
    EXECUTING = "executing"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class PreviewStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"
    COMMITTED = "committed"


class InvalidTransition(ToolgateError):
    """A state change the table does not allow: a bug in the caller, or a lost race."""

    def __init__(self, kind: str, current: str, target: str) -> None:
        super().__init__(f"{kind}: {current} -> {target} is not allowed")
        self.kind = kind
        self.current = current
        self.target = target


RUN_TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.QUEUED: frozenset({RunStatus.RUNNING, RunStatus.FINISHED}),
    RunStatus.RUNNING: frozenset(
        {RunStatus.RUNNING, RunStatus.AWAITING_APPROVAL, RunStatus.FINISHED}
    ),
    RunStatus.AWAITING_APPROVAL: frozenset({RunStatus.RUNNING, RunStatus.FINISHED}),
    RunStatus.FINISHED: frozenset(),
}

CALL_TRANSITIONS: dict[CallStatus, frozenset[CallStatus]] = {
    # pending -> failed: the call cannot run at all (its tool left the config).
    CallStatus.PENDING: frozenset(
        {
            CallStatus.EXECUTING,
            CallStatus.REJECTED,
            CallStatus.AWAITING_APPROVAL,
            CallStatus.CANCELLED,
            CallStatus.FAILED,
        }
    ),
    # awaiting_approval/approved -> failed: its tool left the config while it waited;
    # awaiting_approval -> awaiting_approval: an approver revised its arguments (a new
    # preview awaits a decision).
    CallStatus.AWAITING_APPROVAL: frozenset(
        {
            CallStatus.AWAITING_APPROVAL,
            CallStatus.APPROVED,
            CallStatus.REJECTED,
            CallStatus.CANCELLED,
            CallStatus.FAILED,
        }
    ),
    # approved -> rejected: its preview expired before the commit.
    CallStatus.APPROVED: frozenset(
        {CallStatus.EXECUTING, CallStatus.REJECTED, CallStatus.CANCELLED, CallStatus.FAILED}
    ),
    # executing -> executing is a new attempt (retry, or recovery after a lost lease);
    # executing -> awaiting_approval: the resource changed since the preview (the backend
    # refused the commit, changing nothing), so a new preview awaits a new decision.
    CallStatus.EXECUTING: frozenset(
        {
            CallStatus.EXECUTING,
            CallStatus.SUCCEEDED,
            CallStatus.FAILED,
            CallStatus.CANCELLED,
            CallStatus.AWAITING_APPROVAL,
        }
    ),
    CallStatus.REJECTED: frozenset(),
    CallStatus.SUCCEEDED: frozenset(),
    CallStatus.FAILED: frozenset(),
    CallStatus.CANCELLED: frozenset(),
}

PREVIEW_TRANSITIONS: dict[PreviewStatus, frozenset[PreviewStatus]] = {
    # pending -> superseded: an approver revised the call's arguments.
    PreviewStatus.PENDING: frozenset(
        {
            PreviewStatus.APPROVED,
            PreviewStatus.REJECTED,
            PreviewStatus.EXPIRED,
            PreviewStatus.SUPERSEDED,
        }
    ),
    PreviewStatus.APPROVED: frozenset(
        {PreviewStatus.COMMITTED, PreviewStatus.SUPERSEDED, PreviewStatus.EXPIRED}
    ),
    PreviewStatus.REJECTED: frozenset(),
    PreviewStatus.EXPIRED: frozenset(),
    PreviewStatus.SUPERSEDED: frozenset(),
    PreviewStatus.COMMITTED: frozenset(),
}
OPEN_PREVIEW_STATUSES = frozenset({PreviewStatus.PENDING, PreviewStatus.APPROVED})

SETTLED_CALL_STATUSES = frozenset(
    {CallStatus.REJECTED, CallStatus.SUCCEEDED, CallStatus.FAILED, CallStatus.CANCELLED}
)
ACTIVE_RUN_STATUSES = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})


def check_preview_transition(current: PreviewStatus, target: PreviewStatus) -> PreviewStatus:
    if target not in PREVIEW_TRANSITIONS[current]:
        raise InvalidTransition("preview", current, target)
    return target


_TABLES: dict[str, dict] = {
    "run": RUN_TRANSITIONS,
    "call": CALL_TRANSITIONS,
    "preview": PREVIEW_TRANSITIONS,
}


@dataclass(frozen=True)
class Move:
    """One kind of status change a statement makes: from any of `sources` to any of
    `targets`. Declared only through `move`, which refuses an edge its table lacks, so a
    statement's guard (`WHERE status IN …`) is the table's own word."""

    kind: str
    name: str
    sources: frozenset[StrEnum]
    targets: frozenset[StrEnum]

    @property
    def guard(self) -> tuple[str, ...]:
        """The statuses the statement's `WHERE status IN (…)` accepts."""
        return tuple(sorted(s.value for s in self.sources))

    @property
    def target(self) -> str:
        """The one status it writes (a move with several targets has none)."""
        (only,) = self.targets
        return only.value

    def check(self, current: StrEnum, target: StrEnum) -> None:
        """Refuses a change this move does not make (InvalidTransition)."""
        if current not in self.sources or target not in self.targets:
            raise InvalidTransition(self.kind, current, target)

    def edges(self) -> set[tuple[StrEnum, StrEnum]]:
        return {(s, t) for s in self.sources for t in self.targets}


#: Every declared move, by kind and name: what the edge-coverage test walks.
MOVES: dict[tuple[str, str], Move] = {}


def move(kind: str, name: str, sources: Iterable[StrEnum], targets: Iterable[StrEnum]) -> Move:
    table = _TABLES[kind]
    declared = Move(kind, name, frozenset(sources), frozenset(targets))
    for current, target in declared.edges():
        if target not in table[current]:
            raise InvalidTransition(kind, current, target)
    MOVES[(kind, name)] = declared
    return declared
