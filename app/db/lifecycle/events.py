"""A tenant's events across runs, in a gap-free order, and the wake-up other processes'
streams hear.

The order is (xid, run_id, seq), `xid` being the writing transaction's id. Only events
below the oldest transaction still running (the snapshot's xmin) are read: every
transaction under it has ended, so no event can later appear before a position a reader
has reached. A transaction left open delays the feed; it never makes it skip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.lifecycle.records import FeedEvent, FeedPosition

#: The channel every process listens on for other processes' events (see engine.events.event_hub).
CHANNEL = "toolgate_events"

#: A position in the feed: (xid, run_id, seq); ("", 0) sorts before every real event.
Position = FeedPosition


@dataclass(frozen=True)
class FeedPage:
    rows: list[FeedEvent]
    #: Every event under this xid has been looked at (matching the filters or not).
    horizon: int


#: A row's events one by one (a row holds one write's events: migration 0021), and the
#: filters of a page, the same in both of its parts.
_UNPACKED = """xid, run_id, seq + i.ord - 1 AS seq, i.item ->> 0 AS type, at, i.item -> 1 AS data
         FROM event
         CROSS JOIN LATERAL json_array_elements(events) WITH ORDINALITY AS i(item, ord)"""
_FILTERS = """
          AND (CAST(:types AS text[]) IS NULL OR i.item ->> 0 = ANY(CAST(:types AS text[])))
          AND (CAST(:only_run AS text) IS NULL OR run_id = CAST(:only_run AS text))
          AND (CAST(:since AS text) IS NULL
               OR NOT pg_visible_in_snapshot(xid::text::xid8, CAST(:since AS pg_snapshot)))"""

# Two parts, in order. Events written before migration 0008 all have xid 0: they come first,
# by (run_id, seq), from their own partial index, and only while the cursor is among them.
# Every later row is found by (tenant_id, xid) and sorted by run_id and seq within its
# transaction, a handful of rows (an index without run_id and seq writes half the bytes
# an event costs that index: migration 0020). A row's last seq bounds its events from
# above: rows wholly before the cursor are passed over before they are unpacked.
_PAGE = text(
    f"""
    WITH h AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon)
    SELECT h.horizon, e.xid, e.run_id, e.seq, e.type, e.at, e.data
    FROM h LEFT JOIN LATERAL (
        (SELECT {_UNPACKED}
         WHERE tenant_id = :tenant AND xid = 0 AND CAST(:xid AS bigint) = 0
           AND (run_id, last_seq) > (CAST(:run AS text), CAST(:seq AS integer))
           AND (run_id, seq + i.ord - 1) > (CAST(:run AS text), CAST(:seq AS integer))
           {_FILTERS}
         ORDER BY run_id, last_seq, i.ord
         LIMIT :limit)
        UNION ALL
        (SELECT {_UNPACKED}
         WHERE tenant_id = :tenant AND xid > 0 AND xid < h.horizon
           AND (xid, run_id, last_seq) > (:xid, :run, :seq)
           AND (xid, run_id, seq + i.ord - 1) > (:xid, :run, :seq) {_FILTERS}
         ORDER BY xid, run_id, last_seq, i.ord
         LIMIT :limit)
        ORDER BY xid, run_id, seq
        LIMIT :limit
    ) e ON true
    """
)

_NOW = text("SELECT pg_current_snapshot()::text AS snapshot")


async def now(session: AsyncSession) -> tuple[str, Position]:
    """The snapshot of this moment, and the position to read from for what commits after
    it: events whose transactions it sees as finished are skipped (`since`)."""
    snapshot = (await session.execute(_NOW)).scalar_one()
    return snapshot, (int(snapshot.split(":", 1)[0]), "", 0)


async def page(
    session: AsyncSession,
    *,
    tenant_id: str,
    after: Position,
    limit: int,
    types: Sequence[str] | None = None,
    run_id: str | None = None,
    since: str | None = None,
) -> FeedPage:
    result = await session.execute(
        _PAGE,
        {
            "tenant": tenant_id,
            "xid": after[0],
            "run": after[1],
            "seq": after[2],
            "types": list(types) if types else None,
            "only_run": run_id,
            "since": since,
            "limit": limit,
        },
    )
    rows = result.all()
    # The horizon comes with every row; a page with no event is one row of NULLs but it.
    events = [FeedEvent(*row[1:]) for row in rows if row.run_id is not None]
    return FeedPage(events, int(rows[0].horizon))
