"""What a replay reads of a recorded run beyond its own turns and calls: the run by id
(in any tenant, for an operator who only has the id), all its events, its previews in the
order they were made, and the ids its tenant's radar gives technologies; and the removal
of a scratch tenant's radar when the replay is done."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.approvals.previews import to_preview
from app.db.lifecycle.runs import events_page, to_run
from app.db.radar.radar_tables import technology
from app.db.tables import preview, run
from app.domain.lifecycle.records import EventRecord, Preview, Run

#: Events read per statement.
PAGE = 1000


async def runs_by_id(session: AsyncSession, *, run_id: str, tenant_id: str | None) -> list[Run]:
    """The run with this id in `tenant_id`, or in any tenant (ids are unique in practice:
    two answers mean the operator must name the tenant)."""
    query = select(run).where(run.c.id == run_id)
    if tenant_id is not None:
        query = query.where(run.c.tenant_id == tenant_id)
    result = await session.execute(query.limit(2))
    return [to_run(r) for r in result.mappings()]


async def all_events(session: AsyncSession, *, tenant_id: str, run_id: str) -> list[EventRecord]:
    found: list[EventRecord] = []
    while True:
        after = found[-1].seq if found else 0
        page = await events_page(
            session, tenant_id=tenant_id, run_id=run_id, after=after, limit=PAGE
        )
        found.extend(page)
        if len(page) < PAGE:
            return found


async def previews_of(session: AsyncSession, *, tenant_id: str, run_id: str) -> list[Preview]:
    result = await session.execute(
        select(preview)
        .where(preview.c.tenant_id == tenant_id, preview.c.run_id == run_id)
        .order_by(preview.c.created_at, preview.c.id)
    )
    return [to_preview(r) for r in result.mappings()]


async def technology_ids(session: AsyncSession, *, tenant_id: str) -> dict[str, str]:
    """The tenant's radar: technology name → id."""
    result = await session.execute(
        select(technology.c.name, technology.c.id).where(technology.c.tenant_id == tenant_id)
    )
    return {name: tech_id for name, tech_id in result}


async def remove_radar(session: AsyncSession, *, tenant_id: str) -> None:
    await session.execute(delete(technology).where(technology.c.tenant_id == tenant_id))
