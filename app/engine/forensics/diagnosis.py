"""Why a run went as it did (SPEC §9): its events, read once, through the domain's rule."""

from __future__ import annotations

from app.db.forensics import diagnosis as diagnosis_repo
from app.domain.forensics.diagnosis import Diagnosis, diagnose
from app.domain.tools.specs import Principal
from app.engine.lifecycle.runs import not_found
from app.engine.runner import Runtime


async def diagnose_run(rt: Runtime, *, principal: Principal, run_id: str) -> Diagnosis:
    """The diagnosis of a run of the principal's tenant (another tenant's: not found). It
    is computed on each request from the records, never stored: the same timeline gives
    the same answer, and a run still going gets the answer as of now."""
    async with rt.reads() as session:
        events = await diagnosis_repo.timeline(
            session, tenant_id=principal.tenant_id, run_id=run_id
        )
    if events is None:
        raise not_found()
    return diagnose(events)
