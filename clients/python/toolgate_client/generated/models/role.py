from enum import StrEnum


class Role(StrEnum):
    ADMIN = "admin"
    APPROVER = "approver"
    CALLER = "caller"

    def __str__(self) -> str:
        return str(self.value)
