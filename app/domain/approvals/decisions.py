"""A decision on a preview — an approval, a rejection, the claim of a commit or its
refusal — as one typed change: what becomes of the preview (a move of its status, or
none, and the decision's who, when and why), of its call, and of the parked run, and the
events that tell it. `db.approvals.decisions.apply` turns one into its conditional writes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.domain.audit.chain import Action, Entry
from app.domain.errors import ErrorValue, ToolgateError
from app.domain.guardrails.sensitive import redact_value
from app.domain.lifecycle import moves
from app.domain.lifecycle.events import Event, EventType, preview_event
from app.domain.lifecycle.records import Approval, Call, Preview
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
    #: The preview's version as read: a quorum's count is only right on that one.
    version: int | None = None


@dataclass(frozen=True)
class CallChange:
    """The preview's call, from where the decision finds it (and, with `preview_id`,
    still on that preview), moved by `move`, with `values` set."""

    move: Move
    error: ErrorValue | None = None
    ends_run: bool | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    preview_id: str | None = None


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
    #: A preview made by the decision (a revision's), inserted with it.
    new_preview: Preview | None = None
    #: What the tenant's audit chain records of it, in the same transaction.
    audit: Entry | None = None


class NotOpen(ToolgateError):
    """The preview as read can no longer take this decision."""


class AlreadyApproved(ToolgateError):
    """This approver has approved the preview already: a quorum counts people once."""


def _about(record: Preview, kind: EventType, **data: Any) -> Event:
    about = {"preview_id": record.id, "step": record.step, "call_id": record.call_id}
    return kind, {**about, "tool": record.tool, **data}


def _audited(record: Preview, action: Action, by: str, now: datetime, **data: Any) -> Entry:
    about = {"run_id": record.run_id, "call_id": record.call_id, "tool": record.tool}
    # What an approver wrote may quote anything: the chain keeps no secret either.
    return Entry(by, action, record.id, now, redact_value({**about, **data}))


def _settled(settled: Settlement, preview: Move, call: Move) -> tuple[str, ErrorValue]:
    """The settle rule's choice as the status `preview` writes (and `call` must make)."""
    if settled.preview is None or settled.error is None:
        raise NotOpen()
    if settled.preview not in preview.targets or settled.status not in call.targets:
        raise NotOpen()
    return settled.preview.value, settled.error


def approval(record: Preview, *, content_hash: str, by: str, now: datetime) -> Decision:
    """Pending, unexpired, with this content hash: one more approver. The last one its
    quorum needs makes it approved, its call too; before that it stays pending, with the
    approval counted (on the version read, so that two approvers never count as one)."""
    if any(a.by == by for a in record.approvals):
        raise AlreadyApproved()
    approvals = (*record.approvals, Approval(by, now))
    count = {"approvals": len(approvals), "approvals_required": record.approvals_required}
    values: dict[str, Any] = {"approvals": [a.as_dict() for a in approvals]}
    if len(approvals) < record.approvals_required:
        return Decision(
            events=(
                _about(
                    record,
                    EventType.PREVIEW_APPROVAL_ADDED,
                    by=by,
                    content_hash=content_hash,
                    **count,
                ),
            ),
            preview=PreviewChange(
                moves.PREVIEW_APPROVE.guard,
                values=values,
                content_hash=content_hash,
                version=record.version,
            ),
            call=None,
            wake=False,
            audit=_audited(record, Action.APPROVE, by, now, content_hash=content_hash, **count),
        )
    values.update(status=moves.PREVIEW_APPROVE.target, decided_by=by, decided_at=now)
    return Decision(
        events=(
            _about(record, EventType.PREVIEW_APPROVED, by=by, content_hash=content_hash, **count),
            _about(record, EventType.CALL_APPROVED, by=by),
        ),
        preview=PreviewChange(
            moves.PREVIEW_APPROVE.guard,
            moves.PREVIEW_APPROVE,
            values,
            content_hash=content_hash,
            version=record.version,
        ),
        call=CallChange(moves.CALL_APPROVE),
        wake=False,
        audit=_audited(record, Action.APPROVE, by, now, content_hash=content_hash, **count),
    )


def revision(
    record: Preview, call: Call, new: Preview, *, operation_id: str, reason: str, now: datetime
) -> Decision:
    """Pending, unexpired, on the version read → superseded by `new`, the preview of the
    revised arguments (`new.arguments`, by `new.revised_by`). Its call, still on `record`,
    now holds them (the model's own kept beside them, from its first revision on), is a
    new operation, and awaits a decision on `new`; the run stays parked."""
    by = new.revised_by
    assert by is not None, "a revision's preview names its reviser"
    proposed = call.arguments if call.revision is None else call.proposed_arguments
    revised = {"by": by, "reason": reason, "at": now.isoformat()}
    shown = {"proposed_arguments": redact_value(proposed), "arguments": redact_value(new.arguments)}
    created = {"content_hash": new.content_hash, "expires_at": new.expires_at.isoformat()}
    return Decision(
        events=(
            _about(
                record, EventType.CALL_REVISED, new_preview_id=new.id, **shown, by=by, reason=reason
            ),
            _about(record, EventType.PREVIEW_SUPERSEDED, new_preview_id=new.id, by=by),
            _about(new, EventType.PREVIEW_CREATED, **created, revised_by=by),
            _about(new, EventType.CALL_AWAITING_APPROVAL, operation_id=operation_id),
        ),
        preview=PreviewChange(
            moves.PREVIEW_REVISE.guard,
            moves.PREVIEW_REVISE,
            {
                "status": moves.PREVIEW_REVISE.target,
                "superseded_by": new.id,
                "decided_by": by,
                "decided_at": now,
            },
            version=record.version,
        ),
        call=CallChange(
            moves.CALL_REVISE,
            values={
                "arguments": new.arguments,
                "args_hash": new.args_hash,
                "preview_id": new.id,
                "operation_id": operation_id,
                "proposed_arguments": proposed,
                "revision": revised,
            },
            preview_id=record.id,
        ),
        wake=False,
        new_preview=new,
        audit=_audited(
            record,
            Action.REVISE,
            by,
            now,
            new_preview_id=new.id,
            reason=reason,
            args_hash=new.args_hash,
        ),
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
        audit=_audited(record, Action.REJECT, by, now, reason=reason),
    )


def commit_claim(record: Preview, *, key: str, by: str, now: datetime) -> Decision:
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
        audit=_audited(record, Action.COMMIT, by, now, content_hash=record.content_hash),
    )


def commit_refusal(record: Preview, settled: Settlement, *, by: str, now: datetime) -> Decision:
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
        audit=_audited(record, Action.REFUSE_COMMIT, by, now, code=error.code),
    )
