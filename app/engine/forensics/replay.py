"""Replay of a finished run (`python -m app replay RUN_ID`): its recorded model outcomes,
rebuilt as a script (`domain.forensics.replay_script`), are played against the current code, config
and tools in a scratch tenant, and the two timelines are compared (`domain.forensics.replay`).

The scratch tenant (`replay-<random>`) gets the demo radar under the recorded tenant's
ids for the same names, so that recorded arguments name the same rows; it is removed
afterwards (ids stay unique across tenants), while the replayed run stays for inspection.
The run is created as its creator created it: same agent, input, tools (those the agent
still has), limits as asked, metadata and data policy, under the creator's subject and
scopes. When it awaits approval, the recorded decision on the preview of the same rank is
made again under the recorded approver's subject (`domain.forensics.replay.decision_for`)."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.adapters.tools.builtin.demo_data import seed
from app.db.forensics import replay as replay_repo
from app.db.lifecycle import turns as turns_repo
from app.domain.errors import DomainError, ErrorCode, ToolgateError
from app.domain.forensics.replay import SCRATCH_PREFIX, Decision, decision_for
from app.domain.forensics.replay_script import NotRecorded, rebuild_script
from app.domain.lifecycle.records import Preview, Run
from app.domain.lifecycle.status import ACTIVE_RUN_STATUSES, RunStatus
from app.domain.text import unstorable_char
from app.domain.tools.specs import Principal
from app.engine.approvals import decisions
from app.engine.lifecycle import runs
from app.engine.runner import Runtime

if TYPE_CHECKING:
    from app.engine.runner import Driver

#: How long one wait on the replayed run lasts before the replay looks again.
WAIT_S = 30.0
#: Beyond its own deadline, how long the replay waits for its run to end.
GRACE_S = 60.0


class NotReplayable(ToolgateError):
    """Why the run cannot be replayed: the operator's to fix (exit 2)."""


@dataclass(frozen=True)
class Recorded:
    run: Run
    events: list[dict[str, Any]]
    script: list[dict[str, Any]]
    previews: list[Preview]
    #: The recorded tenant's radar: technology name → id.
    radar: dict[str, str]


@dataclass
class Replayed:
    tenant_id: str
    run_id: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    #: Why the replay's run was not created, or why the replay stopped it.
    note: str | None = None


async def load(rt: Runtime, *, run_id: str, tenant_id: str | None, side_effects: bool) -> Recorded:
    """The recorded run and what its replay needs; NotReplayable when it cannot be replayed."""
    if any(unstorable_char(v) for v in (run_id, tenant_id or "")):
        raise NotReplayable(f"no run {run_id!r}: not an id this service gives out")
    async with rt.reads() as session:
        found = await replay_repo.runs_by_id(session, run_id=run_id, tenant_id=tenant_id)
        if len(found) != 1:
            where = f" in tenant {tenant_id!r}" if tenant_id is not None else ""
            raise NotReplayable(
                f"no run {run_id!r}{where}"
                if not found
                else f"run id {run_id!r} is in several tenants: name one with --tenant"
            )
        record = found[0]
        if record.status is not RunStatus.FINISHED:
            raise NotReplayable(
                f"run {run_id!r} is {record.status.value}: only a finished run replays"
            )
        keys = {"tenant_id": record.tenant_id, "run_id": record.id}
        events = [e.as_item() for e in await replay_repo.all_events(session, **keys)]
        turns = await turns_repo.turns(session, **keys)
        calls = await turns_repo.calls(session, **keys)
        previews = await replay_repo.previews_of(session, **keys)
        radar = await replay_repo.technology_ids(session, tenant_id=record.tenant_id)
    if not events:
        raise NotReplayable(f"run {run_id!r} has no events left (retention removed them)")
    agent = rt.agent(record.agent)
    if agent is not None and rt.route(agent.model).provider == "router":
        raise NotReplayable(
            f"agent {record.agent!r} is on a router route, which replay cannot script"
        )
    try:
        script = rebuild_script(events, turns, calls)
    except NotRecorded as exc:
        raise NotReplayable(f"run {run_id!r} cannot be rebuilt: {exc}") from None
    named = {str(c["name"]) for item in script for c in item.get("calls", [])}
    _check_side_effects(rt, named, allowed=side_effects)
    return Recorded(record, events, script, previews, radar)


def _check_side_effects(rt: Runtime, named: set[str], *, allowed: bool) -> None:
    """Operator tools with side effects act on their real backends: only when asked."""
    acting = sorted(
        n
        for n in named
        if n in rt.config.tools and n in rt.tools and not rt.tools[n].spec.read_only
    )
    if acting and not allowed:
        raise NotReplayable(
            f"the run called {', '.join(acting)}, which act on their backends: a replay would "
            "call them again; pass --side-effects to allow it"
        )


