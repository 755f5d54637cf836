"""Exception handlers: everything FastAPI and our use cases raise becomes a problem."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from app.api.middleware import base_url_of, instance_of, trace_id_of
from app.api.problems import ProblemError, from_domain, problem_response
from app.domain.errors import DomainError, FieldError

_HTTP_SLUGS = {
    400: "bad-request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    409: "invalid-state",
    413: "payload-too-large",
    415: "unsupported-media-type",
    422: "validation-error",
    429: "rate-limited",
    500: "internal",
    503: "unavailable",
}


def render(request: Request, problem: ProblemError) -> Response:
    return problem_response(
        problem.slug,
        problem.detail,
        base_url=base_url_of(request.scope),
        instance=instance_of(request.scope),
        trace_id=trace_id_of(request.scope),
        errors=problem.errors,
        headers=problem.headers,
        extra=problem.extra,
    )


def _path(loc: tuple[int | str, ...], body: Any) -> str:
    parts = list(loc)
    source = parts[0] if parts else None
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    if source == "body" and isinstance(body, dict | list):
        parts = _without_union_members(parts, body)
    return ".".join(str(p) for p in parts) or "(body)"


def _without_union_members(parts: list[int | str], node: Any) -> list[int | str]:
    """Pydantic puts the union member it tried into `loc` (a discriminated union's tag,
    e.g. `script.0.final.text`, or a member type such as `str`); the client only knows the
    fields it sent. Walks the body as sent and drops the parts that name no key or index
    of it — except a last part under an object, which names a missing field."""
    kept: list[int | str] = []
    for i, part in enumerate(parts):
        if _has(node, part):
            node = node[part]
        elif not (i == len(parts) - 1 and isinstance(node, dict)):
            continue
        kept.append(part)
    return kept


def _has(node: Any, part: int | str) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


async def _validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return render(request, ProblemError("bad-request", "the body is not valid JSON"))
    if any(tuple(e.get("loc", ())) == ("header", "Idempotency-Key") for e in errors):
        return render(
            request,
            ProblemError(
                "idempotency-key-missing", "this operation requires an Idempotency-Key header"
            ),
        )
    fields = [
        FieldError(_path(tuple(e.get("loc", ())), exc.body), str(e.get("msg", "invalid")))
        for e in errors
    ]
    return render(
        request, ProblemError("validation-error", "some fields are invalid", errors=fields)
    )


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed_methods(request: Request) -> str | None:
    """Every method the path answers to: Starlette names only the first route that
    matched the path, so a path served by several routes (GET and POST /v1/runs) would
    list one method. Probes the router with each method on a scratch scope."""
    allowed = []
    for method in _METHODS:
        probe = {
            "type": "http",
            "method": method,
            "path": request.scope["path"],
            "root_path": request.scope.get("root_path", ""),
            "headers": [],
        }
        if any(route.matches(probe)[0] == Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return ", ".join(allowed) or None


async def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    slug = _HTTP_SLUGS.get(exc.status_code, "internal" if exc.status_code >= 500 else "bad-request")
    detail = {404: "no such route", 405: "method not allowed on this path"}.get(
        exc.status_code, str(exc.detail)
    )
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        allow = _allowed_methods(request)
        if allow:
            headers["Allow"] = allow
    return render(request, ProblemError(slug, detail, headers=headers))


async def _domain(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, DomainError)
    return render(request, from_domain(exc))


async def _problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ProblemError)
    return render(request, exc)


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(DomainError, _domain)
    app.add_exception_handler(ProblemError, _problem)
