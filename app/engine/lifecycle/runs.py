"""Use cases on runs that do not step them: create, read, list, cancel."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from app.config.files import AgentConfig
from app.db.lifecycle import runs, turns
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.ids import new_id
from app.domain.lifecycle.events import Event, EventType
from app.domain.lifecycle.records import Call, EventRecord, Preview, Run, RunLease
from app.domain.lifecycle.run_changes import CancelRequest, Creation, ScriptItem
from app.domain.lifecycle.status import RunStatus
from app.domain.limits.budget import Limits, clamped, deadline_at, narrow_limits
from app.domain.tools.specs import Principal, exposed_tools, first_path, unstorable
from app.engine.access import idempotency
from app.engine.access.idempotency import Claim
from app.engine.lifecycle import births, children, entering
from app.engine.lifecycle.continuation import continued
from app.engine.limits.quotas import admit_run
from app.engine.runner import Lease, RunState, Runtime, lease_for, new_lease_token
from app.engine.tools import offered


@dataclass(frozen=True)
class CreateRun:
    agent: str
    #: None only with `continue_from`: then the continued run's input.
    input: str | None
    tools: Sequence[str] | None = None
    limits: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    script: Sequence[ScriptItem] | None = None
    data_policy: Sequence[str] = ()
    #: `latest` or `snapshot` (its reads pinned to its creation).
    consistency: str = "latest"
    #: A child run's parent (SPEC §3.5), in the creator's tenant.
    parent_run_id: str | None = None
    #: The new run's id when its creator derives it (a delegation: one child per call).
    run_id: str | None = None
    #: Made by an `agent` tool: its input was written by the parent's model, not a caller.
    delegated: bool = False
    #: A finished run of the tenant that this one continues (SPEC §3.1).
    continue_from: str | None = None


T = TypeVar("T")


def _invalid(path: str, message: str) -> DomainError:
    return DomainError(ErrorCode.VALIDATION, message, [FieldError(path, message)])


def not_found() -> DomainError:
    return DomainError(ErrorCode.NOT_FOUND, "no such run")


def caps(rt: Runtime) -> Limits:
    """The server-wide caps from the config."""
    return Limits(**rt.config.limits.model_dump())


@dataclass(frozen=True)
class Started:
    """A new run; with a lease when it was created already claimed by this process."""

    run: Run
    lease: Lease | None = None
    #: The holder's state of a run created leased: nothing to read back to advance it.
    state: RunState | None = None


async def start_run(
    rt: Runtime,
    *,
    principal: Principal,
    request: CreateRun,
    claim: Claim | None = None,
    lease: bool = False,
) -> Started:
    """Records a new run with its `run.created` event and binds the request's
    Idempotency-Key claim to it, in one transaction (a child's with its reservation on
    its parent: `engine.lifecycle.children`). With `lease`, the run is created already leased to
    this process (`run.claimed`), so stepping it needs no claim of its own; else it is
    queued for the driver. With `continue_from`, the finished run it continues is read
    first (`not_found`, `invalid_state` when it has not finished)."""
    carry_over = None
    if request.continue_from is not None:
        given, carry_over = await continued(rt, principal, request.continue_from, request.input)
        request = replace(request, input=given)
    agent, policy = _checked(rt, request)
    request, carry_over, guarded = await entering.checked(agent, request, carry_over)
    agent_limits = agent.limits.model_dump(exclude_none=True) if agent.limits else {}
    asked = dict(request.limits or {})
    limits = narrow_limits(caps(rt), agent_limits, asked)
    await offered.ready(rt.tools[t] for t in agent.tools if t in rt.tools)
    tools = exposed_tools(
        agent_tools=agent.tools,
        requested=request.tools,
        registry=_specs(rt),
        principal=principal,
        disabled=await rt.disabled_tools.of(principal.tenant_id),
    )
    if request.parent_run_id is not None:  # refused before it takes a slot of a quota
        await children.admit_parent(rt, principal.tenant_id, request.parent_run_id)
    # Last of the checks: a request refused for its content takes no slot of a quota.
    await admit_run(rt, principal.tenant_id)
    await rt.versions.ensure_kept(rt.reads)
    now = rt.clock.now()
    token = new_lease_token() if lease else None
    script = tuple(dict(i) for i in request.script) if request.script is not None else None

    def creation(granted: Limits, parent: Run | None) -> Creation:
        record = _new_run(
            rt, principal, request, agent.model, tools, granted, policy, token=token, now=now
        )
        record = replace(record, continued_from=request.continue_from, carry_over=carry_over)
        if parent is not None:
            record = replace(record, parent_run_id=parent.id, root_run_id=parent.root_run_id)
        data = _created_data(request, tools, granted, parent)
        claimed: tuple[Event, ...] = ((EventType.RUN_CLAIMED, {"after_step": 0}),) if lease else ()
        lease_s = rt.settings.lease_s if lease else None
        events = ((EventType.RUN_CREATED, data), *guarded, *claimed)
        return Creation(record, events, script=script, lease_s=lease_s)

    sent = asyncio.get_running_loop().time()
    record = await _create(rt, principal, request, limits, creation, claim, now)
    rt.events.committed(record.tenant_id, record.id)
    if not lease:
        return Started(record)
    state = RunState.fresh(record, await rt.versions.of_run(rt.reads, record), script)
    return Started(record, lease_for(rt, record, sent), state)


async def _create(
    rt: Runtime,
    principal: Principal,
    request: CreateRun,
    limits: Limits,
    creation: Callable[[Limits, Run | None], Creation],
    claim: Claim | None,
    now: datetime,
) -> Run:
    """The run, its script, its first events and the key's binding in one statement; a
    child's in one transaction with its parent's reservation."""
    binding = None if claim is None else idempotency.binding(rt, claim)
    created: Run | None
    if request.parent_run_id is None:
        created = await births.born(rt, creation(limits, None), binding)
    else:
        try:
            created = await children.create_child(
                rt,
                tenant_id=principal.tenant_id,
                parent_id=request.parent_run_id,
                wanted=limits,
                build=creation,
                binding=binding,
                now=now,
            )
        except children.Unbound:
            created = None
    if created is None:
        assert claim is not None
        raise idempotency.binding_failed(claim)
    return created


def _created_data(
    request: CreateRun, tools: list[str], limits: Limits, parent: Run | None
) -> dict[str, Any]:
    """What `run.created` says: the agent, tools and limits granted, its parent (a child
    run's), the limits a cap lowered (only when one did), and the run it continues (only
    when it does)."""
    data: dict[str, Any] = {"agent": request.agent, "tools": tools, "limits": limits.as_dict()}
    if parent is not None:
        data["parent_run_id"] = parent.id
    if lowered := clamped(dict(request.limits or {}), limits):
        data["clamped"] = lowered
    if request.continue_from is not None:
        data["continued_from"] = request.continue_from
    return data


def _checked(rt: Runtime, request: CreateRun) -> tuple[AgentConfig, frozenset[str]]:
    """The request's agent and data policy, or why the request is refused (`422`)."""
    if request.input is None:
        raise _invalid("input", "required unless the run continues another (continue_from)")
    agent = rt.agent(request.agent)
    if agent is None:
        raise _invalid("agent", f"no agent named {request.agent!r}")
    route = rt.route(agent.model)
    if request.script is not None and route.provider != "scripted":
        raise _invalid("script", "only agents on a scripted model accept a script")
    if request.script is None and route.provider == "scripted":
        # It could only end `script_exhausted`: say so now, not after a model step.
        raise _invalid("script", "required: this agent's model is scripted")
    policy = frozenset(request.data_policy)
    if policy:
        routes = (route.candidates or []) if route.provider == "router" else [agent.model]
        if not any(policy <= set(rt.route(n).tags) for n in routes if n in rt.config.models):
            raise _invalid("data_policy", "no model route of this agent carries these tags")
    if request.tools is not None:
        for i, name in enumerate(request.tools):
            if name not in agent.tools:
                raise _invalid(f"tools.{i}", f"{name!r} is not one of the agent's tools")
    return agent, policy


