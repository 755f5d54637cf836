"""Pure ASGI middleware: a trace id for every request; paths, query strings and headers
no route may see refused (api.hygiene); bodies refused before anything parses them (415
not JSON, 413 too large — checked on the declared length and again while reading); and
the outermost net that turns any unexpected exception into a problem response
(Starlette's own error middleware re-raises after sending, so it cannot be the last
word)."""

from __future__ import annotations

import logging
import re
import secrets

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api import hygiene
from app.api.problems import problem_response
from app.db.errors import is_unavailable
from app.domain.errors import ToolgateError
from app.engine.process.outage import outage
from app.observability import logs

log = logging.getLogger("app.api")
DEFAULT_MAX_BODY_BYTES = 1_048_576
_JSON_MEDIA_TYPE = re.compile(r"^application/(?:[a-z0-9!#$&^_.-]+\+)?json$")
# SQLSTATE classes that mean "the database cannot serve us now", not "our query is wrong":
# connection exceptions, insufficient resources (too many connections), shutdowns.
_TRACEPARENT = re.compile(
    r"^(?P<version>[0-9a-f]{2})-(?P<trace>[0-9a-f]{32})-(?P<parent>[0-9a-f]{16})"
    r"-[0-9a-f]{2}(?P<rest>-.*)?$"
)


def trace_id_from(traceparent: str) -> str | None:
    """The trace id of a valid W3C `traceparent`, else None: version `ff`, an all-zero
    trace or parent id, or extra fields on version 00 make the header invalid."""
    match = _TRACEPARENT.match(traceparent.strip())
    if match is None or match["version"] == "ff":
        return None
    if match["version"] == "00" and match["rest"] is not None:
        return None
    if set(match["trace"]) == {"0"} or set(match["parent"]) == {"0"}:
        return None
    return match["trace"]


def trace_id_of(scope: Scope) -> str:
    return scope.get("state", {}).get("trace_id", "")


def max_body_bytes_of(scope: Scope) -> int:
    """The limit from the app's settings (the lifespan's runtime), else the default."""
    runtime = getattr(getattr(scope.get("app"), "state", None), "runtime", None)
    settings = getattr(runtime, "settings", None)
    return int(getattr(settings, "max_body_bytes", DEFAULT_MAX_BODY_BYTES))


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def body_refusal(
    headers: dict[bytes, bytes], limit: int, method: str = "POST"
) -> tuple[str, str] | None:
    """(slug, detail) when the declared body must be refused before it is read."""
    length = headers.get(b"content-length", b"").strip()
    chunked = b"transfer-encoding" in headers
    if length and not length.isdigit():
        return "bad-request", "Content-Length is not a number"
    if not chunked and (not length or int(length) == 0):
        return None  # no body: nothing to parse
    raw_type = headers.get(b"content-type", b"").decode("latin-1")
    media_type = raw_type.split(";", 1)[0].strip().lower()
    if method in _BODY_METHODS and not _JSON_MEDIA_TYPE.match(media_type):
        return "unsupported-media-type", "send the body as `Content-Type: application/json`"
    if length and int(length) > limit:
        return "payload-too-large", f"the request body is larger than {limit} bytes"
    return None


class PayloadTooLarge(HTTPException, ToolgateError):
    """Raised from `receive` once a body grows past the limit; FastAPI re-raises HTTP
    exceptions met while reading, so the 413 handler renders it."""

    def __init__(self) -> None:
        super().__init__(status_code=413, detail="the request body is too large")


def limit_body(receive: Receive, limit: int) -> Receive:
    """`receive` that raises PayloadTooLarge once more than `limit` body bytes arrived
    (a chunked body, or one longer than its Content-Length claimed)."""
    seen = 0

    async def limited() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise PayloadTooLarge()
        return message

    return limited


def base_url_of(scope: Scope) -> str:
    """What problem `type` URIs start with: TOOLGATE_PUBLIC_URL when the operator set it,
    else nothing (a relative `/problems/{slug}`). Never the request's Host header, which
    the client chooses: a problem must not send its reader to another site."""
    runtime = getattr(getattr(scope.get("app"), "state", None), "runtime", None)
    public = getattr(getattr(runtime, "settings", None), "public_url", None)
    return str(public).rstrip("/") if public else ""


def instance_of(scope: Scope) -> str:
    """A problem's `instance`: the request's path only (no host, no query string)."""
    return str(scope.get("path", ""))


async def refuse(
    scope: Scope,
    receive: Receive,
    send: Send,
    slug: str,
    detail: str,
    *,
    trace_id: str,
    headers: dict[str, str] | None = None,
) -> None:
    """Answers the request with a problem, from a middleware (before any route ran)."""
    response = problem_response(
        slug,
        detail,
        base_url=base_url_of(scope),
        instance=instance_of(scope),
        trace_id=trace_id,
        headers=headers,
    )
    await response(scope, receive, send)


class TraceAndErrorsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        traceparent = headers.get(b"traceparent", b"").decode("latin-1")
        trace_id = trace_id_from(traceparent) or secrets.token_hex(16)
        scope.setdefault("state", {})["trace_id"] = trace_id
        logs.trace_id.set(trace_id)
        limit = max_body_bytes_of(scope)
        refusal = hygiene.refusal(scope)
        if refusal is not None:
            await refuse(scope, receive, send, "bad-request", refusal, trace_id=trace_id)
            return
        refusal = body_refusal(headers, limit, scope.get("method", "GET"))
        if refusal is not None:
            await refuse(scope, receive, send, *refusal, trace_id=trace_id)
            return
        started = False

        async def send_tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limit_body(receive, limit), send_tracking)
        except PayloadTooLarge:
            if not started:
                await refuse(
                    scope,
                    receive,
                    send,
                    "payload-too-large",
                    "the request body is too large",
                    trace_id=trace_id,
                )
        except Exception as exc:
            unavailable = is_unavailable(exc)
            if unavailable:
                outage.seen(exc)  # said once per outage, not once per request
            else:
                log.exception("unexpected error (trace %s)", trace_id)
            if started:
                return
            await refuse(
                scope,
                receive,
                send,
                "unavailable" if unavailable else "internal",
                "the database is unreachable; retry shortly"
                if unavailable
                else "an unexpected error occurred; it has been logged",
                trace_id=trace_id,
            )
