"""Domain errors carry a stable code; the API maps codes to problem types in one table."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ErrorCode(StrEnum):
    BAD_REQUEST = "bad_request"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    INVALID_STATE = "invalid_state"
    VALIDATION = "validation"
    UNAVAILABLE = "unavailable"


@dataclass
class FieldError:
    path: str
    message: str


@dataclass
class DomainError(Exception):
    """A refusal the client can act on. `message` is safe to show."""

    code: ErrorCode
    message: str
    errors: list[FieldError] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ObservationCode(StrEnum):
    """Machine codes of observations fed back to the model (and of call errors)."""

    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    DUPLICATE_CALL_ID = "duplicate_call_id"
    PERMISSION_DENIED = "permission_denied"
    INVALID_CITATION = "invalid_citation"
    BUDGET = "budget"
    CANCELLED = "cancelled"
    DEADLINE = "deadline"
    TIMEOUT = "timeout"
    NOT_FOUND = "not_found"
    INTERNAL = "internal"