def _new_run(
    rt: Runtime,
    principal: Principal,
    request: CreateRun,
    route: str,
    tools: list[str],
    limits: Limits,
    policy: frozenset[str],
    *,
    token: str | None,
    now: datetime,
) -> Run:
    """The run as created: leased to this process when `token` is given, else queued."""
    run_id = request.run_id or new_id("run")
    return Run(
        tenant_id=principal.tenant_id,
        id=run_id,
        agent=request.agent,
        route=route,
        status=RunStatus.QUEUED if token is None else RunStatus.RUNNING,
        input=request.input or "",
        tools=tuple(tools),
        limits=limits,
        metadata=dict(request.metadata) if request.metadata is not None else None,
        created_by=principal.subject,
        creator_scopes=tuple(sorted(principal.scopes)) if principal.scopes is not None else None,
        root_run_id=run_id,
        deadline_at=deadline_at(now, limits),
        created_at=now,
        updated_at=now,
        lease=None if token is None else RunLease(rt.owner, token),
        data_policy=tuple(sorted(policy)),
        config_hash=rt.versions.hash_of(request.agent),
        consistency=request.consistency,
    )


def _specs(rt: Runtime) -> dict[str, Any]:
    return {name: tool.spec for name, tool in rt.tools.items()}


async def get_run(rt: Runtime, *, principal: Principal, run_id: str) -> Run:
    async with rt.sessions() as session:
        record = await runs.get(session, principal.tenant_id, run_id)
    if record is None:
        raise not_found()
    return record


