from enum import StrEnum


class CallStatus(StrEnum):
    APPROVED = "approved"
    AWAITING_APPROVAL = "awaiting_approval"
    CANCELLED = "cancelled"
    EXECUTING = "executing"
    FAILED = "failed"
    PENDING = "pending"
    REJECTED = "rejected"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
