"""Pure ASGI middleware: a trace id for every request, and the outermost net that turns
any unexpected exception into a problem response (Starlette's own error middleware
re-raises after sending, so it cannot be the last word)."""

from __future__ import annotations

import logging
import re
import secrets

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem_response

log = logging.getLogger("app.api")
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


def is_unavailable(exc: BaseException) -> bool:
    """The database is unreachable (as opposed to a bug): connection refused, pool
    timeouts, a dropped connection."""
    from sqlalchemy import exc as sa_exc

    if isinstance(exc, (OSError, TimeoutError, sa_exc.TimeoutError, sa_exc.InterfaceError)):
        return True
    if isinstance(exc, sa_exc.DBAPIError):
        return (
            bool(exc.connection_invalidated)
            or isinstance(exc, sa_exc.OperationalError)
            or ("connection" in type(exc.orig).__name__.lower())
        )
    return False


def base_url_of(scope: Scope) -> str:
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1") or "localhost"
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}"


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
        started = False

        async def send_tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, send_tracking)
        except Exception as exc:
            unavailable = is_unavailable(exc)
            if unavailable:
                log.warning("database unavailable (trace %s): %s", trace_id, type(exc).__name__)
            else:
                log.exception("unexpected error (trace %s)", trace_id)
            if started:
                return
            response = problem_response(
                "unavailable" if unavailable else "internal",
                "the database is unreachable; retry shortly"
                if unavailable
                else "an unexpected error occurred; it has been logged",
                base_url=base_url_of(scope),
                instance=scope.get("path", ""),
                trace_id=trace_id,
            )
            await response(scope, receive, send)
