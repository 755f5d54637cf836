from enum import StrEnum


class RunOutConsistency(StrEnum):
    LATEST = "latest"
    SNAPSHOT = "snapshot"

    def __str__(self) -> str:
        return str(self.value)
