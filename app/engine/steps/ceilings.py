"""A model call's ceiling (budgets are ceilings, SPEC §3.4): the most its input can be
billed, the output cap the run's token and cost budgets leave after it, what the call
asks for, and how a reply billed at or past that cap ends the run.

A call asks for the smaller of the budgets' cap and its route's own limit
(`ModelRouteConfig.output_limit`); it is not made when the budgets leave less than
`MIN_OUTPUT_TOKENS`. A reply cut at the budgets' cap, or billed past the budgets by a
provider that ignored it, is charged and never taken: the run ends `budget`. What each
reply was billed is kept (`RunState.billed`) to bound the next request of the run tightly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from app.config.files import ModelRouteConfig
from app.domain.lifecycle.status import TerminationReason
from app.domain.lifecycle.steps import Finish, finish
from app.domain.limits.budget import Ceiling, Spend, overshoot
from app.domain.limits.input_bound import Billed, Prompt, most_input_tokens
from app.domain.model.replies import TokenUsage, script_usage
from app.engine.steps.state import RunState

OVERSHOT = "the provider billed the call past the run's budgets, ignoring its output cap"


@dataclass(frozen=True)
class CallCeiling:
    budget: Ceiling  # what the run's budgets leave the call's output
    asked: int | None  # what the call asks for: the smaller of that and its route's limit


def input_bound(state: RunState, route: ModelRouteConfig, prompt: Prompt) -> int:
    """The most input tokens the call can be billed: the script's own word on a scripted
    route (it declares its usage); else what the run's previous call was billed, when this
    request only adds messages to it, and the request's size when it does not."""
    if route.provider == "scripted":
        script, position = state.script or [], state.run.model_calls
        return script_usage(script[position]).input_tokens if position < len(script) else 0
    loose = most_input_tokens(prompt.size)
    tight = None if state.billed is None else state.billed.bound(prompt)
    return loose if tight is None else min(tight, loose)


def ceiling_of(state: RunState, route: ModelRouteConfig, prompt: Prompt) -> CallCeiling:
    budget = state.ceiling(input_bound(state, route, prompt), route)
    limit = route.output_limit
    asked = budget.output_tokens if limit is None else min(limit, budget.output_tokens)
    return CallCeiling(budget, asked)


def refused(state: RunState, ceiling: CallCeiling) -> Finish:
    """The run's end when the budgets leave too little for the call: it is not made. When
    the run is past them already (a classifier's provider ignored its cap), it says so."""
    over = past(state, Spend())
    if over is not None:
        return finish(TerminationReason.BUDGET, "budget", f"{OVERSHOT} ({_said(over)} over)")
    budget = ceiling.budget
    message = (
        f"the run's {budget.by} budget leaves too little for the next model call "
        f"({max(0, budget.output_tokens)} output tokens after its input)"
    )
    return finish(TerminationReason.BUDGET, "budget", message)


def keep_billed(state: RunState, prompt: Prompt, usage: TokenUsage | None) -> None:
    """What the prompt was billed, for the next one's bound (a provider that reports no
    usage bounds nothing)."""
    if usage is not None and usage.input_tokens > 0:
        state.billed = Billed(replace(prompt, messages=tuple(prompt.messages)), usage.input_tokens)


def past(state: RunState, spend: Spend) -> dict[str, Any] | None:
    """How far a reply billed `spend` takes the run past its budgets (None: within)."""
    return overshoot(state.run.own_limits, state.usage().plus(spend))


def ending(
    ceiling: CallCeiling, code: str, usage: TokenUsage | None, over: dict[str, Any] | None
) -> Finish | None:
    """How a failed attempt billed `usage` ends the run: past the budgets, or cut at the
    cap the budgets set (not at the route's own limit: that is the model's `truncated`)."""
    if over is not None:
        return finish(TerminationReason.BUDGET, "budget", f"{OVERSHOT} ({_said(over)} over)")
    cap = ceiling.budget.output_tokens
    if code == "truncated" and usage is not None and usage.output_tokens >= cap:
        message = (
            f"the model's answer was cut short at the {cap} output tokens the run's "
            f"{ceiling.budget.by} budget left"
        )
        return finish(TerminationReason.BUDGET, "budget", message)
    return None


def _said(over: dict[str, Any]) -> str:
    parts = []
    if "tokens" in over:
        parts.append(f"{over['tokens']} tokens")
    if "cost_usd" in over:
        parts.append(f"{over['cost_usd']:g} USD")
    return " and ".join(parts)
