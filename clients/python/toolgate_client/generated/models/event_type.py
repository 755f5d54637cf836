from enum import StrEnum


class EventType(StrEnum):
    CALL_APPROVED = "call.approved"
    CALL_AWAITING_APPROVAL = "call.awaiting_approval"
    CALL_CANCELLED = "call.cancelled"
    CALL_FAILED = "call.failed"
    CALL_PROPOSED = "call.proposed"
    CALL_REJECTED = "call.rejected"
    CALL_REJECTED_BY_APPROVER = "call.rejected_by_approver"
    CALL_REVISED = "call.revised"
    CALL_STARTED = "call.started"
    CALL_SUCCEEDED = "call.succeeded"
    FINAL_REJECTED = "final.rejected"
    GUARDRAIL_AFTER_CALL = "guardrail.after_call"
    GUARDRAIL_BEFORE_CALL = "guardrail.before_call"
    GUARDRAIL_ON_FINAL = "guardrail.on_final"
    PREVIEW_APPROVAL_ADDED = "preview.approval_added"
    PREVIEW_APPROVED = "preview.approved"
    PREVIEW_COMMITTED = "preview.committed"
    PREVIEW_COMMIT_REQUESTED = "preview.commit_requested"
    PREVIEW_CREATED = "preview.created"
    PREVIEW_EXPIRED = "preview.expired"
    PREVIEW_REJECTED = "preview.rejected"
    PREVIEW_SUPERSEDED = "preview.superseded"
    RUN_CANCEL_REQUESTED = "run.cancel_requested"
    RUN_CLAIMED = "run.claimed"
    RUN_CREATED = "run.created"
    RUN_FINISHED = "run.finished"
    SOURCES_ASSIGNED = "sources.assigned"
    STEP_FAILED = "step.failed"
    TURN_COMPLETED = "turn.completed"
    TURN_FAILED = "turn.failed"

    def __str__(self) -> str:
        return str(self.value)
