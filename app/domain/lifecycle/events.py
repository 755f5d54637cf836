"""Every type of event on a run's timeline (SPEC §3.2), defined once: the API documents it
as one enum, and a test checks that the code emits no other."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class EventType(StrEnum):
    RUN_CREATED = "run.created"
    RUN_CLAIMED = "run.claimed"
    RUN_CANCEL_REQUESTED = "run.cancel_requested"
    RUN_FINISHED = "run.finished"
    TURN_COMPLETED = "turn.completed"
    TURN_FAILED = "turn.failed"
    FINAL_REJECTED = "final.rejected"
    STEP_FAILED = "step.failed"
    SOURCES_ASSIGNED = "sources.assigned"
    CALL_PROPOSED = "call.proposed"
    CALL_REJECTED = "call.rejected"
    CALL_AWAITING_APPROVAL = "call.awaiting_approval"
    CALL_APPROVED = "call.approved"
    #: An approver changed its arguments: both sets, who and why; a new preview follows.
    CALL_REVISED = "call.revised"
    CALL_REJECTED_BY_APPROVER = "call.rejected_by_approver"
    CALL_STARTED = "call.started"
    CALL_SUCCEEDED = "call.succeeded"
    CALL_FAILED = "call.failed"
    CALL_CANCELLED = "call.cancelled"
    PREVIEW_CREATED = "preview.created"
    #: One approver's approval of a preview that needs more (a quorum), still pending.
    PREVIEW_APPROVAL_ADDED = "preview.approval_added"
    PREVIEW_APPROVED = "preview.approved"
    PREVIEW_REJECTED = "preview.rejected"
    PREVIEW_COMMIT_REQUESTED = "preview.commit_requested"
    PREVIEW_COMMITTED = "preview.committed"
    PREVIEW_SUPERSEDED = "preview.superseded"
    PREVIEW_EXPIRED = "preview.expired"
    #: A guardrail acted (flagged, redacted or blocked) at one of its points.
    GUARDRAIL_BEFORE_CALL = "guardrail.before_call"
    GUARDRAIL_AFTER_CALL = "guardrail.after_call"
    GUARDRAIL_ON_FINAL = "guardrail.on_final"


def preview_event(status: str) -> EventType:
    """The event that records a preview reaching `status` (`preview.<status>`)."""
    return EventType(f"preview.{status}")


#: One event of a change (a step's, a decision's, a creation's): its type and its data.
Event = tuple[EventType, dict[str, Any]]
