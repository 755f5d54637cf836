"""The writes of a model step: a failed attempt, or the turn with its proposals (or the
final answer and the finish), each in one transaction, before anything is executed.

A turn that uses up the run's token or cost budget ends the run in the transaction that
records it: no later model call could read its calls' results, so none of them runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.domain.errors import ErrorValue, ObservationCode
from app.domain.guardrails.sensitive import redact_value
from app.domain.ids import new_id, operation_id
from app.domain.lifecycle.events import Event, EventType
from app.domain.lifecycle.moves import CALL_PROPOSAL_REJECTED
from app.domain.lifecycle.records import Call, Turn, add_cost
from app.domain.lifecycle.run_patch import RunPatch
from app.domain.lifecycle.status import CallStatus, TerminationReason
from app.domain.lifecycle.steps import Finish, finish
from app.domain.limits.budget import Spend, spend_of, spent_budget, tool_calls_that_fit
from app.domain.model.citations import cited_ids
from app.domain.model.replies import (
    FinalAnswer,
    ModelError,
    ModelReply,
    TokenUsage,
    clean_text,
    said,
)
from app.domain.tools.proposals import CheckedCall, check_calls
from app.engine import off_loop
from app.engine.process.lease import Lease
from app.engine.steps import guarding, routing
from app.engine.steps.chat_call import Versions
from app.engine.steps.commit import Change, commit, hold
from app.engine.steps.finish import finish_run
from app.engine.steps.state import RunState
from app.engine.tools.gates import apply_rate_limits

#: The model name a turn keeps (the provider reports it; the column holds 200).
MAX_MODEL_NAME = 200


def spend_on(lease: Lease, route_name: str, usage: TokenUsage) -> Spend:
    route = lease.rt.route(route_name)
    return spend_of(
        usage.input_tokens,
        usage.output_tokens,
        input_per_mtok=route.input_cost_per_mtok,
        output_per_mtok=route.output_cost_per_mtok,
    )


def _counted(state: RunState, spend: Spend, **values: Any) -> RunPatch:
    """The run's usage with `spend` added (and `values`, more of its columns)."""
    usage = state.run.usage
    return RunPatch(
        input_tokens=usage.input_tokens + spend.input_tokens,
        output_tokens=usage.output_tokens + spend.output_tokens,
        cost_usd=add_cost(usage.cost_usd, spend.cost_usd),
        **values,
    )


def _owed(state: RunState) -> dict[str, Any]:
    """The classifier call this write charges to the run (see `RunState.owed`), for its
    event: the turn's own tokens are apart."""
    if state.owed is None:
        return {}
    route, spend = state.owed
    return {"classifier": {"route": route, **spend.as_dict()}}


async def record_failure(
    lease: Lease,
    state: RunState,
    step: int,
    attempt: int,
    error: ModelError,
    routed: routing.Routed,
    spend: Spend | None = None,
    *,
    ending: Finish | None = None,
    **noted: Any,
) -> None:
    """A failed attempt: consumed, and charged when it was paid for (a reply refused as
    malformed output, or cut at its length limit, still cost its tokens); with `ending`,
    the run ends in the same transaction. `noted` joins the event (the call's cap)."""
    value = ErrorValue(error.code, error.message, error.retryable)
    run = RunPatch(model_calls=state.run.model_calls + 1, step_attempts=attempt)
    data = {"step": step, "attempt": attempt, "route": routed.route, **value.as_dict()}
    if spend is not None:
        run = run.then(_counted(state, spend))
        data.update(spend.as_dict())
    data.update(_owed(state), **noted)
    change = Change(run=run, events=[(EventType.TURN_FAILED, data)])
    if ending is None:
        await commit(lease, state, change)
    else:
        await finish_run(lease, state, ending, before=change)


