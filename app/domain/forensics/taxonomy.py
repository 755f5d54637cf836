"""The diagnosis's fixed taxonomy (SPEC §9): every category, its family, and which
category an error code or a termination reason is. `docs/diagnosis.md` lists them."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from app.domain.lifecycle.status import TerminationReason


class DiagnosisCategory(StrEnum):
    # The model
    RATE_LIMITED = "rate_limited"
    AUTH = "auth"
    UNAVAILABLE = "unavailable"
    REJECTED = "rejected"
    CONTENT_FILTERED = "content_filtered"
    TRUNCATED = "truncated"
    MALFORMED_OUTPUT = "malformed_output"
    # A tool call
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    PERMISSION_DENIED = "permission_denied"
    BUDGET_DENIED = "budget_denied"
    APPROVAL_REJECTED = "approval_rejected"
    APPROVAL_EXPIRED = "approval_expired"
    TIMEOUT = "timeout"
    FAILED = "failed"
    INVALID_OUTPUT = "invalid_output"
    OUTCOME_UNKNOWN = "outcome_unknown"
    # The agent's loop
    REPEATED_CALL = "repeated_call"
    IGNORED_FEEDBACK = "ignored_feedback"
    NO_PROGRESS = "no_progress"
    STOPPED_EARLY = "stopped_early"
    # Limits the run reached
    MAX_STEPS = "max_steps"
    DEADLINE = "deadline"
    BUDGET = "budget"
    CONTEXT_EXHAUSTED = "context_exhausted"
    # The platform, or someone outside the run
    CANCELLED = "cancelled"
    POLICY_DENIED = "policy_denied"
    INTERNAL = "internal"
    # No recorded fault explains the failure
    NEEDS_REVIEW = "needs_review"
    # Only a terminal cause: the run ended with an accepted answer
    FINAL = "final"


C = DiagnosisCategory
#: The taxonomy by family, as the docs list it.
GROUPS: Mapping[str, tuple[DiagnosisCategory, ...]] = {
    "model": (
        C.RATE_LIMITED,
        C.AUTH,
        C.UNAVAILABLE,
        C.REJECTED,
        C.CONTENT_FILTERED,
        C.TRUNCATED,
        C.MALFORMED_OUTPUT,
    ),
    "tool": (
        C.UNKNOWN_TOOL,
        C.INVALID_ARGUMENTS,
        C.PERMISSION_DENIED,
        C.BUDGET_DENIED,
        C.APPROVAL_REJECTED,
        C.APPROVAL_EXPIRED,
        C.TIMEOUT,
        C.FAILED,
        C.INVALID_OUTPUT,
        C.OUTCOME_UNKNOWN,
    ),
    "loop": (C.REPEATED_CALL, C.IGNORED_FEEDBACK, C.NO_PROGRESS, C.STOPPED_EARLY),
    "limits": (C.MAX_STEPS, C.DEADLINE, C.BUDGET, C.CONTEXT_EXHAUSTED),
    "platform": (C.CANCELLED, C.POLICY_DENIED, C.INTERNAL),
    "review": (C.NEEDS_REVIEW,),
    "outcome": (C.FINAL,),
}

#: A model error's code → its category; any other code is `unavailable` (the model gave
#: no usable answer).
MODEL_CODES: Mapping[str, DiagnosisCategory] = {
    "rate_limited": C.RATE_LIMITED,
    "auth": C.AUTH,
    "unavailable": C.UNAVAILABLE,
    "overloaded": C.UNAVAILABLE,
    "timeout": C.UNAVAILABLE,
    "model_unavailable": C.UNAVAILABLE,
    "rejected": C.REJECTED,
    "content_filtered": C.CONTENT_FILTERED,
    "truncated": C.TRUNCATED,
    "malformed_output": C.MALFORMED_OUTPUT,
    # The provider ignored the call's output cap: the run's budget, not a model fault.
    "budget_overshoot": C.BUDGET,
    "context_exhausted": C.CONTEXT_EXHAUSTED,
    "script_exhausted": C.STOPPED_EARLY,
    "no_route": C.POLICY_DENIED,
    "internal": C.INTERNAL,
}

#: A call's error code → its category; any other code (a backend's own) is `failed`.
TOOL_CODES: Mapping[str, DiagnosisCategory] = {
    "unknown_tool": C.UNKNOWN_TOOL,
    "tool_unavailable": C.UNKNOWN_TOOL,
    "invalid_arguments": C.INVALID_ARGUMENTS,
    "duplicate_call_id": C.MALFORMED_OUTPUT,
    "permission_denied": C.PERMISSION_DENIED,
    "tool_disabled": C.PERMISSION_DENIED,
    "rate_limited": C.BUDGET_DENIED,
    "budget": C.BUDGET_DENIED,
    "rejected_by_approver": C.APPROVAL_REJECTED,
    "approval_expired": C.APPROVAL_EXPIRED,
    "timeout": C.TIMEOUT,
    "invalid_output": C.INVALID_OUTPUT,
    "output_too_large": C.INVALID_OUTPUT,
    "outcome_unknown": C.OUTCOME_UNKNOWN,
    # A guardrail's block, or a guardrail that failed (and so blocked): policy, not a fault.
    "guardrail_blocked": C.POLICY_DENIED,
    "guardrail_failed": C.POLICY_DENIED,
}

#: Termination reasons that name their own category; `tool_failed` and `model_failed`
#: take their error's code instead.
ENDINGS: Mapping[str, DiagnosisCategory] = {
    TerminationReason.FINAL: C.FINAL,
    TerminationReason.MAX_STEPS: C.MAX_STEPS,
    TerminationReason.DEADLINE: C.DEADLINE,
    TerminationReason.BUDGET: C.BUDGET,
    TerminationReason.CONTEXT_EXHAUSTED: C.CONTEXT_EXHAUSTED,
    TerminationReason.CANCELLED: C.CANCELLED,
    TerminationReason.POLICY_DENIED: C.POLICY_DENIED,
}
