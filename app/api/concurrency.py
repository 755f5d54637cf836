"""The bound on requests one process serves at once (TOOLGATE_HTTP_CONCURRENCY), as pure
ASGI: a request past it is answered `503 unavailable` with `Retry-After` at once, instead
of queueing for a database connection until the pool's timeout.

A request holds its slot until its response starts. For an ordinary answer that is when
its work is done; an event stream's open life after its headers is bounded by the stream
limit instead, so that streams (which hold no connection while they wait) never starve
ordinary requests of slots. The probes are never refused: a busy process is alive and
ready, and an orchestrator that restarted or unrouted it would only make the load worse."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.middleware import refuse, trace_id_of

#: What a refused client is told to wait: requests are short, slots free up quickly.
RETRY_AFTER_S = 1
EXEMPT_PATHS = frozenset({"/healthz", "/readyz"})


class ConcurrencyLimitMiddleware:
    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in EXEMPT_PATHS:
            await self.app(scope, receive, send)
            return
        # A check and an increment with no await between them: no other request can
        # take the last slot in between, so no lock is needed.
        if self.in_flight >= self.limit:
            await refuse(
                scope,
                receive,
                send,
                "unavailable",
                "This server is serving as many requests as it allows; retry shortly.",
                trace_id=trace_id_of(scope),
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
            return
        self.in_flight += 1
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self.in_flight -= 1

        async def send_releasing(message: Message) -> None:
            if message["type"] == "http.response.start":
                release()
            await send(message)

        try:
            await self.app(scope, receive, send_releasing)
        finally:
            release()
