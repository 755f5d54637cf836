"""A request's new run, made in the commit batcher's statement with other requests' runs
and other runs' steps (`db.births`); and, when the answer of that statement was lost, the
lease of a run that may have been made handed back for any driver to claim."""

from __future__ import annotations

from app.db.errors import is_unavailable
from app.db.idempotency_repo import Binding
from app.db.step_writes import Birth
from app.domain.records import Run
from app.domain.run_changes import Creation
from app.engine.process.lease import hand_back
from app.engine.process.runtime import Runtime


async def born(rt: Runtime, made: Creation, binding: Binding | None) -> Run | None:
    """The run made with other requests' runs and other runs' steps, in one statement
    (group commit); None when its key's binding did not take hold."""
    try:
        answer = await rt.commits.create(Birth(made, binding, rt.db_time.offset_s))
    except Exception as exc:
        token = made.run.lease_token
        if token is not None and is_unavailable(exc):
            # Its answer may have been lost after it was made, leased to this process with
            # nobody to drive it: the lease is handed back once the database answers, so
            # that any driver claims the run at once rather than when the lease lapses.
            run = made.run
            rt.deferred.owe(lambda: hand_back(rt, run.tenant_id, run.id, token))
        raise
    return None if answer is None else made.born(answer.lease_expires_at, answer.read_snapshot)
