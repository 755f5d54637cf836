"""A router's classifier route: a model call like any other. It goes only to a route
that carries the run's data-policy tags, only when the run's budgets can pay for it (its
output capped by them, as any call's), and what it spends is charged to the run with
the step's next write."""

from __future__ import annotations

import logging
from dataclasses import replace

from app.config.files import ModelRouteConfig
from app.domain.limits.budget import request_size, seconds_left, spend_of
from app.domain.limits.input_bound import Prompt
from app.domain.model.replies import (
    FinalAnswer,
    ModelError,
    ModelReply,
    ModelRequest,
    TokenUsage,
    clean_text,
    reply_problem,
    usage_in_range,
)
from app.domain.model.routing import missing_tags
from app.engine.process.lease import Interrupted, Lease
from app.engine.steps import ceilings
from app.engine.steps.chat_call import chat_call, versions_of
from app.engine.steps.state import RunState

log = logging.getLogger(__name__)
#: The longest classifier answer a route reason repeats: it is the model's text.
MAX_PICK_CHARS = 64


async def classify(
    lease: Lease, state: RunState, step: int, ok: list[str], policy: frozenset[str]
) -> tuple[str | None, str]:
    """The classifier route's pick, or None and why there is none (the default is used
    then). A route the policy rules out, or a call the budgets cannot pay for, is not
    asked at all."""
    rt = lease.rt
    run = state.run
    name = rt.route(run.route).chooser.route  # type: ignore[union-attr]
    if name not in rt.models or rt.route(name).provider == "scripted":
        return None, "no pick"
    route = rt.route(name)
    lacking = missing_tags(frozenset(route.tags), policy)
    if lacking:
        return None, f"{name} does not carry the data-policy tags {', '.join(lacking)}"
    timeout = min(route.timeout_s, seconds_left(rt.clock.now(), run.deadline_at))
    if timeout <= 0:
        return None, "no pick"
    request = _request(state, step, name, ok, timeout)
    size = request_size(request.instructions, request.messages)
    prompt = Prompt(name, request.instructions, (), None, request.messages, size)
    ceiling = ceilings.ceiling_of(state, route, prompt)
    if not ceiling.budget.room:
        return None, f"a call of {name} would exceed the run's {ceiling.budget.by} budget"
    request = replace(request, max_output_tokens=ceiling.asked)
    reply = await _ask(lease, state, request)
    if not isinstance(reply, FinalAnswer) or reply_problem(reply) is not None:
        return None, "no pick"
    pick = clean_text(reply.text.strip().strip("`'\".").strip(), MAX_PICK_CHARS)
    return pick or None, "no pick"


def _request(state: RunState, step: int, name: str, ok: list[str], timeout: float) -> ModelRequest:
    instructions = (
        "Choose the model route best suited to the user's request. Answer with exactly "
        f"one of these names and nothing else: {', '.join(ok)}."
    )
    return ModelRequest(
        run_id=state.run.id,
        step=step,
        attempt=1,
        route=name,
        instructions=instructions,
        messages=[
            {"role": "system", "content": instructions},
            {"role": "user", "content": state.run.input},
        ],
        tools=[],
        timeout_s=timeout,
        position=0,
    )


async def _ask(lease: Lease, state: RunState, request: ModelRequest) -> ModelReply | None:
    """The reply, or None when the call fails; what an answer used is owed to the run."""
    rt = lease.rt
    route = rt.route(request.route)
    with chat_call(rt, versions_of(request.instructions, ()), route, request) as observed:
        try:
            reply = await lease.guarded(
                rt.models[request.route].complete(request), request.timeout_s
            )
        except Interrupted:
            raise
        except Exception as exc:  # the chooser failing is not the run failing
            log.info("the classifier route failed (%s); using the default", type(exc).__name__)
            failed = exc if isinstance(exc, ModelError) else ModelError("error")
            observed.failed(failed.code, failed.retryable)
            # An answer cut at its cap was billed all the same.
            _owe(state, request.route, route, failed.usage)
            return None
        observed.answered(reply)
    _owe(state, request.route, route, reply.usage)
    return reply


def _owe(state: RunState, name: str, route: ModelRouteConfig, usage: TokenUsage | None) -> None:
    """What the classifier call was billed, owed to the run's next write."""
    if usage is None or not usage_in_range(usage):
        return
    spend = spend_of(
        usage.input_tokens,
        usage.output_tokens,
        input_per_mtok=route.input_cost_per_mtok,
        output_per_mtok=route.output_cost_per_mtok,
    )
    state.owed = (name, spend)
