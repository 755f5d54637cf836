"""A decision on a preview — an approval, a rejection, the claim of a commit or its
refusal — as one typed change: what becomes of the preview (a move of its status, or
none, and the decision's who, when and why), of its call, and of the parked run, and the
events that tell it. `db.approvals.decisions.apply` turns one into its conditional writes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.domain.errors import ErrorValue, ToolgateError
from app.domain.lifecycle import moves
from app.domain.lifecycle.events import Event, EventType, preview_event
from app.domain.lifecycle.records import Preview
from app.domain.lifecycle.settle import Settlement
from app.domain.lifecycle.status import Move


@dataclass(frozen=True)
class PreviewChange:
    """What the decision writes on the preview, which must be in one of `guard`'s
    statuses, unexpired (and, with `content_hash`, that one; with `uncommitted`, not
    committed yet). `move` is None when its status stays (the claim of a commit)."""

    guard: tuple[str, ...]
    move: Move | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str | None = None
    uncommitted: bool = False


@dataclass(frozen=True)
class CallChange:
    """The preview's call, from where the decision finds it, moved by `move`."""

    move: Move
    error: ErrorValue | None = None
    ends_run: bool | None = None


@dataclass(frozen=True)
class Decision:
    events: tuple[Event, ...]
    preview: PreviewChange
    #: None: the call stays where it is (a claimed commit is moved by its first attempt).
    call: CallChange | None
    #: The parked run becomes runnable (none: it stays parked, e.g. an approval).
    wake: bool
    #: ... and is leased to the deciding process, which goes on with it.
    leased: bool = False


class NotOpen(ToolgateError):
    """The preview as read can no longer take this decision."""


def _about(record: Preview, kind: EventType, **data: Any) -> Event:
    about = {"preview_id": record.id, "step": record.step, "call_id": record.call_id}
    return kind, {**about, "tool": record.tool, **data}


def _settled(settled: Settlement, preview: Move, call: Move) -> tuple[str, ErrorValue]:
    """The settle rule's choice as the status `preview` writes (and `call` must make)."""
    if settled.preview is None or settled.error is None:
        raise NotOpen()
    if settled.preview not in preview.targets or settled.status not in call.targets:
        raise NotOpen()
    return settled.preview.value, settled.error


def approval(record: Preview, *, content_hash: str, by: str, now: datetime) -> Decision:
    """Pending, unexpired, with this content hash → approved, its call too."""
    return Decision(
        events=(
            _about(record, EventType.PREVIEW_APPROVED, by=by, content_hash=content_hash),
            _about(record, EventType.CALL_APPROVED, by=by),
        ),
        preview=PreviewChange(
            moves.PREVIEW_APPROVE.guard,
            moves.PREVIEW_APPROVE,
            {"status": moves.PREVIEW_APPROVE.target, "decided_by": by, "decided_at": now},
            content_hash=content_hash,
        ),
        call=CallChange(moves.CALL_APPROVE),
        wake=False,
    )


def rejection(
    record: Preview, settled: Settlement, *, reason: str, by: str, now: datetime
) -> Decision:
    """Pending and unexpired → rejected; its call settles as `settled` says (rejected
    `rejected_by_approver`, fed back to the model) and the run becomes runnable again."""
    status, error = _settled(settled, moves.PREVIEW_REJECT, moves.CALL_REJECT)
    values = {"status": status, "decided_by": by, "decided_at": now, "reason": reason}
    return Decision(
        events=(
            _about(record, preview_event(status), by=by, reason=error.message),
            _about(record, settled.event, by=by, **error.as_dict()),
        ),
        preview=PreviewChange(moves.PREVIEW_REJECT.guard, moves.PREVIEW_REJECT, values),
        call=CallChange(moves.CALL_REJECT, error=error),
        wake=True,
    )


def commit_claim(record: Preview, *, key: str, by: str) -> Decision:
    """An approved, unexpired preview nobody has committed yet: the commit is marked (who,
    under which Idempotency-Key) and the run leased to this process, which executes it."""
    return Decision(
        events=(_about(record, EventType.PREVIEW_COMMIT_REQUESTED, by=by),),
        preview=PreviewChange(
            moves.PREVIEW_COMMIT.guard,  # only what can be committed
            values={"commit_key": key, "committed_by": by},
            uncommitted=True,
        ),
        call=None,
        wake=True,
        leased=True,
    )


def commit_refusal(record: Preview, settled: Settlement, *, by: str) -> Decision:
    """A commit its gates refuse: the approved preview expires unused, its call fails with
    the gate's code (fed back to the model), and the run is leased to this process to go
    on."""
    status, error = _settled(settled, moves.PREVIEW_REFUSE_COMMIT, moves.CALL_REFUSE_COMMIT)
    failed = {**error.as_dict(), "ends_run": settled.ends_run, "by": by}
    return Decision(
        events=(
            _about(record, preview_event(status)),
            _about(record, settled.event, **failed),
        ),
        preview=PreviewChange(
            moves.PREVIEW_REFUSE_COMMIT.guard,
            moves.PREVIEW_REFUSE_COMMIT,
            {"status": status},
            uncommitted=True,
        ),
        call=CallChange(moves.CALL_REFUSE_COMMIT, error=error, ends_run=settled.ends_run),
        wake=True,
        leased=True,
    )