async def replay(rt: Runtime, driver: Driver, recorded: Recorded) -> Replayed:
    """Plays the recorded run again in a new scratch tenant; its timeline and why it stopped
    early (if it did)."""
    done = Replayed(f"{SCRATCH_PREFIX}{secrets.token_hex(6)}")
    async with rt.sessions.begin() as session:
        await seed(session, tenant_id=done.tenant_id, now=rt.clock.now(), ids=recorded.radar)
    try:
        await _play(rt, driver, recorded, done)
        if done.run_id is not None:
            async with rt.reads() as session:
                events = await replay_repo.all_events(
                    session, tenant_id=done.tenant_id, run_id=done.run_id
                )
            done.events = [e.as_item() for e in events]
    finally:
        async with rt.sessions.begin() as session:
            await replay_repo.remove_radar(session, tenant_id=done.tenant_id)
    return done


def _creator(recorded: Run, tenant_id: str) -> Principal:
    scopes = recorded.creator_scopes
    return Principal(
        tenant_id,
        recorded.created_by,
        frozenset({"caller"}),
        None if scopes is None else frozenset(scopes),
    )


def _request(rt: Runtime, recorded: Recorded) -> runs.CreateRun:
    run = recorded.run
    agent = rt.agent(run.agent)
    created = recorded.events[0]["data"] if recorded.events[0]["type"] == "run.created" else {}
    # What was asked, where a cap lowered it: the replay asks the same.
    asked = {k: v["asked"] for k, v in (created.get("clamped") or {}).items()}
    return runs.CreateRun(
        agent=run.agent,
        input=run.input,
        tools=[t for t in run.tools if agent is None or t in agent.tools],
        limits={**run.limits.as_dict(), **asked},
        metadata=run.metadata,
        script=recorded.script,
        data_policy=run.data_policy,
        # Pinned to the replay's own creation: the data may have moved since the run.
        consistency=run.consistency,
    )


async def _play(rt: Runtime, driver: Driver, recorded: Recorded, done: Replayed) -> None:
    creator = _creator(recorded.run, done.tenant_id)
    try:
        started = await runs.start_run(
            rt, principal=creator, request=_request(rt, recorded), lease=True
        )
    except DomainError as exc:
        done.note = f"the run was not created: {exc.message}"
        return
    assert started.lease is not None and started.state is not None
    driver.adopt(started.lease, started.state)
    run = started.run
    done.run_id = run.id
    previews = list(recorded.previews)
    record = await _settled(driver, run)
    while record.status is RunStatus.AWAITING_APPROVAL and done.note is None:
        await _decide(rt, driver, record, previews.pop(0) if previews else None, done)
        record = await _settled(driver, run)
    if record.status is not RunStatus.FINISHED:
        done.note = done.note or "the replayed run did not finish in time"
        await runs.request_cancel(rt, principal=creator, run_id=run.id)
        await _settled(driver, run)


async def _settled(driver: Driver, run: Run) -> Run:
    """The run once it finished or awaits approval (or its deadline and then some passed).
    A kick starts advancing it here unless this process already does (a parked or
    finished run is not claimed)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + run.limits.deadline_s + GRACE_S
    while True:
        driver.kick(run.tenant_id, run.id)
        record = await driver.wait(run.tenant_id, run.id, WAIT_S)
        if record.status not in ACTIVE_RUN_STATUSES or loop.time() > end:
            return record


async def _decide(
    rt: Runtime, driver: Driver, record: Run, recorded: Preview | None, done: Replayed
) -> None:
    """The recorded decision again, on the run's pending preview; `done.note` says why the
    replay stops instead."""
    pending = (await decisions.pending_of(rt, [record])).get(record.id) or []
    decision = decision_for(recorded.status if recorded else None)
    if decision is Decision.STOP or recorded is None or not pending:
        status = recorded.status.value if recorded else "absent"
        done.note = f"the recorded run's preview of this rank was {status}: nothing to replay"
        return
    preview = pending[0]
    who = Principal(record.tenant_id, recorded.decided_by or "replay", frozenset({"approver"}))
    try:
        if decision is Decision.REJECT:
            reason = recorded.reason or "rejected"
            await decisions.reject(rt, principal=who, preview_id=preview.id, reason=reason)
            return
        await decisions.approve(
            rt, principal=who, preview_id=preview.id, content_hash=preview.content_hash
        )
        if decision is Decision.APPROVE:
            done.note = "the recorded run ended before its approved call was committed"
            return
        committer = Principal(record.tenant_id, recorded.committed_by or who.subject)
        key = f"replay-{secrets.token_hex(8)}"
        await decisions.commit(
            rt, driver, principal=committer, preview_id=preview.id, key=key, wait_s=0
        )
    except DomainError as exc:
        # A version conflict superseded the preview (a new one awaits, as it did when
        # recorded); a refusal the commit settled lets the run go on. Anything else stops.
        if exc.code is not ErrorCode.VERSION_CONFLICT and not exc.settled:
            done.note = f"the recorded decision could not be made again: {exc.message}"
