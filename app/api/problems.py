"""RFC 9457 problem responses: the one table from codes to (status, slug, title), and the
renderer every error path uses."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response

from app.domain.errors import DomainError, ErrorCode, FieldError, ToolgateError

PROBLEM_JSON = "application/problem+json"


@dataclass(frozen=True)
class ProblemType:
    status: int
    slug: str
    title: str
    meaning: str
    action: str


PROBLEM_TYPES: dict[str, ProblemType] = {
    p.slug: p
    for p in [
        ProblemType(
            400,
            "bad-request",
            "Bad request",
            "The request could not be read: malformed JSON, a bad header or parameter.",
            "Fix the request; sending it again unchanged will fail again.",
        ),
        ProblemType(
            400,
            "idempotency-key-missing",
            "Idempotency-Key missing",
            "This operation requires an Idempotency-Key header.",
            "Send a unique key per logical request and reuse it on every retry.",
        ),
        ProblemType(
            401,
            "unauthenticated",
            "Unauthenticated",
            "No valid API key was presented.",
            "Send `Authorization: Bearer <api key>` with a key that is not revoked.",
        ),
        ProblemType(
            403,
            "forbidden",
            "Forbidden",
            "The API key lacks the role this operation needs.",
            "Use a key with the role, or ask an operator to grant it.",
        ),
        ProblemType(
            404,
            "not-found",
            "Not found",
            "No such resource in your tenant (or no such route).",
            "Check the id and the path; resources of other tenants are never visible.",
        ),
        ProblemType(
            405,
            "method-not-allowed",
            "Method not allowed",
            "The path exists but not with this method.",
            "Use one of the methods listed in the Allow header.",
        ),
        ProblemType(
            409,
            "invalid-state",
            "Invalid state",
            "The resource is not in a state that allows this operation.",
            "Read the resource again and act on its current state.",
        ),
        ProblemType(
            409,
            "idempotency-key-in-flight",
            "Request in flight",
            "A request with this Idempotency-Key is still being processed.",
            "Retry after the Retry-After delay with the same key.",
        ),
        ProblemType(
            409,
            "preview-mismatch",
            "Preview mismatch",
            "The content hash does not match the preview as stored.",
            "Fetch the preview again, review it, and approve its current content hash.",
        ),
        ProblemType(
            409,
            "preview-not-approved",
            "Preview not approved",
            "Only an approved preview can be committed.",
            "Approve the preview first, or read its status.",
        ),
        ProblemType(
            409,
            "version-conflict",
            "Version conflict",
            "The resource changed since the preview was made; a new preview exists.",
            "Review and approve the new preview named in `new_preview_id`.",
        ),
        ProblemType(
            410,
            "preview-expired",
            "Preview expired",
            "The preview expired before this decision.",
            "Nothing to do for this preview; the run has been told.",
        ),
        ProblemType(
            413,
            "payload-too-large",
            "Payload too large",
            "The request body is larger than the server accepts.",
            "Send a smaller body.",
        ),
        ProblemType(
            415,
            "unsupported-media-type",
            "Unsupported media type",
            "The body is not `application/json`.",
            "Send JSON with `Content-Type: application/json`.",
        ),
        ProblemType(
            422,
            "validation-error",
            "Validation error",
            "The request is well-formed but some fields are invalid; `errors` lists them.",
            "Fix each field named by `errors[].path`.",
        ),
        ProblemType(
            422,
            "idempotency-key-reused",
            "Idempotency-Key reused",
            "The Idempotency-Key was used before with a different request.",
            "Use a new key for a new request.",
        ),
        ProblemType(
            429,
            "rate-limited",
            "Rate limited",
            "Too many requests in a short time, or too many event streams open (for the "
            "server, or for your tenant's share of it).",
            "Retry after the Retry-After delay.",
        ),
        ProblemType(
            429,
            "quota-exceeded",
            "Quota exceeded",
            "The tenant's quota is used up.",
            "Retry after the Retry-After delay, or ask for a larger quota.",
        ),
        ProblemType(
            500,
            "internal",
            "Internal error",
            "An unexpected error in the service; it has been logged with the trace id.",
            "Retry later; report the trace_id if it persists.",
        ),
        ProblemType(
            503,
            "unavailable",
            "Service unavailable",
            "A dependency (the database) is unreachable, or the server is already "
            "serving as many requests as it allows.",
            "Retry after the Retry-After delay.",
        ),
    ]
}

_BY_CODE: dict[ErrorCode, str] = {
    ErrorCode.BAD_REQUEST: "bad-request",
    ErrorCode.UNAUTHENTICATED: "unauthenticated",
    ErrorCode.FORBIDDEN: "forbidden",
    ErrorCode.NOT_FOUND: "not-found",
    ErrorCode.INVALID_STATE: "invalid-state",
    ErrorCode.VALIDATION: "validation-error",
    ErrorCode.UNAVAILABLE: "unavailable",
    ErrorCode.PREVIEW_MISMATCH: "preview-mismatch",
    ErrorCode.PREVIEW_NOT_APPROVED: "preview-not-approved",
    ErrorCode.VERSION_CONFLICT: "version-conflict",
    ErrorCode.PREVIEW_EXPIRED: "preview-expired",
    ErrorCode.QUOTA_EXCEEDED: "quota-exceeded",
}


class ProblemError(ToolgateError):
    """Raised by the API layer for refusals that are about HTTP itself."""

    def __init__(
        self,
        slug: str,
        detail: str,
        *,
        errors: Sequence[FieldError] = (),
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.slug = slug
        self.detail = detail
        self.errors = list(errors)
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})


def from_domain(error: DomainError) -> ProblemError:
    headers = {} if error.retry_after_s is None else {"Retry-After": str(error.retry_after_s)}
    return ProblemError(
        _BY_CODE[error.code], error.message, errors=error.errors, extra=error.extra, headers=headers
    )


def problem_type_uri(base_url: str, slug: str) -> str:
    """`{base_url}/problems/{slug}`; with no base URL, the relative `/problems/{slug}`."""
    return f"{base_url.rstrip('/')}/problems/{slug}"


def problem_body(
    slug: str,
    detail: str,
    *,
    base_url: str,
    instance: str,
    trace_id: str,
    errors: Sequence[FieldError] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    kind = PROBLEM_TYPES[slug]
    body: dict[str, Any] = {
        "type": problem_type_uri(base_url, slug),
        "title": kind.title,
        "status": kind.status,
        "detail": detail,
        "instance": instance,
        "code": slug,
        "trace_id": trace_id,
    }
    if slug == "validation-error":
        body["errors"] = [{"path": e.path, "message": e.message} for e in errors]
    body.update(extra or {})
    return body


def problem_response(
    slug: str,
    detail: str,
    *,
    base_url: str,
    instance: str,
    trace_id: str,
    errors: Sequence[FieldError] = (),
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Response:
    body = problem_body(
        slug,
        detail,
        base_url=base_url,
        instance=instance,
        trace_id=trace_id,
        errors=errors,
        extra=extra,
    )
    all_headers = dict(headers or {})
    if PROBLEM_TYPES[slug].status == 503:
        all_headers.setdefault("Retry-After", "5")
    return Response(
        json.dumps(body), status_code=body["status"], headers=all_headers, media_type=PROBLEM_JSON
    )
