"""The errors this client raises: one class per problem type the service answers (RFC 9457
`code`), so a caller catches `VersionConflict` rather than reading status codes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar

import httpx


class ToolgateError(Exception):
    """The base of every error of this client's own."""


@dataclass(frozen=True)
class FieldError:
    path: str
    message: str


class ProblemError(ToolgateError):
    """A problem answer (`application/problem+json`). `problem` is the whole body, members
    beyond RFC 9457's included (`new_preview_id`, ...)."""

    #: The problem code the class stands for ("" for this base class).
    CODE: ClassVar[str] = ""

    def __init__(
        self, status: int, problem: Mapping[str, Any], retry_after_s: float | None = None
    ) -> None:
        self.status = status
        self.problem = dict(problem)
        #: The answer's code: the class's, or one this client does not know yet.
        self.code: str = str(problem.get("code") or type(self).CODE)
        self.title: str = str(problem.get("title", ""))
        self.detail: str = str(problem.get("detail", ""))
        self.instance: str | None = problem.get("instance")
        self.trace_id: str | None = problem.get("trace_id")
        self.errors = [
            FieldError(str(e.get("path", "")), str(e.get("message", "")))
            for e in problem.get("errors") or ()
            if isinstance(e, Mapping)
        ]
        #: The server's `Retry-After`, in seconds, when it named one.
        self.retry_after_s = retry_after_s
        super().__init__(f"{status} {self.code or self.title}: {self.detail}")


class BadRequest(ProblemError):
    CODE = "bad-request"


class IdempotencyKeyMissing(ProblemError):
    CODE = "idempotency-key-missing"


class Unauthenticated(ProblemError):
    CODE = "unauthenticated"


class Forbidden(ProblemError):
    CODE = "forbidden"


class NotFound(ProblemError):
    CODE = "not-found"


class MethodNotAllowed(ProblemError):
    CODE = "method-not-allowed"


class InvalidState(ProblemError):
    CODE = "invalid-state"


class IdempotencyKeyInFlight(ProblemError):
    CODE = "idempotency-key-in-flight"


class PreviewMismatch(ProblemError):
    CODE = "preview-mismatch"


class PreviewNotApproved(ProblemError):
    CODE = "preview-not-approved"


class VersionConflict(ProblemError):
    """The resource changed since the preview: a new preview awaits approval."""

    CODE = "version-conflict"

    @property
    def new_preview_id(self) -> str | None:
        return self.problem.get("new_preview_id")


class PreviewExpired(ProblemError):
    CODE = "preview-expired"


class PayloadTooLarge(ProblemError):
    CODE = "payload-too-large"


class UnsupportedMediaType(ProblemError):
    CODE = "unsupported-media-type"


class ValidationError(ProblemError):
    """Some fields are invalid: `errors` names each one."""

    CODE = "validation-error"


class IdempotencyKeyReused(ProblemError):
    CODE = "idempotency-key-reused"


class RateLimited(ProblemError):
    CODE = "rate-limited"


class QuotaExceeded(ProblemError):
    CODE = "quota-exceeded"


class InternalError(ProblemError):
    CODE = "internal"


class Unavailable(ProblemError):
    CODE = "unavailable"


#: The class of each problem code; an unknown code (a newer server) is a `ProblemError`.
PROBLEM_CLASSES: dict[str, type[ProblemError]] = {
    cls.CODE: cls for cls in ProblemError.__subclasses__()
}


class WebhookVerificationError(ToolgateError):
    """A webhook whose signature or timestamp does not verify: do not act on it."""


class WaitTimeout(ToolgateError):
    """The run was still queued or running when the wait's own timeout ended."""

    def __init__(self, run: Any) -> None:
        self.run = run
        super().__init__(f"run {run.id} is still {run.status} after the wait's timeout")


def retry_after_s(headers: httpx.Headers) -> float | None:
    """`Retry-After` in seconds: delay-seconds or an HTTP date; None when absent or odd."""
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def problem_of(response: httpx.Response) -> ProblemError:
    """The error a non-2xx answer stands for (its body read)."""
    return problem_from(response.status_code, response.content, response.headers)


def problem_from(status: int, content: bytes, headers: httpx.Headers) -> ProblemError:
    """A body that is not a problem (a proxy's page) still gives a `ProblemError`."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if not isinstance(body, Mapping):
        body = {"status": status, "title": f"HTTP {status}", "detail": ""}
    cls = PROBLEM_CLASSES.get(str(body.get("code", "")), ProblemError)
    return cls(int(status), body, retry_after_s(headers))
