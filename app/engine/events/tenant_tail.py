"""One reader per process of a tenant's newest events, shared by all that tenant's streams
here. A commit wakes every one of them; without sharing, each would ask the database, and
a hundred streams made the database answer a hundred reads per commit. With it, the
streams woken together are served by one read, from a window of recent events; a stream
behind the window (resuming from an old id) reads for itself until it has caught up."""

from __future__ import annotations

import asyncio
import bisect
from dataclasses import dataclass

from app.db.lifecycle import events
from app.db.lifecycle.events import Position
from app.domain.lifecycle.records import FeedEvent
from app.engine.lifecycle.runs import encode_cursor
from app.engine.process.runtime import Runtime

#: Events read per statement.
PAGE = 200
#: Recent events a tail keeps for streams a little behind.
KEEP = 2000


@dataclass(frozen=True, slots=True)
class Listed:
    """A tenant's event with its tenant-wide id: its position in the feed, as an opaque
    cursor (made once, however many streams send it)."""

    id: str
    event: FeedEvent


def listed(event: FeedEvent) -> Listed:
    return Listed(encode_cursor(list(event.position)), event)


def position(item: Listed) -> Position:
    return item.event.position


class TenantTail:
    def __init__(self, rt: Runtime, tenant_id: str) -> None:
        self.rt = rt
        self.tenant_id = tenant_id
        self.users = 0
        #: Every event after `start` and under `horizon` is in `_rows`, in order.
        self.start: Position | None = None
        self.horizon = 0
        self._rows: list[Listed] = []
        self._lock = asyncio.Lock()
        self._last_read_at = float("-inf")

    @property
    def end(self) -> Position:
        assert self.start is not None
        last = position(self._rows[-1]) if self._rows else self.start
        return max(last, (self.horizon, "", 0))

    async def refresh(self, asked_at: float) -> None:
        """Reads what is new, unless a read that began at or after `asked_at` (when the
        asking stream was woken, or later) already has."""
        async with self._lock:
            if self._last_read_at >= asked_at:
                return
            # Counted once it has worked: a read cut short serves nobody.
            began = asyncio.get_running_loop().time()
            async with self.rt.reads() as session:
                if self.start is None:
                    _, self.start = await events.now(session)
                while True:
                    page = await events.page(
                        session, tenant_id=self.tenant_id, after=self.end, limit=PAGE
                    )
                    # Each event's id made once, for every stream.
                    self._rows += [listed(r) for r in page.rows]
                    if len(page.rows) < PAGE:
                        self.horizon = max(self.horizon, page.horizon)
                        break
            self._last_read_at = began
            self._trim()

    def _trim(self) -> None:
        if len(self._rows) > 2 * KEEP:
            cut = len(self._rows) - KEEP
            self.start = position(self._rows[cut - 1])
            self._rows = self._rows[cut:]

    def reaches(self, since: Position) -> bool:
        """Whether its window holds everything after `since`."""
        return self.start is not None and since >= self.start

    def after(self, since: Position) -> tuple[list[Listed], Position] | None:
        """The events after `since` that this tail has read, and the position they reach
        (everything before it was looked at); None when its window does not reach back to
        `since`."""
        if not self.reaches(since):
            return None
        first = bisect.bisect_right(self._rows, since, key=position)
        return self._rows[first:], max(since, self.end)


class TenantTails:
    """The tails of the tenants that have streams in this process."""

    def __init__(self) -> None:
        self._tails: dict[str, TenantTail] = {}

    def acquire(self, rt: Runtime, tenant_id: str) -> TenantTail:
        tail = self._tails.get(tenant_id)
        if tail is None:
            tail = self._tails[tenant_id] = TenantTail(rt, tenant_id)
        tail.users += 1
        return tail

    def release(self, tail: TenantTail) -> None:
        tail.users -= 1
        if tail.users <= 0 and self._tails.get(tail.tenant_id) is tail:
            del self._tails[tail.tenant_id]
