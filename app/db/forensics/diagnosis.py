"""What a run's diagnosis reads: the run's timeline, as typed events."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.lifecycle.runs import events_page, exists_run
from app.domain.forensics.diagnosis import RunEvent
from app.domain.lifecycle.events import EventType


async def timeline(session: AsyncSession, *, tenant_id: str, run_id: str) -> list[RunEvent] | None:
    """Every event of the run in order of seq (one statement), or None when the tenant
    has no such run. Only a run without events asks a second time: every run is created
    with its first events, so rows prove it is there."""
    rows = await events_page(session, tenant_id=tenant_id, run_id=run_id, after=0, limit=None)
    events = [RunEvent(row.seq, EventType(row.type), row.data) for row in rows]
    if not events and not await exists_run(session, tenant_id, run_id):
        return None
    return events
