"""The tenant's quotas at a run's creation: a run the quotas refuse is never made
(`429 quota-exceeded` with `Retry-After`). Off unless the config sets them: then nothing
is read or written here."""

from __future__ import annotations

from app.db.limits import quotas as quotas_repo
from app.domain.limits.quotas import Quotas, day_start, exceeded, over_daily_cost, until_tomorrow
from app.engine.runner import Runtime


def quotas_of(rt: Runtime) -> Quotas:
    configured = rt.config.quotas
    if configured is None:
        return Quotas()
    return Quotas(configured.runs_per_minute, configured.daily_cost_usd)


async def admit_run(rt: Runtime, tenant_id: str) -> None:
    """Checks the day's cost first (a read), then takes a slot of the minute (a write that
    only succeeds under the limit), so a request the cost refuses uses no slot."""
    quotas = quotas_of(rt)
    if not quotas.any:
        return
    async with rt.sessions.begin() as session:
        if quotas.daily_cost_usd is not None:
            now = rt.clock.now()
            spent = await quotas_repo.cost_of_day(session, tenant_id=tenant_id, day=day_start(now))
            if over_daily_cost(quotas, spent):
                raise exceeded("daily cost", until_tomorrow(now))
        if quotas.runs_per_minute is not None:
            wait_s = await quotas_repo.take_run(
                session, tenant_id=tenant_id, limit=quotas.runs_per_minute, db_time=rt.db_time
            )
            if wait_s is not None:
                raise exceeded("runs per minute", wait_s)
