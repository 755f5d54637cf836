from enum import StrEnum


class PreviewStatus(StrEnum):
    APPROVED = "approved"
    COMMITTED = "committed"
    EXPIRED = "expired"
    PENDING = "pending"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"

    def __str__(self) -> str:
        return str(self.value)