def encode_cursor(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> Any:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, RecursionError) as exc:
        raise _invalid("cursor", "not a cursor this service gave out") from exc
    # A forged cursor's strings reach SQL: one Postgres cannot take would be a 500 there.
    if first_path(value, unstorable) is not None:
        raise _invalid("cursor", "not a cursor this service gave out")
    return value


def by_created(item: Run | Preview) -> list[str]:
    """The position of a run or preview in a newest-first list: `[created_at, id]`."""
    return [item.created_at.isoformat(), item.id]


def created_position(cursor: str) -> tuple[datetime, str]:
    """A cursor `by_created` gave out, as the position it names."""
    raw = decode_cursor(cursor)
    if isinstance(raw, list) and len(raw) == 2 and all(isinstance(v, str) for v in raw):
        with contextlib.suppress(ValueError, OverflowError):
            moment = datetime.fromisoformat(raw[0])
            if moment.tzinfo is not None:  # in UTC it must still be a date Postgres takes
                return moment.astimezone(UTC), raw[1]
    raise _invalid("cursor", "not a cursor this service gave out")


def page_of(rows: list[T], limit: int, position: Callable[[T], Any]) -> tuple[list[T], str | None]:
    """A page from `limit + 1` rows: the extra row only says whether there is more."""
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, encode_cursor(position(rows[-1]))


async def list_runs(
    rt: Runtime,
    *,
    principal: Principal,
    status: str | None,
    agent: str | None,
    limit: int,
    cursor: str | None,
    parent_run_id: str | None = None,
) -> tuple[list[Run], str | None]:
    after = created_position(cursor) if cursor else None
    async with rt.sessions() as session:
        rows = await runs.list_page(
            session,
            tenant_id=principal.tenant_id,
            status=status,
            agent=agent,
            after=after,
            limit=limit + 1,
            parent_run_id=parent_run_id,
        )
    return page_of(rows, limit, by_created)


def seq_of_cursor(cursor: str) -> int:
    """The seq a run's events page `next_cursor` resumes after."""
    raw = decode_cursor(cursor)
    if not isinstance(raw, int) or not 0 <= raw < 2**31:
        raise _invalid("cursor", "not a cursor this service gave out")
    return raw


async def list_events(
    rt: Runtime, *, principal: Principal, run_id: str, after: int, limit: int, cursor: str | None
) -> tuple[list[EventRecord], str | None]:
    if cursor:
        after = max(after, seq_of_cursor(cursor))
    async with rt.sessions() as session:
        rows = await runs.events_page(
            session, tenant_id=principal.tenant_id, run_id=run_id, after=after, limit=limit + 1
        )
        # Rows prove the run is there; only an empty page needs asking.
        if not rows and not await runs.exists_run(session, principal.tenant_id, run_id):
            raise not_found()
    return page_of(rows, limit, lambda r: r.seq)


async def list_calls(
    rt: Runtime, *, principal: Principal, run_id: str, limit: int, cursor: str | None
) -> tuple[list[Call], str | None]:
    after = None
    if cursor:
        raw = decode_cursor(cursor)
        if not (
            isinstance(raw, list)
            and len(raw) == 2
            and all(isinstance(x, int) and 0 <= x < 2**31 for x in raw)
        ):
            raise _invalid("cursor", "not a cursor this service gave out")
        after = (raw[0], raw[1])
    async with rt.sessions() as session:
        rows = await turns.calls_page(
            session, tenant_id=principal.tenant_id, run_id=run_id, after=after, limit=limit + 1
        )
        if not rows and not await runs.exists_run(session, principal.tenant_id, run_id):
            raise not_found()
    return page_of(rows, limit, lambda r: [r.step, r.position])


async def request_cancel(rt: Runtime, *, principal: Principal, run_id: str) -> Run:
    """Marks the run cancelled-on-request, and every unfinished descendant with it; each
    one's stepper (in any process) ends it as soon as in-flight work can stop.
    Cancelling a finished run is `invalid_state`."""
    request = CancelRequest(
        tenant_id=principal.tenant_id, run_id=run_id, by=principal.subject, at=rt.clock.now()
    )
    asked, record = await children.cancel_tree(rt, request)
    if asked is not None:
        return asked
    if record is None:
        raise not_found()
    if record.status == RunStatus.FINISHED:
        raise DomainError(ErrorCode.INVALID_STATE, "the run has already finished")
    return record  # asked before: the same request again
