"""Problem responses declared on every operation, for the OpenAPI document."""

from __future__ import annotations

from typing import Any

from app.api.problems import PROBLEM_JSON

_DESCRIPTIONS = {
    400: "Bad request",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    410: "Gone",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Validation error",
    429: "Too many requests",
    500: "Internal error",
    503: "Unavailable",
}


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route: the given statuses plus 422, 500 and 503, as problem+json
    (`app.openapi` names each one's problem types and shows their examples)."""
    result: dict[int | str, dict[str, Any]] = {}
    for status in sorted({*statuses, 422, 500, 503}):
        result[status] = {
            "description": _DESCRIPTIONS[status],
            "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
    return result
