from enum import StrEnum


class RunStatus(StrEnum):
    AWAITING_APPROVAL = "awaiting_approval"
    FINISHED = "finished"
    QUEUED = "queued"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
