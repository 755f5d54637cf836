from enum import StrEnum


class CreateRunInConsistency(StrEnum):
    LATEST = "latest"
    SNAPSHOT = "snapshot"

    def __str__(self) -> str:
        return str(self.value)
