"""The tenant's events across runs: a page of JSON, or a live stream (the console's queue
reads it)."""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from app.api.deps import KeyRecheckDep, ReaderDep, RuntimeDep, StreamsDep
from app.api.event_stream import LastEventId, open_stream, streamed, wants_stream
from app.api.responses import problems
from app.api.schemas.runs import TenantEventPage
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.lifecycle.events import EventType
from app.engine.events import event_feeds

router = APIRouter(prefix="/v1/events", tags=["events"])

_TYPES = {t.value for t in EventType}


#: `types=` as the document declares it (checked by `_types_of`, which also takes spaces).
_ONE_TYPE = "|".join(re.escape(t) for t in sorted(_TYPES))
_TYPES_PATTERN = f"^(({_ONE_TYPE})(,({_ONE_TYPE}))*)?$"


def _types_of(types: str | None) -> list[str] | None:
    if not types:
        return None
    wanted = [t.strip() for t in types.split(",") if t.strip()]
    unknown = [t for t in wanted if t not in _TYPES]
    if unknown:
        raise DomainError(
            ErrorCode.VALIDATION,
            "some fields are invalid",
            [FieldError("types", f"not an event type: {', '.join(sorted(unknown))[:200]}")],
        )
    return wanted or None


@router.get(
    "",
    response_model=TenantEventPage,
    responses={
        **problems(400, 401, 403, 422, 429),
        **streamed(
            "The tenant's events: a page of JSON, or with `Accept: text/event-stream` "
            "Server-Sent Events (`id:` the event's `id`, `event:` its type, `data:` the "
            "event). Without a cursor a stream starts with what is committed after the "
            "request; a `: ping` every 15 s."
        ),
    },
)
async def list_events(
    principal: ReaderDep,
    rt: RuntimeDep,
    streams: StreamsDep,
    still_valid: KeyRecheckDep,
    request: Request,
    types: Annotated[
        str | None,
        Query(
            max_length=2000,
            description="Event types, comma-separated.",
            json_schema_extra={"pattern": _TYPES_PATTERN},
        ),
    ] = None,
    run_id: Annotated[str | None, Query(max_length=64, description="One run's only.")] = None,
    after: Annotated[
        str | None, Query(max_length=500, description="Only events after this event `id`.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="Items per page (default 50).")] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    last_event_id: LastEventId = None,  # type: ignore[assignment]
) -> Any:
    wanted = _types_of(types)
    resume = None
    for field, value in (("after", after), ("cursor", cursor), ("Last-Event-ID", last_event_id)):
        if value:
            resume = max(resume or event_feeds.START, event_feeds.position_of(value, field))
    if wants_stream(request):
        tail = streams.tails.acquire(rt, principal.tenant_id)
        feed = event_feeds.TenantFeed(
            rt, principal, after=resume, types=wanted, run_id=run_id, tail=tail
        )
        return await open_stream(
            streams,
            feed,
            (principal.tenant_id, run_id),
            framed=functools.partial(streams.tenant_frame, principal.tenant_id),
            still_valid=still_valid,
            on_close=lambda: streams.tails.release(tail),
        )
    items, next_cursor = await event_feeds.tenant_events(
        rt, principal, after=resume, limit=limit, types=wanted, run_id=run_id
    )
    return {"items": items, "next_cursor": next_cursor}
