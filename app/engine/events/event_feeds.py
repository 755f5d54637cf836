"""What event streams and the tenant's event list read: a run's timeline after a seq, and
a tenant's events after a position, each read from the database (history and new events
alike), so a reader resuming from an id it was given misses and repeats nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from app.db.lifecycle import events as events_repo
from app.db.lifecycle import runs as runs_repo
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.records import FeedEvent
from app.domain.lifecycle.status import RunStatus
from app.domain.tools.specs import Principal
from app.engine.events.tenant_tail import PAGE, Listed, TenantTail, listed
from app.engine.lifecycle.runs import decode_cursor, not_found
from app.engine.process.runtime import Runtime

FINISHED = EventType.RUN_FINISHED
#: Where a tenant's feed starts when asked for everything.
START: events_repo.Position = (0, "", 0)


def position_of(event_id: str, field: str) -> events_repo.Position:
    try:
        raw = decode_cursor(event_id)
    except DomainError:
        raw = None
    if (
        isinstance(raw, list)
        and len(raw) == 3
        and isinstance(raw[0], int)
        and isinstance(raw[1], str)
        and isinstance(raw[2], int)
        and 0 <= raw[0] < 2**63
        and 0 <= raw[2] < 2**31
        and len(raw[1]) <= 64
    ):
        return (raw[0], raw[1], raw[2])
    raise DomainError(
        ErrorCode.VALIDATION,
        "some fields are invalid",
        [FieldError(field, "not an event id this service gave out")],
    )


def tenant_item(listed: Listed) -> dict[str, Any]:
    event = listed.event
    return {
        "id": listed.id,
        "run_id": event.run_id,
        "seq": event.seq,
        "type": event.type,
        "at": event.at,
        "data": event.data,
    }


class RunFeed:
    """A run's timeline after `after`."""

    def __init__(self, rt: Runtime, principal: Principal, run_id: str, after: int) -> None:
        self.rt = rt
        self.tenant_id = principal.tenant_id
        self.run_id = run_id
        self.after = after
        self.finished = False
        #: A run's seqs are taken under its row lock: nothing is ever held back.
        self.held_back = False

    async def first(self) -> list[dict[str, Any]]:
        """The first read, which also tells a run that is not there (`not_found`), and a
        finished run with nothing after `after` (`finished`, nothing to send)."""
        async with self.rt.reads() as session:
            items = await self._read(session)
            if not items:
                run = await runs_repo.get(session, self.tenant_id, self.run_id)
                if run is None:
                    raise not_found()
                # Its run.finished was written with its status: at or before `after`.
                self.finished = run.status == RunStatus.FINISHED
        return items

    async def read(self, fresh_from: float) -> list[dict[str, Any]]:
        async with self.rt.reads() as session:
            return await self._read(session)

    async def _read(self, session: Any) -> list[dict[str, Any]]:
        rows = await runs_repo.events_page(
            session, tenant_id=self.tenant_id, run_id=self.run_id, after=self.after, limit=PAGE
        )
        if rows:
            self.after = rows[-1].seq
            self.finished = any(r.type == FINISHED for r in rows)
        return [r.as_item() for r in rows]


class Snapshot:
    """A `pg_snapshot` ("xmin:xmax:xip,..."): which transactions had ended when it was taken."""

    def __init__(self, text: str) -> None:
        xmin, xmax, xip = text.split(":")
        self.text = text
        self.xmin, self.xmax = int(xmin), int(xmax)
        self.running = {int(x) for x in xip.split(",") if x}

    def saw(self, xid: int) -> bool:
        return xid < self.xmin or (xid < self.xmax and xid not in self.running)


class TenantFeed:
    """A tenant's events after a position, or (no position) those committed from now on.
    Reads through the process's `tail` of the tenant when given one and it reaches back far
    enough; by itself otherwise."""

    def __init__(
        self,
        rt: Runtime,
        principal: Principal,
        *,
        after: events_repo.Position | None,
        types: Sequence[str] | None,
        run_id: str | None,
        tail: TenantTail | None = None,
    ) -> None:
        self.rt = rt
        self.tenant_id = principal.tenant_id
        self.after = after
        self.types = set(types) if types else None
        self.run_id = run_id
        self.tail = tail
        self.finished = False  # a tenant's feed never ends
        #: Events below an older transaction still open wait for it: read again soon.
        self.held_back = True
        self._since: Snapshot | None = None

    async def first(self) -> list[dict[str, Any]]:
        if self.after is None:
            async with self.rt.reads() as session:
                snapshot, self.after = await events_repo.now(session)
            self._since = Snapshot(snapshot)
            return []
        return await self.read(asyncio.get_running_loop().time())

    def _wants(self, event: FeedEvent) -> bool:
        return (
            (self.types is None or event.type in self.types)
            and (self.run_id is None or event.run_id == self.run_id)
            and (self._since is None or not self._since.saw(event.xid))
        )

    async def read(self, fresh_from: float) -> list[dict[str, Any]]:
        """What is there after the feed's position, as read by a statement that began at or
        after `fresh_from` (event-loop time)."""
        assert self.after is not None
        if self.tail is not None and (self.tail.start is None or self.tail.reaches(self.after)):
            await self.tail.refresh(fresh_from)
            shared = self.tail.after(self.after)
            if shared is not None:
                rows, reached = shared
                items = [tenant_item(r) for r in rows if self._wants(r.event)]
                self._move_to(reached)
                return items
        async with self.rt.reads() as session:
            page = await events_repo.page(
                session,
                tenant_id=self.tenant_id,
                after=self.after,
                limit=PAGE,
                types=sorted(self.types) if self.types else None,
                run_id=self.run_id,
                since=self._since.text if self._since else None,
            )
        reached = page.rows[-1].position if page.rows else self.after
        if len(page.rows) < PAGE:
            # Everything under the horizon was looked at: filtered-out events are not read
            # again next time.
            reached = max(reached, (page.horizon, "", 0))
        self._move_to(reached)
        return [tenant_item(listed(r)) for r in page.rows]

    def _move_to(self, reached: events_repo.Position) -> None:
        self.after = reached
        if self._since is not None and reached[0] >= self._since.xmax:
            self._since = None  # what comes now began after the snapshot: it saw none of it


async def tenant_events(
    rt: Runtime,
    principal: Principal,
    *,
    after: events_repo.Position | None,
    limit: int,
    types: Sequence[str] | None,
    run_id: str | None,
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the tenant's events from the start (or after `after`); `next_cursor` when
    more are there now."""
    async with rt.reads() as session:
        page = await events_repo.page(
            session,
            tenant_id=principal.tenant_id,
            after=after or START,
            limit=limit + 1,
            types=types,
            run_id=run_id,
        )
    items = [tenant_item(listed(r)) for r in page.rows[:limit]]
    return items, items[-1]["id"] if len(page.rows) > limit else None