def _new_calls(
    state: RunState,
    step: int,
    checked: list[CheckedCall],
    now: Any,
    stop: ErrorValue | None,
    guarded: Mapping[str, list[Event]],
) -> tuple[list[Call], list[dict[str, Any]], list[Event]]:
    """The calls, rejections of repeated ids (kept on the turn: a call is unique by step
    and id), and their events (a call's guardrail events after its proposal). Accepted
    calls past max_tool_calls are cancelled, and all of them when the turn ends the run
    (`stop`: it used up a budget, or a guardrail's block ends it)."""
    run = state.run
    accepted = [c for c in checked if c.rejection is None]
    fit = 0 if stop else tool_calls_that_fit(run.own_limits, run.usage, len(accepted))
    over = stop or ErrorValue(ObservationCode.BUDGET, "the run's tool-call budget is exhausted")
    calls: list[Call] = []
    extra: list[dict[str, Any]] = []
    events: list[Event] = []
    for c in checked:
        about = {"step": step, "call_id": c.call_id}
        events.append(
            (EventType.CALL_PROPOSED, {**about, "tool": c.tool, "args_hash": c.args_hash})
        )
        if c.rejection and c.rejection.code == ObservationCode.DUPLICATE_CALL_ID:
            error = c.rejection.as_dict()
            extra.append(
                {"call_id": c.call_id, "tool": c.tool, "arguments": c.arguments, "error": error}
            )
            events.append((EventType.CALL_REJECTED, {**about, **error}))
            continue
        events.extend(guarded.get(c.call_id, ()))
        status, error_value = CallStatus.PENDING, None
        if c.rejection:
            CALL_PROPOSAL_REJECTED.check(CallStatus.PENDING, CallStatus.REJECTED)
            status, error_value = CallStatus.REJECTED, c.rejection
            events.append((EventType.CALL_REJECTED, {**about, **c.rejection.as_dict()}))
        elif fit <= 0:
            status, error_value = CallStatus.CANCELLED, over
            events.append((EventType.CALL_CANCELLED, {**about, "code": over.code}))
        else:
            fit -= 1
        calls.append(_call(state, step, len(calls), c, status, error_value, now))
    return calls, extra, events


def _call(
    state: RunState,
    step: int,
    position: int,
    c: CheckedCall,
    status: CallStatus,
    error: ErrorValue | None,
    now: Any,
) -> Call:
    run = state.run
    return Call(
        tenant_id=run.tenant_id,
        id=new_id("call"),
        run_id=run.id,
        step=step,
        position=position,
        call_id=c.call_id,
        tool=c.tool,
        status=status,
        arguments=c.arguments,
        args_hash=c.args_hash,
        operation_id=operation_id(run.id, step, c.call_id),
        error=error,
        created_at=now,
        updated_at=now,
    )


def _turn(
    lease: Lease,
    state: RunState,
    step: int,
    attempt: int,
    reply: ModelReply,
    routed: routing.Routed,
    versions: Versions,
    spend: Spend,
) -> Turn:
    run = state.run
    return Turn(
        tenant_id=run.tenant_id,
        run_id=run.id,
        step=step,
        route=routed.route,
        route_reason=None if routed.reason == routing.CONFIGURED else routed.reason,
        model=clean_text(reply.model or "", MAX_MODEL_NAME) or routed.route,
        instructions_hash=versions.instructions_hash,
        tool_schema_hash=versions.tool_schema_hash,
        kind="final" if isinstance(reply, FinalAnswer) else "tool_calls",
        attempts=attempt,
        input_tokens=spend.input_tokens,
        output_tokens=spend.output_tokens,
        cost_usd=spend.cost_usd,
        created_at=lease.rt.clock.now(),
        # A model's stated reason is shown to approvers as the API shows text: no secret.
        text=None if isinstance(reply, FinalAnswer) else redact_value(said(reply.text)),
    )


def _completed(state: RunState, turn: Turn, spend: Spend, attempt: int, cap: int | None) -> Event:
    """The turn's `turn.completed`: what it spent and on which route, and (a turn of tool
    calls) what the model said beside its calls; a final answer's text is the output."""
    data = {"step": turn.step, "attempt": attempt, "kind": turn.kind, "route": turn.route}
    data.update(route_reason=turn.route_reason, **spend.as_dict(), **_owed(state), output_cap=cap)
    if turn.text is not None:  # only a turn of calls has one yet
        data["text"] = turn.text
    return (EventType.TURN_COMPLETED, data)


