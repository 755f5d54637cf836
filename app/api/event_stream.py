"""Server-Sent Events: a feed (engine.events.event_feeds) written as `id:`/`event:`/`data:` frames,
history first, then whatever is committed, woken by the process's event hub and polling
now and then in case a wake-up was lost; a `: ping` comment while nothing happens.

Streams are counted against a per-process limit and all end, cleanly, when the process
shuts down: uvicorn waits for open responses before it stops, so a stream must finish by
itself (its client reconnects elsewhere with `Last-Event-ID`)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, Protocol, TypeVar

import anyio
from fastapi import Header
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from app.api.problems import ProblemError
from app.api.schemas.runs import TenantEventOut
from app.db.errors import is_unavailable
from app.engine.events.event_feeds import PAGE
from app.engine.events.event_hub import EventHub, Subscription
from app.engine.events.tenant_tail import TenantTails
from app.engine.process.outage import outage

log = logging.getLogger(__name__)
T = TypeVar("T")
MEDIA_TYPE = "text/event-stream"
#: After a wake-up that found nothing (an older transaction still open holds the tenant's
#: feed back), read again this soon, this many times.
RECHECK_S = 0.25
RECHECKS = 8
#: A stream reads at most this often, however many commits wake it: under load, one read
#: takes many events, and the database sees a bounded number of reads per stream.
READ_EVERY_S = 0.25
#: Frames of recent tenant events kept for the other streams of the tenant.
FRAMES_KEPT = 4096
#: What a client refused for the stream limit is told to wait.
RETRY_AFTER_S = 5


class Feed(Protocol):
    finished: bool
    held_back: bool

    async def first(self) -> list[dict[str, Any]]: ...

    async def read(self, fresh_from: float) -> list[dict[str, Any]]: ...


# Typed `str` with a None default, not `str | None`: no `null` union in the document.
LastEventId = Annotated[
    str,
    Header(
        alias="Last-Event-ID",
        max_length=500,
        description="With `Accept: text/event-stream`: resume after this event's id "
        "(what a reconnecting EventSource sends).",
    ),
]


def streamed(description: str) -> dict[int | str, dict[str, Any]]:
    """The 200 answer's second form, for `responses=`."""
    return {
        200: {
            "description": description,
            "content": {MEDIA_TYPE: {"schema": {"type": "string"}}},
        }
    }


def wants_stream(request: Request) -> bool:
    return MEDIA_TYPE in request.headers.get("accept", "")


def frame(schema: type[BaseModel], id_field: str, item: dict[str, Any]) -> bytes:
    """One event as the JSON answers show it, under `id:` its `id_field`."""
    shown = schema.model_validate(item).model_dump(mode="json")
    data = json.dumps(shown, separators=(",", ":"), ensure_ascii=False)
    return f"id: {shown[id_field]}\nevent: {shown['type']}\ndata: {data}\n\n".encode()


class Streams:
    """This process's open streams, at most `limit`, and at most `tenant_share` of them one
    tenant's, so that one tenant cannot take every stream; `close_all` ends them
    (shutdown). The tenants' tails and the frames of recent tenant events are shared by
    the streams.

    Each stream sends a `: ping` after `ping_s` of quiet (so that proxies and clients do
    not take it for a dead one), reads anyway every `poll_s` (in case a wake-up was lost
    with its process) and checks every `key_check_s` that its request's key still holds."""

    def __init__(
        self,
        hub: EventHub,
        limit: int,
        tenant_share: int,
        *,
        ping_s: float,
        poll_s: float,
        key_check_s: float,
    ) -> None:
        self.hub = hub
        self.limit = limit
        self.tenant_share = tenant_share
        self.ping_s = ping_s
        self.poll_s = poll_s
        self.key_check_s = key_check_s
        self.open = 0
        self._by_tenant: dict[str, int] = {}
        self.closing = False
        self.tails = TenantTails()
        self._frames: OrderedDict[tuple[str, str], bytes] = OrderedDict()

    def tenant_frame(self, tenant_id: str, item: dict[str, Any]) -> bytes:
        """A tenant event's frame, kept for a while: every stream of the tenant sends the
        same bytes, made once."""
        key = (tenant_id, item["id"])
        made = self._frames.get(key)
        if made is None:
            made = self._frames[key] = frame(TenantEventOut, "id", item)
            if len(self._frames) > FRAMES_KEPT:
                self._frames.popitem(last=False)
        return made

    def take(self, tenant_id: str) -> None:
        if self.closing:
            raise ProblemError(
                "unavailable",
                "This server is shutting down; reconnect (to another replica).",
                headers={"Retry-After": "1"},
            )
        if self.open >= self.limit:
            raise _too_many("This server has as many event streams open as it allows")
        held = self._by_tenant.get(tenant_id, 0)
        if held >= self.tenant_share:
            raise _too_many("Your tenant has as many event streams open here as one tenant may")
        self.open += 1
        self._by_tenant[tenant_id] = held + 1

    def give_back(self, tenant_id: str) -> None:
        self.open -= 1
        left = self._by_tenant[tenant_id] - 1
        if left:
            self._by_tenant[tenant_id] = left
        else:
            del self._by_tenant[tenant_id]  # no entry kept for every tenant ever seen

    def close_all(self) -> None:
        self.closing = True
        self.hub.wake_all()


