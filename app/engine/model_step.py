"""The CallModel step: ask the model (retrying within the step), then record the turn
and its proposals, in one transaction, before anything is executed."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from app.db.runs_repo import Event
from app.domain.budget import (
    call_would_exceed,
    least_input_tokens,
    model_cost,
    seconds_left,
    tool_calls_that_fit,
)
from app.domain.citations import cited_ids, unknown_citations
from app.domain.errors import ErrorValue, ObservationCode
from app.domain.ids import new_id, operation_id
from app.domain.model import FinalAnswer, ModelError, ModelReply, ModelRequest, ToolCallsProposal
from app.domain.proposals import CheckedCall, check_calls
from app.domain.records import Call, Turn, add_cost
from app.domain.retry import backoff_s
from app.domain.status import CallStatus, TerminationReason
from app.domain.steps import Finish, finish
from app.domain.tools import ToolSpec
from app.engine import routing
from app.engine.chat_call import Versions, chat_call, versions_of
from app.engine.commit import Change, commit
from app.engine.finish import finish_run
from app.engine.lease import Lease
from app.engine.state import RunState
from app.engine.tool_gates import apply_rate_limits

log = logging.getLogger(__name__)


async def call_model(lease: Lease, state: RunState, step: int) -> Finish | None:
    """Returns a Finish when the step ends the run without recording a turn."""
    rt = lease.rt
    run = state.run
    if run.route not in rt.config.models or (
        run.route not in rt.models and rt.route(run.route).provider != "router"
    ):
        # The config changed under the run: say so, rather than fail the step repeatedly.
        message = "the run's model route is no longer configured"
        return finish(TerminationReason.MODEL_FAILED, "model_unavailable", message)
    try:
        chosen = await routing.route_for(lease, state, step)
    except routing.NoRoute:
        message = "no model route meets the run's data policy and needs"
        return finish(TerminationReason.POLICY_DENIED, "no_route", message)
    fallback = routing.fallback_for(lease, state, chosen)
    exposed = [rt.tools[n] for n in run.tools if n in rt.tools]
    versions = versions_of(state.instructions, (t.spec for t in exposed))
    messages = state.messages()
    tools = [t.spec for t in exposed]
    # What every attempt of this step sends: its size bounds the input tokens from below.
    size = _request_size(state.instructions, messages, tools)
    while True:
        run = state.run
        attempt = run.step_attempts + 1
        routed, tries = routing.on_route(rt, chosen, fallback, attempt)
        route = rt.route(routed.route)
        left = seconds_left(rt.clock.now(), run.deadline_at)
        request = ModelRequest(
            run_id=run.id,
            step=step,
            attempt=attempt,
            route=routed.route,
            instructions=state.instructions,
            messages=messages,
            tools=tools,
            timeout_s=min(route.timeout_s, left),
            position=run.model_calls,
            script=state.script,
        )
        if route.provider != "scripted":  # a script declares its own usage
            over = _would_exceed(run, route, size)
            if over is not None:
                message = f"the next model call would exceed the run's {over} budget"
                return finish(TerminationReason.BUDGET, "budget", message)
        with chat_call(rt, versions, route, request) as observed:
            try:
                reply = await lease.guarded(
                    rt.models[routed.route].complete(request), request.timeout_s
                )
            except TimeoutError:
                if request.timeout_s >= left:
                    observed.cut_by_deadline()
                    return finish(TerminationReason.DEADLINE)
                error = ModelError("timeout", "the model did not answer in time", retryable=True)
            except ModelError as exc:
                error = exc
            else:
                observed.answered(reply)
                await _record_turn(lease, state, step, attempt, reply, exposed, routed, versions)
                return None
            observed.failed(error.code, error.retryable)
        if not error.consumed:
            return finish(TerminationReason.MODEL_FAILED, error.code, error.message)
        await _record_failure(lease, state, step, attempt, error, routed)
        if error.code == TerminationReason.CONTEXT_EXHAUSTED:  # no retry can fix it
            return finish(TerminationReason.CONTEXT_EXHAUSTED, error.code, error.message)
        last_try = tries >= route.max_attempts
        if not error.retryable or (last_try and (fallback is None or routed is fallback)):
            return finish(TerminationReason.MODEL_FAILED, error.code, error.message)
        # The scripted model replays a script: waiting between its items tests nothing.
        pause = backoff_s(attempt) if route.provider != "scripted" else 0.0
        pause = max(pause, error.retry_after_s or 0.0)  # the provider's word counts too
        if pause >= seconds_left(rt.clock.now(), run.deadline_at):
            return finish(TerminationReason.DEADLINE)
        if pause:
            await lease.guarded(asyncio.sleep(pause), pause + 1)


def _request_size(instructions: str, messages: Sequence[Any], tools: Sequence[ToolSpec]) -> int:
    size = len(json.dumps([instructions, list(messages)], default=str))
    return size + sum(len(json.dumps(t.input_schema)) + len(t.description) for t in tools)


def _would_exceed(run: Any, route: Any, size: int) -> str | None:
    """The budget a call of a request of `size` bytes would certainly exceed (see
    `least_input_tokens`)."""
    return call_would_exceed(
        run.limits,
        run.usage,
        input_tokens=least_input_tokens(size),
        input_per_mtok=route.input_cost_per_mtok,
    )


async def _record_failure(
    lease: Lease,
    state: RunState,
    step: int,
    attempt: int,
    error: ModelError,
    routed: routing.Routed,
) -> None:
    value = ErrorValue(error.code, error.message, error.retryable)
    await commit(
        lease,
        state,
        Change(
            run={"model_calls": state.run.model_calls + 1, "step_attempts": attempt},
            events=[
                (
                    "turn.failed",
                    {
                        "step": step,
                        "attempt": attempt,
                        "route": routed.route,
                        **value.as_dict(),
                    },
                )
            ],
        ),
    )


def _new_calls(
    state: RunState, step: int, checked: list[CheckedCall], now: Any
) -> tuple[list[Call], list[dict[str, Any]], list[Event]]:
    """The calls, rejections of repeated ids (kept on the turn: a call is unique by step
    and id), and their events. Accepted calls past max_tool_calls are cancelled."""
    run = state.run
    accepted = [c for c in checked if c.rejection is None]
    fit = tool_calls_that_fit(run.limits, run.usage, len(accepted))
    calls: list[Call] = []
    extra: list[dict[str, Any]] = []
    events: list[Event] = []
    for c in checked:
        about = {"step": step, "call_id": c.call_id}
        events.append(("call.proposed", {**about, "tool": c.tool, "args_hash": c.args_hash}))
        if c.rejection and c.rejection.code == ObservationCode.DUPLICATE_CALL_ID:
            error = c.rejection.as_dict()
            extra.append(
                {"call_id": c.call_id, "tool": c.tool, "arguments": c.arguments, "error": error}
            )
            events.append(("call.rejected", {**about, **error}))
            continue
        status, error_value = CallStatus.PENDING, None
        if c.rejection:
            status, error_value = CallStatus.REJECTED, c.rejection
            events.append(("call.rejected", {**about, **c.rejection.as_dict()}))
        elif fit <= 0:
            status = CallStatus.CANCELLED
            error_value = ErrorValue(
                ObservationCode.BUDGET, "the run's tool-call budget is exhausted"
            )
            events.append(("call.cancelled", {**about, "code": "budget"}))
        else:
            fit -= 1
        calls.append(
            Call(
                tenant_id=run.tenant_id,
                id=new_id("call"),
                run_id=run.id,
                step=step,
                position=len(calls),
                call_id=c.call_id,
                tool=c.tool,
                status=status,
                arguments=c.arguments,
                args_hash=c.args_hash,
                operation_id=operation_id(run.id, step, c.call_id),
                error=error_value,
                created_at=now,
                updated_at=now,
            )
        )
    return calls, extra, events


async def _record_turn(
    lease: Lease,
    state: RunState,
    step: int,
    attempt: int,
    reply: ModelReply,
    exposed: list[Any],
    routed: routing.Routed,
    versions: Versions,
) -> None:
    """One transaction: the run's counters (conditional on the lease, so a stepper that
    lost it stops here), the turn and its proposals, or the final answer and the finish."""
    rt = lease.rt
    run = state.run
    usage = reply.usage
    route = rt.route(routed.route)
    cost = model_cost(
        usage.input_tokens,
        usage.output_tokens,
        input_per_mtok=route.input_cost_per_mtok,
        output_per_mtok=route.output_cost_per_mtok,
    )
    now = rt.clock.now()
    turn = Turn(
        tenant_id=run.tenant_id,
        run_id=run.id,
        step=step,
        route=routed.route,
        route_reason=None if routed.reason == routing.CONFIGURED else routed.reason,
        model=reply.model or routed.route,
        instructions_hash=versions.instructions_hash,
        tool_schema_hash=versions.tool_schema_hash,
        kind="final" if isinstance(reply, FinalAnswer) else "tool_calls",
        attempts=attempt,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=cost,
        created_at=now,
    )
    counters = {
        "model_calls": run.model_calls + 1,
        "step_attempts": 0,
        "steps": run.steps + 1,
        "input_tokens": run.input_tokens + usage.input_tokens,
        "output_tokens": run.output_tokens + usage.output_tokens,
        "cost_usd": add_cost(run.cost_usd, cost),
    }
    completed: Event = (
        "turn.completed",
        {
            "step": step,
            "attempt": attempt,
            "kind": turn.kind,
            "route": routed.route,
            "route_reason": turn.route_reason,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cost_usd": cost,
        },
    )
    if isinstance(reply, ToolCallsProposal):
        checked = check_calls(
            reply.calls,
            exposed={t.spec.name: t for t in exposed},
            principal=run.creator,
            disabled=await rt.disabled_tools.of(run.tenant_id),
        )
        room = max(0, run.limits.max_tool_calls - run.tool_calls)
        checked = await apply_rate_limits(rt, tenant_id=run.tenant_id, checked=checked, room=room)
        calls, extra, events = _new_calls(state, step, checked, now)
        turn = replace(turn, extra_rejections=tuple(extra))
        change = Change(run=counters, events=[completed, *events], turn=turn, new_calls=calls)
        await commit(lease, state, change)
    else:
        await _record_final(lease, state, reply, turn, counters, completed)


async def _record_final(
    lease: Lease,
    state: RunState,
    reply: FinalAnswer,
    turn: Turn,
    counters: dict[str, Any],
    completed: Event,
) -> None:
    """A final answer ends the run unless it cites a source the run never produced; then
    it is rejected (and counted as a step) and the model hears why."""
    unknown = unknown_citations(reply.text, state.sources)
    turn = replace(turn, text=reply.text)
    if unknown:
        rejection = ErrorValue.rejection(
            ObservationCode.INVALID_CITATION,
            f"cited sources this run never produced: {', '.join(unknown)}",
        )
        turn = replace(turn, rejection=rejection)
        events = [completed, ("final.rejected", {"step": turn.step, **rejection.as_dict()})]
        await commit(lease, state, Change(run=counters, events=events, turn=turn))
        return
    output = {"text": reply.text, "citations": citations(reply.text, state.sources)}
    await finish_run(
        lease,
        state,
        finish(TerminationReason.FINAL),
        before=Change(run=counters, events=[completed]),
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