async def record_turn(
    lease: Lease,
    state: RunState,
    step: int,
    attempt: int,
    reply: ModelReply,
    exposed: list[Any],
    routed: routing.Routed,
    versions: Versions,
    cap: int | None = None,
) -> None:
    """One transaction: the run's counters (conditional on the lease, so a stepper that
    lost it stops here), the turn and its proposals, or the final answer and the finish
    (`cap`: the call's output cap, for its event)."""
    rt, run = lease.rt, state.run
    spend = spend_on(lease, routed.route, reply.usage)
    turn = _turn(lease, state, step, attempt, reply, routed, versions, spend)
    counters = _counted(
        state, spend, model_calls=run.model_calls + 1, step_attempts=0, steps=run.usage.steps + 1
    )
    completed = _completed(state, turn, spend, attempt, cap)
    if isinstance(reply, FinalAnswer):
        await _record_final(lease, state, reply, turn, counters, completed)
        return
    spent = spent_budget(run.own_limits, state.usage().plus(spend))
    exposed_by_name = {t.spec.name: t for t in exposed}
    checked = check_calls(
        reply.calls,
        exposed=exposed_by_name,
        principal=run.creator,
        disabled=await rt.disabled_tools.of(run.tenant_id),
    )
    # A turn that used the budget up takes no rate-limit slot: none of its calls runs.
    room = 0 if spent else max(0, run.own_limits.max_tool_calls - run.usage.tool_calls)
    checked = await apply_rate_limits(rt, tenant_id=run.tenant_id, checked=checked, room=room)
    guarded = await guarding.before_calls(guarding.policy_of(state), step, checked, exposed_by_name)
    # The turn's other accepted calls never run when a block ends the run.
    stop = guarding.ENDED if guarded.ends else None
    if spent:
        stop = ErrorValue(ObservationCode.BUDGET, f"the turn used up the run's {spent} budget")
    calls, extra, events = _new_calls(
        state, step, guarded.checked, turn.created_at, stop, guarded.events
    )
    turn = replace(turn, extra_rejections=tuple(extra))
    change = Change(run=counters, events=[completed, *events], turn=turn, new_calls=calls)
    if spent is None and guarded.ends is None:
        if _holds(lease, state, calls):
            hold(lease, state, change)
        else:
            await commit(lease, state, change)
        return
    if spent is not None:
        message = f"the turn used up the run's {spent} budget; none of its calls ran"
        ending = finish(TerminationReason.BUDGET, "budget", message)
    else:
        assert guarded.ends is not None
        ending = finish(TerminationReason.POLICY_DENIED, guarded.ends.code, guarded.ends.message)
    await finish_run(lease, state, ending, before=change)


def _holds(lease: Lease, state: RunState, calls: list[Call]) -> bool:
    """Whether the turn waits for its calls' outcomes to be written with them: it has
    some to run, and all are reads (a side effect is committed as started before it
    leaves, so its turn must be in the database first). Not once a child has reserved
    part of the run's budgets: the turn's write tells the holder what is left for them."""
    tools = state.tools
    pending = [c for c in calls if c.status is CallStatus.PENDING]
    return (
        lease.rt.settings.turn_hold_ms > 0
        and not lease.children_seen
        and bool(pending)
        and all(c.tool in tools and not tools[c.tool].spec.sequential for c in pending)
    )


async def _record_final(
    lease: Lease,
    state: RunState,
    reply: FinalAnswer,
    turn: Turn,
    counters: RunPatch,
    completed: Event,
) -> None:
    """A final answer ends the run unless an on_final guardrail blocks it (a citation of
    a source the run never produced, sensitive content): then it is rejected (and counted
    as a step) and the model hears why, or the block ends the run `policy_denied`."""
    policy = guarding.policy_of(state)
    sources = frozenset(state.sources)
    checked = await guarding.on_final(
        policy, turn.step, reply.text, sources, guarding.output_of(state)
    )
    turn = replace(turn, text=checked.text)
    rejection = checked.rejection
    if rejection is not None:
        turn = replace(turn, rejection=rejection)
        about = {"step": turn.step, **rejection.as_dict()}
        if checked.errors:  # a typed answer's reasons, one by one
            about["errors"] = [e.as_dict() for e in checked.errors]
        rejected = (EventType.FINAL_REJECTED, about)
        change = Change(run=counters, events=[completed, *checked.events, rejected], turn=turn)
        if not checked.ends:
            await commit(lease, state, change)
            return
        ending = finish(TerminationReason.POLICY_DENIED, rejection.code, rejection.message)
        await finish_run(lease, state, ending, before=change)
        return
    cited = await off_loop.run(len(checked.text), citations, checked.text, state.sources)
    output = {"text": checked.text, "citations": cited}
    if checked.typed:
        output["data"] = checked.data
    await finish_run(
        lease,
        state,
        finish(TerminationReason.FINAL),
        before=Change(run=counters, events=[completed, *checked.events]),
        turn=turn,
        output=output,
    )


def citations(text: str, produced: dict[str, Call]) -> list[dict[str, Any]]:
    return [
        {
            "source_id": sid,
            "tool": produced[sid].tool,
            "observed_at": produced[sid].observed_at,
            "source_version": produced[sid].source_version,
        }
        for sid in cited_ids(text)
        if sid in produced
    ]
