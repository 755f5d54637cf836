"""How a call settles, in one pure rule: its status, its error, whether it ends the run,
and what its open preview becomes. Every path that settles a call — the executor, a
commit, a decision on a preview, a run's finish — asks here, so a settle rule is written
once."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from app.domain.errors import ErrorValue, ObservationCode
from app.domain.lifecycle import moves
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.records import Preview
from app.domain.lifecycle.status import OPEN_PREVIEW_STATUSES, CallStatus, PreviewStatus

OUTCOME_UNKNOWN = "outcome_unknown"
UNKNOWN_MESSAGE = "the call's outcome is unknown and it may not be sent again"
#: A side effect that may have taken effect, which nobody can tell: it ends the run.
UNKNOWN = ErrorValue(OUTCOME_UNKNOWN, UNKNOWN_MESSAGE)


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"  # it ran; its output is kept
    WITHHELD = "withheld"  # it ran and took effect; its output could not be kept
    FAILED = "failed"  # it failed (its tool's error, or a gate that stopped it)
    UNKNOWN = "unknown"  # it may have taken effect; nobody can tell
    CANCELLED = "cancelled"  # provably never sent: the run stopped first
    REFUSED = "refused"  # never sent: the run's budget cannot pay for it
    EXPIRED = "expired"  # its approval expired before a commit
    REJECTED = "rejected"  # an approver rejected it


#: Outcomes after which the call's request may have left.
_SENT = frozenset({Outcome.SUCCEEDED, Outcome.WITHHELD, Outcome.UNKNOWN})

#: The move each outcome makes of a call (`domain.lifecycle.moves`), and so the status it writes;
#: a call it does not start from is refused.
_MOVE = {
    Outcome.SUCCEEDED: moves.CALL_SUCCEED,
    Outcome.WITHHELD: moves.CALL_SUCCEED,
    Outcome.FAILED: moves.CALL_FAIL,
    Outcome.UNKNOWN: moves.CALL_FAIL,
    Outcome.CANCELLED: moves.CALL_CANCEL,
    Outcome.REFUSED: moves.CALL_CANCEL,
    Outcome.EXPIRED: moves.CALL_EXPIRE,
    Outcome.REJECTED: moves.CALL_REJECT,
}

_EVENT = {
    Outcome.SUCCEEDED: EventType.CALL_SUCCEEDED,
    Outcome.WITHHELD: EventType.CALL_SUCCEEDED,
    Outcome.FAILED: EventType.CALL_FAILED,
    Outcome.UNKNOWN: EventType.CALL_FAILED,
    Outcome.CANCELLED: EventType.CALL_CANCELLED,
    Outcome.REFUSED: EventType.CALL_CANCELLED,
    Outcome.EXPIRED: EventType.CALL_REJECTED,
    Outcome.REJECTED: EventType.CALL_REJECTED_BY_APPROVER,
}


class CallAt(Protocol):
    """A call as far as its settlement depends on it."""

    @property
    def status(self) -> CallStatus: ...

    @property
    def attempts(self) -> int: ...


@dataclass(frozen=True)
class Found:
    """A call as a decision on its preview finds it (never started)."""

    status: CallStatus
    attempts: int = 0


_PREVIEW_MOVE = {
    PreviewStatus.COMMITTED: moves.PREVIEW_COMMIT,
    PreviewStatus.EXPIRED: moves.PREVIEW_EXPIRE,
    PreviewStatus.REJECTED: moves.PREVIEW_REJECT,
}


@dataclass(frozen=True)
class Settlement:
    """What a call becomes, and its open preview with it (None: it has none open)."""

    status: CallStatus
    error: ErrorValue | None
    ends_run: bool
    event: EventType
    preview: PreviewStatus | None


def settle(
    call: CallAt,
    outcome: Outcome,
    *,
    preview: Preview | None = None,
    error: ErrorValue | None = None,
    ends_run: bool = False,
    sent: bool | None = None,
) -> Settlement:
    """The settlement of `call` by `outcome`, refused (InvalidTransition) when the call's
    or its preview's transition table has no such edge. `error`: why it failed, was
    cancelled or refused (an unknown outcome always has `UNKNOWN`, and ends the run).
    A failure counts as sent when an attempt of it is in flight (`executing`); `sent`
    says otherwise where the caller knows (a run that finishes with a call in flight)."""
    made = _MOVE[outcome]
    status = CallStatus(made.target)
    made.check(call.status, status)
    if outcome is Outcome.UNKNOWN:
        error, ends_run = UNKNOWN, True
    if sent is None:
        # A failure may have left when it failed in flight: an attempt under this
        # preview was started (`executing`). A gate's refusal before the attempt did not.
        sent = outcome in _SENT or (
            outcome is Outcome.FAILED and call.status is CallStatus.EXECUTING
        )
    after = None
    if preview is not None and preview.status in OPEN_PREVIEW_STATUSES:
        after = preview_after(preview, outcome, sent)
        _PREVIEW_MOVE[after].check(preview.status, after)
    return Settlement(status, error, ends_run, _EVENT[outcome], after)


def preview_after(preview: Preview, outcome: Outcome, sent: bool) -> PreviewStatus:
    """An open preview once its call settled: rejected with a rejection; `committed` only
    when a commit was claimed *and* the call's request may have left; otherwise it
    expired — the call was cancelled before it ran, refused by a budget or a gate, lost
    its tool, or its approval lapsed."""
    if outcome is Outcome.REJECTED:
        return PreviewStatus.REJECTED
    if preview.commit_key is not None and sent:
        return PreviewStatus.COMMITTED
    return PreviewStatus.EXPIRED


def refusal(message: str) -> ErrorValue:
    """Why a call was refused before any attempt: the run's budget."""
    return ErrorValue(ObservationCode.BUDGET, message)