def _too_many(why: str) -> ProblemError:
    return ProblemError(
        "rate-limited",
        f"{why}; try again shortly.",
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


async def open_stream(
    streams: Streams,
    feed: Feed,
    subscription: tuple[str, str | None],
    framed: Callable[[dict[str, Any]], bytes],
    still_valid: Callable[[], Awaitable[bool]],
    on_close: Callable[[], None] = lambda: None,
) -> Response:
    """Takes a slot and subscribes, then reads the history (which may refuse, e.g. a run
    that is not there) — all before the response's headers go out, so nothing committed
    after the request is missed. `framed` writes an item as its frame; `on_close` runs when
    the stream ends or is refused.
    `still_valid` is asked now and then whether the request's key still holds.
    `subscription` is (tenant, run or None): the slot is counted against that tenant.

    A feed that has ended with nothing to send (a finished run resumed after its last
    event) answers `204 No Content`, which tells an SSE client to stop reconnecting."""
    tenant_id = subscription[0]
    try:
        streams.take(tenant_id)
    except BaseException:
        on_close()
        raise
    sub = streams.hub.subscribe(*subscription)

    def release() -> None:
        streams.hub.unsubscribe(sub)
        streams.give_back(tenant_id)
        on_close()

    try:
        history = await feed.first()
    except BaseException:
        release()
        raise
    if feed.finished and not history:
        release()
        return Response(status_code=204)
    frames = _frames(streams, feed, sub, history, framed, still_valid)
    return EventStreamResponse(frames, release)


async def _or_none(work: Awaitable[T]) -> T | None:
    """A stream's database work, or None when it failed: the stream then ends, cleanly,
    and its client resumes from its last id (an outage is said once for the process)."""
    try:
        return await work
    except Exception as exc:
        if is_unavailable(exc):
            outage.seen(exc)
        else:
            log.warning("an event stream's database work failed; it ends", exc_info=True)
        return None


async def _frames(
    streams: Streams,
    feed: Feed,
    sub: Subscription,
    items: list[dict[str, Any]] | None,
    framed: Callable[[dict[str, Any]], bytes],
    still_valid: Callable[[], Awaitable[bool]],
) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    quiet_since = last_read = checked_at = loop.time()
    rechecks = 0
    while items is not None:
        if items:  # one write for what one read found
            yield b"".join(framed(item) for item in items)
        if feed.finished or streams.closing:
            return
        if len(items) >= PAGE:  # a full page: more may be behind it
            items = await _or_none(feed.read(loop.time()))
            continue
        if items:
            quiet_since = loop.time()
        if loop.time() - checked_at >= streams.key_check_s:
            checked_at = loop.time()
            if not await _or_none(still_valid()):
                return  # the key was revoked (or lost its role) meanwhile
        ping_in = streams.ping_s - (loop.time() - quiet_since)
        if ping_in <= 0:
            yield b": ping\n\n"
            quiet_since = loop.time()
            ping_in = streams.ping_s
        woken = await sub.wait(min(ping_in, RECHECK_S if rechecks else streams.poll_s))
        if streams.closing:
            return
        # A wake-up that finds nothing may be held back by an older transaction still
        # open: look again soon, for a while (a tenant's feed only).
        rechecks = RECHECKS if woken and feed.held_back else max(0, rechecks - 1)
        await asyncio.sleep(max(0.0, last_read + READ_EVERY_S - loop.time()))
        if streams.closing:
            return
        last_read = loop.time()
        # Woken: a read that began after the (latest) commit that woke it will do, shared
        # with the other streams woken by it. Not woken (a poll): a read from now.
        items = await _or_none(feed.read(sub.woken_at if woken else last_read))
        if items:
            rechecks = 0


class EventStreamResponse(Response):
    """Writes frames until the feed ends, the client goes, or the process shuts down."""

    media_type = MEDIA_TYPE

    def __init__(self, frames: AsyncIterator[bytes], release: Callable[[], None]) -> None:
        super().__init__(
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            media_type=MEDIA_TYPE,
        )
        del self.headers["content-length"]
        self._frames = frames
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def until_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(until_disconnect)
                await send(
                    {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
                )
                async for chunk in self._frames:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                group.cancel_scope.cancel()
        except* OSError:
            pass  # the client went away mid-write
        finally:
            await self._frames.aclose()  # type: ignore[attr-defined]
            self._release()
