"""The typed result of deciding a run's next step, from its persisted records alone.

Because the decision reads only what was committed, any process holding the lease can
resume a run exactly where another one stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from app.domain.errors import ObservationCode
from app.domain.guardrails.policy import POLICY_CODES
from app.domain.lifecycle.status import CallStatus, TerminationReason
from app.domain.limits.budget import Limits, Usage, stop_reason


@dataclass(frozen=True)
class CallModel:
    step: int


@dataclass(frozen=True)
class ExecuteCalls:
    step: int


@dataclass(frozen=True)
class Finish:
    reason: TerminationReason
    error_code: str | None = None
    message: str | None = None


NextStep = CallModel | ExecuteCalls | Finish


@dataclass(frozen=True)
class CallState:
    """The part of a recorded call the decision needs."""

    status: CallStatus
    error_code: str | None = None
    ends_run: bool = False
    message: str | None = None
    #: A success whose source id is not assigned yet: the executor still owes that.
    unnumbered: bool = False

    @property
    def open(self) -> bool:
        return self.status in _OPEN or self.unnumbered


_OPEN = frozenset(
    {
        CallStatus.PENDING,
        CallStatus.EXECUTING,
        CallStatus.AWAITING_APPROVAL,
        CallStatus.APPROVED,
    }
)

_MESSAGES = {
    TerminationReason.CANCELLED: "the run was cancelled",
    TerminationReason.DEADLINE: "the run's deadline passed",
    TerminationReason.BUDGET: "the run's budget is exhausted",
    TerminationReason.MAX_STEPS: "the step limit was reached without a final answer",
}


def finish(
    reason: TerminationReason, code: str | None = None, message: str | None = None
) -> Finish:
    return Finish(reason, code or reason.value, message or _MESSAGES.get(reason, reason.value))


def decide(
    *,
    limits: Limits,
    usage: Usage,
    now: datetime,
    deadline: datetime,
    cancel_requested: bool,
    last_step: int,
    last_calls: Sequence[CallState],
) -> NextStep:
    """What the stepper does next. `last_calls` are the calls of step `last_step`."""
    if cancel_requested:
        return finish(TerminationReason.CANCELLED)
    if now >= deadline:
        return finish(TerminationReason.DEADLINE)
    for call in last_calls:
        if call.ends_run and call.error_code in POLICY_CODES:
            # A guardrail's block ended it (a side effect's blocked result may have
            # succeeded, its output withheld).
            return finish(TerminationReason.POLICY_DENIED, call.error_code, call.message)
        if call.status is CallStatus.FAILED and call.ends_run:
            return finish(TerminationReason.TOOL_FAILED, call.error_code, call.message)
    if any(c.open for c in last_calls):
        return ExecuteCalls(last_step)
    if any(
        c.status is CallStatus.CANCELLED and c.error_code == ObservationCode.BUDGET
        for c in last_calls
    ):
        return finish(
            TerminationReason.BUDGET,
            message="the run's budget cannot pay for all of the turn's calls",
        )
    reason = stop_reason(
        limits=limits, usage=usage, now=now, deadline=deadline, cancel_requested=False
    )
    if reason is not None:
        return finish(reason)
    return CallModel(last_step + 1)


class Next(Enum):
    """What a round does after one of its calls reached an outcome."""

    GO_ON = "go_on"  # the next call may start
    STOP = "stop"  # the run ends (or stops here): no later call starts
    PARK = "park"  # the run waits for a decision on this call's preview

    @classmethod
    def unless(cls, ends: bool) -> Next:
        return cls.STOP if ends else cls.GO_ON
