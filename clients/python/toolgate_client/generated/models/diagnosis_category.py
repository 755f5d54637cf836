from enum import StrEnum


class DiagnosisCategory(StrEnum):
    APPROVAL_EXPIRED = "approval_expired"
    APPROVAL_REJECTED = "approval_rejected"
    AUTH = "auth"
    BUDGET = "budget"
    BUDGET_DENIED = "budget_denied"
    CANCELLED = "cancelled"
    CONTENT_FILTERED = "content_filtered"
    CONTEXT_EXHAUSTED = "context_exhausted"
    DEADLINE = "deadline"
    FAILED = "failed"
    FINAL = "final"
    IGNORED_FEEDBACK = "ignored_feedback"
    INTERNAL = "internal"
    INVALID_ARGUMENTS = "invalid_arguments"
    INVALID_OUTPUT = "invalid_output"
    MALFORMED_OUTPUT = "malformed_output"
    MAX_STEPS = "max_steps"
    NEEDS_REVIEW = "needs_review"
    NO_PROGRESS = "no_progress"
    OUTCOME_UNKNOWN = "outcome_unknown"
    PERMISSION_DENIED = "permission_denied"
    POLICY_DENIED = "policy_denied"
    RATE_LIMITED = "rate_limited"
    REJECTED = "rejected"
    REPEATED_CALL = "repeated_call"
    STOPPED_EARLY = "stopped_early"
    TIMEOUT = "timeout"
    TRUNCATED = "truncated"
    UNAVAILABLE = "unavailable"
    UNKNOWN_TOOL = "unknown_tool"

    def __str__(self) -> str:
        return str(self.value)
