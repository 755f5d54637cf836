"""Domain errors carry a stable code; the API maps codes to problem types in one table."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from app.domain.text import storable


class ErrorCode(StrEnum):
    BAD_REQUEST = "bad_request"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    INVALID_STATE = "invalid_state"
    VALIDATION = "validation"
    UNAVAILABLE = "unavailable"
    PREVIEW_MISMATCH = "preview_mismatch"
    PREVIEW_NOT_APPROVED = "preview_not_approved"
    VERSION_CONFLICT = "version_conflict"
    PREVIEW_EXPIRED = "preview_expired"
    QUOTA_EXCEEDED = "quota_exceeded"


class ToolgateError(Exception):
    """The root of every exception the application defines: one tree to catch and read."""


@dataclass
class FieldError:
    path: str
    message: str


@dataclass
class DomainError(ToolgateError):
    """A refusal the client can act on. `message` is safe to show."""

    code: ErrorCode
    message: str
    errors: list[FieldError] = field(default_factory=list)
    #: Members the problem answer carries besides the standard ones (e.g. `new_preview_id`).
    extra: dict[str, Any] = field(default_factory=dict)
    #: Raised after the use case changed state (a commit refused by its gates, a version
    #: conflict that superseded the preview): its answer is stored under the request's
    #: Idempotency-Key and replayed, like a success's.
    settled: bool = False
    #: Seconds after which the same request may succeed (`Retry-After`), for a refusal
    #: that time lifts (a quota).
    retry_after_s: int | None = None

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ObservationCode(StrEnum):
    """Machine codes of observations fed back to the model (and of call errors)."""

    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    DUPLICATE_CALL_ID = "duplicate_call_id"
    PERMISSION_DENIED = "permission_denied"
    TOOL_DISABLED = "tool_disabled"
    TOOL_UNAVAILABLE = "tool_unavailable"
    RATE_LIMITED = "rate_limited"
    INVALID_CITATION = "invalid_citation"
    BUDGET = "budget"
    CANCELLED = "cancelled"
    DEADLINE = "deadline"
    TIMEOUT = "timeout"
    NOT_FOUND = "not_found"
    INTERNAL = "internal"
    REJECTED_BY_APPROVER = "rejected_by_approver"
    APPROVAL_EXPIRED = "approval_expired"


#: How much of a message an error value keeps (SPEC: safe text, cut to 500 characters).
MAX_MESSAGE = 500


@dataclass(frozen=True)
class ErrorValue:
    """The `{code, retryable, message}` of a rejected proposal, a failed call or a failed
    model turn. Built only here, so every message is NUL-free and cut to size."""

    code: str
    message: str
    retryable: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", str(self.code))
        object.__setattr__(self, "message", storable(self.message)[:MAX_MESSAGE])

    @classmethod
    def rejection(cls, code: str, message: str) -> ErrorValue:
        """A proposal refused before it ran: the model may correct it."""
        return cls(code, message, retryable=True)

    @classmethod
    def from_dict(cls, data: dict | None) -> ErrorValue | None:
        if data is None:
            return None
        return cls(
            str(data.get("code")), str(data.get("message") or ""), bool(data.get("retryable"))
        )

    def as_dict(self) -> dict[str, object]:
        return {"code": self.code, "retryable": self.retryable, "message": self.message}
