"""The CallModel step: ask the model (retrying within the step), then record the turn
and its proposals, in one transaction, before anything is executed (`turn_writes`).

Budgets are ceilings (`ceilings`): each call is sent with the output cap its run's token
and cost budgets leave after the most its input can be billed, and is not sent when that
is too little. A reply cut at that cap, or billed past the budgets by a provider that
ignored it, is charged and not taken; the run ends `budget`."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from typing import Any

from app.domain.lifecycle.status import TerminationReason
from app.domain.lifecycle.steps import Finish, finish
from app.domain.limits.budget import request_size, seconds_left
from app.domain.limits.input_bound import Prompt
from app.domain.model.paging import READ_RESULT
from app.domain.model.replies import (
    ModelError,
    ModelReply,
    ModelRequest,
    reply_problem,
    usage_in_range,
)
from app.domain.model.typed_output import OutputSchema
from app.domain.model.window import View
from app.domain.tools.retry import backoff_s
from app.engine.process.lease import Lease
from app.engine.steps import ceilings, guarding, routing
from app.engine.steps.chat_call import Versions, chat_call, versions_of
from app.engine.steps.state import RunState
from app.engine.steps.turn_writes import record_failure, record_turn, spend_on
from app.engine.tools import offered

log = logging.getLogger(__name__)
CONTEXT_EXHAUSTED = TerminationReason.CONTEXT_EXHAUSTED.value


@dataclass(frozen=True)
class _Step:
    """What every attempt of a step sends (`prompt`: what its input is billed for)."""

    number: int
    exposed: list[Any]
    versions: Versions
    output: OutputSchema | None
    prompt: Prompt  # its messages and tools, as sent


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
    exposed = [state.tools[n] for n in run.tools if n in state.tools]
    await offered.ready(exposed)
    view = state.view(exposed)
    if not view.fits:  # checked before any model call, a router's chooser included
        return finish(
            TerminationReason.CONTEXT_EXHAUSTED, CONTEXT_EXHAUSTED, _exhausted(state, view)
        )
    if view.summarized:  # a result is a summary: the model may read it page by page
        exposed.append(state.tools[READ_RESULT])
    try:
        chosen = await routing.route_for(lease, state, step)
    except routing.NoRoute:
        message = "no model route meets the run's data policy and needs"
        return finish(TerminationReason.POLICY_DENIED, "no_route", message)
    fallback = routing.fallback_for(lease, state, chosen)
    # A tool its server does not offer now is not shown; a call of it is refused.
    tools = [t.spec for t in exposed if t.spec.listed]
    messages = view.messages
    output = guarding.output_of(state)
    schema = None if output is None else output.schema
    size = request_size(state.instructions, messages, tools, schema)
    prompt = Prompt(run.route, state.instructions, tools, schema, messages, size)
    versions = versions_of(state.instructions, tools)
    shared = _Step(step, exposed, versions, output, prompt)
    while True:
        attempt = state.run.step_attempts + 1
        routed, tries = routing.on_route(rt, chosen, fallback, attempt)
        outcome = await _attempt(lease, state, shared, attempt, routed)
        if not isinstance(outcome, ModelError):
            return outcome
        error, route = outcome, rt.route(routed.route)
        if error.code == TerminationReason.CONTEXT_EXHAUSTED:  # no retry can fix it
            return finish(TerminationReason.CONTEXT_EXHAUSTED, error.code, error.message)
        last_try = tries >= route.max_attempts
        if not error.retryable or (last_try and (fallback is None or routed is fallback)):
            return finish(TerminationReason.MODEL_FAILED, error.code, error.message)
        # The scripted model replays a script: waiting between its items tests nothing.
        pause = backoff_s(attempt) if route.provider != "scripted" else 0.0
        pause = max(pause, error.retry_after_s or 0.0)  # the provider's word counts too
        if pause >= seconds_left(rt.clock.now(), state.run.deadline_at):
            return finish(TerminationReason.DEADLINE)
        if pause:
            await lease.guarded(asyncio.sleep(pause), pause + 1)


def _exhausted(state: RunState, view: View) -> str:
    need = f"about {view.tokens} tokens; its context budget is {state.context_tokens}"
    if state.run.usage.steps == 0:
        return f"the run's input does not fit: it needs {need}"
    return f"what the run must keep no longer fits: it needs {need}"


async def _attempt(
    lease: Lease, state: RunState, step: _Step, attempt: int, routed: routing.Routed
) -> Finish | ModelError | None:
    """One model call: None when its turn is recorded (or the run ended with it), the
    ModelError recorded when it failed (the caller decides on a retry), or a Finish when
    the run ends here."""
    rt = lease.rt
    run = state.run
    route = rt.route(routed.route)
    left = seconds_left(rt.clock.now(), run.deadline_at)
    prompt = replace(step.prompt, route=routed.route)
    ceiling = ceilings.ceiling_of(state, route, prompt)
    if not ceiling.budget.room:  # a call that could not fit is not made
        return ceilings.refused(state, ceiling)
    request = ModelRequest(
        run_id=run.id,
        step=step.number,
        attempt=attempt,
        route=routed.route,
        instructions=state.instructions,
        messages=prompt.messages,
        tools=prompt.tools,
        timeout_s=min(route.timeout_s, left),
        position=run.model_calls,
        script=state.script,
        output=step.output,
        max_output_tokens=ceiling.asked,
    )
    with chat_call(rt, step.versions, route, request) as observed:
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
            taken = _taken(lease, state, reply, routed)
            if taken is None:
                observed.answered(reply)
                ceilings.keep_billed(state, prompt, reply.usage)
                await record_turn(
                    lease,
                    state,
                    step.number,
                    attempt,
                    reply,
                    step.exposed,
                    routed,
                    step.versions,
                    ceiling.asked,
                )
                return None
            error = taken
        observed.failed(error.code, error.retryable)
    return await _failed(lease, state, step, attempt, error, routed, ceiling)


def _taken(
    lease: Lease,
    state: RunState,
    reply: ModelReply,
    routed: routing.Routed,
) -> ModelError | None:
    """Why a reply is not taken (None: it is): it breaks the bounds on what a model may
    say, or it was billed past the run's budgets. Either way its tokens were paid for."""
    problem = reply_problem(reply)
    if problem is not None:
        return ModelError("malformed_output", problem, retryable=True, usage=reply.usage)
    if ceilings.past(state, spend_on(lease, routed.route, reply.usage)) is not None:
        return ModelError("budget_overshoot", ceilings.OVERSHOT, usage=reply.usage)
    return None


async def _failed(
    lease: Lease,
    state: RunState,
    step: _Step,
    attempt: int,
    error: ModelError,
    routed: routing.Routed,
    ceiling: ceilings.CallCeiling,
) -> Finish | ModelError | None:
    """Records a failed attempt, charged what its reply was billed. An answer cut at the
    cap the budgets set, or billed past them, ends the run `budget` in the same write."""
    if not error.consumed:
        return finish(TerminationReason.MODEL_FAILED, error.code, error.message)
    usage = error.usage if error.usage is not None and usage_in_range(error.usage) else None
    spend = None if usage is None else spend_on(lease, routed.route, usage)
    over = None if spend is None else ceilings.past(state, spend)
    noted: dict[str, Any] = {"output_cap": ceiling.asked}
    if over is not None:
        noted["overshoot"] = over
    ceilings.keep_billed(state, replace(step.prompt, route=routed.route), usage)
    ending = ceilings.ending(ceiling, error.code, usage, over)
    await record_failure(
        lease, state, step.number, attempt, error, routed, spend, ending=ending, **noted
    )
    return None if ending is not None else error
