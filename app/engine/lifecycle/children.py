"""Child runs (SPEC §3.5): a child's creation, which reserves its grant on its parent in
the creating transaction, and the cancel of a run with its unfinished descendants.

The parent is read, the child's limits clamped to what it has left (`domain.limits.lineage`),
then one transaction reserves them on the parent — an UPDATE whose WHERE checks the
parent's room as its row stands then — and creates the child; a reservation refused
because a concurrent one took the room is tried again from a fresh read, with what is
left then. Concurrent children can therefore never hold more than the parent had."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.access.idempotency import Binding
from app.db.lifecycle import births, runs
from app.db.lifecycle.births import Birth
from app.db.limits import lineage as lineage_repo
from app.domain.errors import DomainError, ErrorCode, ToolgateError
from app.domain.lifecycle.records import Run
from app.domain.lifecycle.run_changes import CancelRequest, Creation
from app.domain.lifecycle.status import RunStatus
from app.domain.limits import lineage
from app.domain.limits.budget import Limits
from app.engine.runner import Runtime

#: Reservations lost to concurrent ones before a creation gives up (each loss means
#: another child took room, so the parent's room shrinks every time).
MAX_TRIES = 50


class Unbound(ToolgateError):
    """The request's key binding did not take hold: the transaction made nothing."""


def not_found() -> DomainError:
    return DomainError(ErrorCode.NOT_FOUND, "no such parent run")


#: The deepest a child may be (the root is 0): well within the 100 levels the roll-up
#: trigger and the cancel walk follow.
MAX_DEPTH = 16


async def parent_of(rt: Runtime, tenant_id: str, parent_id: str) -> Run:
    """The parent, in the caller's tenant (another tenant's run is not found), when it
    may take a child."""
    async with rt.reads() as session:
        parent = await runs.get(session, tenant_id, parent_id)
    if parent is None:
        raise not_found()
    refused = lineage.finished_message(parent)
    if refused is not None:
        raise DomainError(ErrorCode.INVALID_STATE, refused)
    return parent


async def admit_parent(rt: Runtime, tenant_id: str, parent_id: str) -> None:
    """Checked once per request, before a quota slot is taken: the parent may take a
    child, and the tree would not grow deeper than `MAX_DEPTH` (deeper trees would
    outrun the bounded walks that roll usage up and cancel). The depth never changes,
    so `create_child`'s retries read only the parent."""
    await parent_of(rt, tenant_id, parent_id)
    async with rt.reads() as session:
        depth = await lineage_repo.depth_of(session, tenant_id, parent_id)
    if depth + 1 > MAX_DEPTH:
        raise DomainError(
            ErrorCode.INVALID_STATE, f"a run tree may be at most {MAX_DEPTH} levels deep"
        )


async def create_child(
    rt: Runtime,
    *,
    tenant_id: str,
    parent_id: str,
    wanted: Limits,
    build: Callable[[Limits, Run], Creation],
    binding: Binding | None,
    now: datetime,
) -> Run:
    """Creates the child `build` makes from its granted limits and its parent, with the
    parent's reservation, in one transaction. Raises `not_found` (no such parent in the
    tenant), `invalid_state` (the parent finished, is being cancelled, or has nothing
    left of a limit) or `Unbound`."""
    for _ in range(MAX_TRIES):
        parent = await parent_of(rt, tenant_id, parent_id)
        granted = lineage.grant(wanted, parent, now)
        if isinstance(granted, lineage.NoRoom):
            raise DomainError(ErrorCode.INVALID_STATE, granted.message)
        creation = build(granted, parent)
        async with rt.sessions.begin() as session:
            held = await lineage_repo.reserve(
                session,
                tenant_id=tenant_id,
                parent_id=parent_id,
                grant=lineage.reservation(granted),
            )
            if held:
                born = await births.create(session, Birth(creation, binding, rt.db_time.offset_s))
                if born is None:
                    raise Unbound()  # rolls the reservation back with it
                return creation.born(born.lease_expires_at, born.read_snapshot)
    raise DomainError(ErrorCode.INVALID_STATE, "the parent run is too busy taking children")


async def cancel_tree(rt: Runtime, request: CancelRequest) -> tuple[Run | None, Run | None]:
    """Asks the run and every unfinished descendant to cancel, in one transaction,
    descendants first (the order a finishing child's settlement locks rows in). Answers
    the run as marked (None when it did not take the request: finished, asked before,
    or absent) and as it was read first (None: no such run in the tenant). A finished
    run's descendants are left alone: the request is refused."""
    async with rt.sessions.begin() as session:
        record = await runs.get(session, request.tenant_id, request.run_id)
        if record is None or record.status is RunStatus.FINISHED:
            return None, record
        marked = await _mark_descendants(session, request)
        asked = await runs.mark_cancel_requested(session, request)
    if asked is not None:
        # A child whose creation was committing as the descendants were read (its
        # reservation held the parent's row) was not among them; no child can be made
        # under a run asked to cancel from now on, so one more pass catches them all.
        marked.extend(await _late_children(rt, request))
    for changed in [*marked, *([asked] if asked else [])]:
        rt.events.committed(changed.tenant_id, changed.id)
    return asked, record


async def _late_children(rt: Runtime, request: CancelRequest) -> list[Run]:
    async with rt.sessions.begin() as session:
        return await _mark_descendants(session, request)


async def _mark_descendants(session: AsyncSession, request: CancelRequest) -> list[Run]:
    """Asks the run's unfinished descendants to cancel, deepest first; the ones marked."""
    marked: list[Run] = []
    below = await lineage_repo.unfinished_descendants(session, request.tenant_id, request.run_id)
    for run_id in below:
        child = replace(request, run_id=run_id, from_run_id=request.run_id)
        if (done := await runs.mark_cancel_requested(session, child)) is not None:
            marked.append(done)
    return marked
