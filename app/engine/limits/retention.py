"""The config's `retention`, applied: each kind of finished work purged in bounded
batches, each its own short transaction, until a batch comes back short (caught up) or
the pass's time is spent (behind: the next pass goes on). Every driving process runs a
pass a minute; `python -m app db purge` runs one now, or says what it would remove."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.clock import DbTime
from app.db.limits import quotas as quotas_repo
from app.db.limits import retention as retention_repo
from app.db.tools import switches
from app.domain.limits.quotas import day_start
from app.domain.limits.retention import Kind, Retention

if TYPE_CHECKING:
    from app.engine.runner import Runtime


@dataclass
class Purged:
    """What a pass removed (or, dry, would remove), by kind; `behind`: the kinds whose
    pass ended on its time, not because it had caught up."""

    removed: dict[Kind, int] = field(default_factory=lambda: dict.fromkeys(Kind, 0))
    behind: set[Kind] = field(default_factory=set)

    def as_dict(self) -> dict[str, object]:
        return {
            "removed": {kind.value: n for kind, n in self.removed.items()},
            "behind": sorted(kind.value for kind in self.behind),
        }


@dataclass(frozen=True)
class Pass:
    """One purge pass: what to keep, as of when, in batches of what size, for how long."""

    retention: Retention
    now: datetime
    batch: int
    pass_s: float
    db_time: DbTime = field(default_factory=DbTime)


def pass_of(rt: Runtime) -> Pass:
    settings = rt.settings
    return Pass(
        rt.retention, rt.clock.now(), settings.purge_batch, settings.purge_pass_s, rt.db_time
    )


async def count(sessions: async_sessionmaker[AsyncSession], run: Pass) -> Purged:
    """What a pass would remove now (nothing is removed)."""
    done = Purged()
    cutoffs = run.retention.cutoffs(run.now)
    async with sessions() as session:
        for kind in Kind:
            done.removed[kind] = await retention_repo.count(
                session, kind, before=cutoffs[kind], db_time=run.db_time
            )
    return done


async def purge(sessions: async_sessionmaker[AsyncSession], run: Pass) -> Purged:
    done = Purged()
    cutoffs = run.retention.cutoffs(run.now)
    loop = asyncio.get_running_loop()
    for kind in Kind:
        ends = loop.time() + run.pass_s
        while True:
            async with sessions.begin() as session:
                gone = await retention_repo.purge(
                    session, kind, before=cutoffs[kind], batch=run.batch, db_time=run.db_time
                )
            done.removed[kind] += gone.removed
            if gone.rows < run.batch:
                break
            if loop.time() >= ends:
                done.behind.add(kind)
                break
    return done


async def purge_all(rt: Runtime) -> None:
    """A pass of the retention purge, then the counters that are over: rate-limit slots of
    the kill switch and quota days."""
    await purge(rt.sessions, pass_of(rt))
    async with rt.reads() as session:
        await switches.purge_rates(session, db_time=rt.db_time)
        await quotas_repo.purge(session, db_time=rt.db_time, today=day_start(rt.clock.now()))
