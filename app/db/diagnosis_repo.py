"""What a run's diagnosis reads: the run's timeline, as typed events."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.runs_repo import exists_run
from app.db.tables import event
from app.domain.diagnosis import RunEvent
from app.domain.events import EventType


async def timeline(session: AsyncSession, *, tenant_id: str, run_id: str) -> list[RunEvent] | None:
    """Every event of the run in order of seq (one statement), or None when the tenant
    has no such run. Only a run without events asks a second time: every run is created
    with its first events, so rows prove it is there."""
    result = await session.execute(
        select(event.c.seq, event.c.type, event.c.data)
        .where(event.c.tenant_id == tenant_id, event.c.run_id == run_id)
        .order_by(event.c.seq)
    )
    events = [RunEvent(row.seq, EventType(row.type), row.data) for row in result]
    if not events and not await exists_run(session, tenant_id, run_id):
        return None
    return events
