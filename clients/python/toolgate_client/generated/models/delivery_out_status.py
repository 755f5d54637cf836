from enum import StrEnum


class DeliveryOutStatus(StrEnum):
    ABANDONED = "abandoned"
    FAILED = "failed"
    PENDING = "pending"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
