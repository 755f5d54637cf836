from enum import StrEnum


class TerminationReason(StrEnum):
    BUDGET = "budget"
    CANCELLED = "cancelled"
    CONTEXT_EXHAUSTED = "context_exhausted"
    DEADLINE = "deadline"
    FINAL = "final"
    MAX_STEPS = "max_steps"
    MODEL_FAILED = "model_failed"
    POLICY_DENIED = "policy_denied"
    TOOL_FAILED = "tool_failed"

    def __str__(self) -> str:
        return str(self.value)
