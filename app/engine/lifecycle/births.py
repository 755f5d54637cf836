"""A request's new run, made in the commit batcher's statement with other requests' runs
and other runs' steps (`db.lifecycle.births`); and, when the answer of that statement was lost, the
lease of a run that may have been made handed back for any driver to claim."""

from __future__ import annotations

import contextlib

from app.db.access.idempotency import Binding
from app.db.lifecycle.step_writes import Birth
from app.domain.lifecycle.records import Run
from app.domain.lifecycle.run_changes import Creation
from app.engine.runner import Runtime, handed_back_if_unanswered


async def born(rt: Runtime, made: Creation, binding: Binding | None) -> Run | None:
    """The run made with other requests' runs and other runs' steps, in one statement
    (group commit); None when its key's binding did not take hold."""
    run, lease = made.run, made.run.lease
    # A run made leased to this process whose answer is lost must not wait for its lease.
    unanswered = (
        contextlib.nullcontext()
        if lease is None
        else handed_back_if_unanswered(rt, run.tenant_id, run.id, lease.token)
    )
    with unanswered:
        answer = await rt.commits.create(Birth(made, binding, rt.db_time.offset_s))
    return None if answer is None else made.born(answer.lease_expires_at, answer.read_snapshot)
