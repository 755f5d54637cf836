"""Limits, usage and the deadline: clamping and the checks made before every step."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta
from typing import Any

from app.domain.lifecycle.status import TerminationReason
from app.domain.memo import by_identity
from app.domain.tools.specs import ToolSpec

#: Digits a cost keeps: the column's scale, so memory and database agree exactly.
COST_DIGITS = 8
COST_UNIT = 10**-COST_DIGITS


def add_cost(total: float, amount: float) -> float:
    return round(total + amount, COST_DIGITS)


@dataclass(frozen=True)
class Limits:
    max_steps: int
    deadline_s: float
    max_tokens: int
    max_cost_usd: float
    max_tool_calls: int

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Limits:
        return cls(**{f.name: data[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class Usage:
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def plus(self, spend: Spend) -> Usage:
        return Usage(
            steps=self.steps,
            input_tokens=self.input_tokens + spend.input_tokens,
            output_tokens=self.output_tokens + spend.output_tokens,
            cost_usd=add_cost(self.cost_usd, spend.cost_usd),
            tool_calls=self.tool_calls,
        )


@dataclass(frozen=True)
class Spend:
    """What one model call used: its tokens, and their cost at its route's prices."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Reserved:
    """What a run holds for its unfinished children: the sum of their grants."""

    tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def own_limits(limits: Limits, reserved: Reserved, total: Usage, own: Usage) -> Limits:
    """`limits` less what others hold of them: the descendants' spending (`total` less
    `own`) and the reservations. Steps are the run's own and are not shared. A run that
    holds nothing for others (most) is answered without it (`Run.own_limits`)."""
    return replace(
        limits,
        max_tokens=limits.max_tokens - (total.tokens - own.tokens) - reserved.tokens,
        max_cost_usd=round(
            limits.max_cost_usd - (total.cost_usd - own.cost_usd) - reserved.cost_usd,
            COST_DIGITS,
        ),
        max_tool_calls=limits.max_tool_calls
        - (total.tool_calls - own.tool_calls)
        - reserved.tool_calls,
    )


def left_for_child(limits: Limits, reserved: Reserved, total: Usage) -> Limits:
    """What a child may be granted at most: what the parent has not spent (its own and
    its descendants') nor reserved. Its deadline is left to `deadline_at`."""
    return replace(
        limits,
        max_tokens=limits.max_tokens - total.tokens - reserved.tokens,
        max_cost_usd=round(limits.max_cost_usd - total.cost_usd - reserved.cost_usd, COST_DIGITS),
        max_tool_calls=limits.max_tool_calls - total.tool_calls - reserved.tool_calls,
    )


def narrow_limits(caps: Limits, *overrides: dict[str, Any] | None) -> Limits:
    """Each override can only lower a limit; values above the current one are clamped."""
    current = caps.as_dict()
    for override in overrides:
        for name, value in (override or {}).items():
            if value is not None and name in current:
                current[name] = min(current[name], value)
    return Limits.from_dict(current)


def clamped(asked: Mapping[str, Any], granted: Limits) -> dict[str, dict[str, Any]]:
    """The limits a request asked above what the run was granted (its agent's or the
    server's cap), each with both values: `{"deadline_s": {"asked": 7200, "granted": 3600}}`.
    Empty when every limit asked was granted."""
    have = granted.as_dict()
    return {
        name: {"asked": value, "granted": have[name]}
        for name, value in asked.items()
        if value is not None and name in have and value > have[name]
    }


def model_cost(
    input_tokens: int, output_tokens: int, *, input_per_mtok: float, output_per_mtok: float
) -> float:
    """What one model call costs at the route's prices (USD per million tokens)."""
    return (input_tokens * input_per_mtok + output_tokens * output_per_mtok) / 1_000_000


def spend_of(
    input_tokens: int, output_tokens: int, *, input_per_mtok: float, output_per_mtok: float
) -> Spend:
    cost = model_cost(
        input_tokens, output_tokens, input_per_mtok=input_per_mtok, output_per_mtok=output_per_mtok
    )
    return Spend(input_tokens, output_tokens, cost)


#: The least output a call is sent with: with less left, the answer would be cut before it
#: could say anything useful, so the call is not made and the run ends `budget`.
MIN_OUTPUT_TOKENS = 16


def request_size(
    instructions: str,
    messages: Sequence[Any],
    tools: Sequence[ToolSpec] = (),
    schema: Mapping[str, Any] | None = None,
) -> int:
    """A model request's size: its text, messages and tools as ASCII-escaped JSON, at
    least the UTF-8 bytes of every text a provider tokenizes (`most_input_tokens`)."""
    # The length of json.dumps([instructions, messages]), from each part's own length:
    # a run's messages are the same objects step after step, so each is encoded once
    # (encoding the whole history on every step made a long run's steps grow).
    # '["<instructions>", [m1, m2]]': two pairs of brackets, a ", " after the instructions
    # and between messages.
    parts = [message_json_size(m) for m in messages]
    size = len(json.dumps(instructions)) + sum(parts) + 2 * max(0, len(parts) - 1) + 6
    size += sum(_schema_size(t.input_schema) + _tool_text_size(t) for t in tools)
    # A typed agent's output schema goes too (a response format), and is billed as input.
    return size + (0 if schema is None else _schema_size(schema))


#: A message's JSON length, once per message (a run's messages are kept as they were
#: made, step after step).
message_json_size = by_identity(lambda message: len(json.dumps(message, default=str)), size=2048)


def _tool_text_size(tool: ToolSpec) -> int:
    return len(json.dumps(tool.name)) + len(json.dumps(tool.description))


#: An input schema's JSON length, once per schema object.
_schema_size = by_identity(lambda schema: len(json.dumps(schema)))


@dataclass(frozen=True)
class Ceiling:
    """What one model call may use: its output cap and the budget that sets it
    (`by`: "token" or "cost"); `room` False when less than `MIN_OUTPUT_TOKENS` is left
    after the input, and the call is not made."""

    output_tokens: int
    by: str
    room: bool = True


def output_ceiling(
    limits: Limits,
    usage: Usage,
    *,
    input_tokens: int,
    input_per_mtok: float,
    output_per_mtok: float,
    margin: float = 0.0,
) -> Ceiling:
    """The output cap of a call whose input is at most `input_tokens`, such that the run's
    usage after it stays within `limits` for tokens and cost, counted as usage is (cost
    rounded to `COST_DIGITS`), less `margin` of cost (`COST_UNIT` when another charge is
    added beside this one: the two, rounded in either order, may differ by a unit)."""
    tokens = limits.max_tokens - usage.tokens - input_tokens
    ceiling = Ceiling(tokens, "token")
    prices = {"input_per_mtok": input_per_mtok, "output_per_mtok": output_per_mtok}
    if _over(limits, usage, input_tokens, 0, margin, **prices):
        return Ceiling(0, "cost", room=False)
    if output_per_mtok > 0:
        input_cost = model_cost(input_tokens, 0, input_per_mtok=input_per_mtok, output_per_mtok=0)
        left = limits.max_cost_usd - usage.cost_usd - input_cost
        affordable = max(0, int(left * 1_000_000 / output_per_mtok) + 1)
        # The float division may be one off either way: step down to the exact bound.
        while affordable > 0 and _over(limits, usage, input_tokens, affordable, margin, **prices):
            affordable -= 1
        if affordable < tokens:
            ceiling = Ceiling(affordable, "cost")
    return replace(ceiling, room=ceiling.output_tokens >= MIN_OUTPUT_TOKENS)


def _over(
    limits: Limits, usage: Usage, input_tokens: int, output: int, margin: float, **prices: float
) -> bool:
    cost = model_cost(input_tokens, output, **prices)  # as a charge is (`spend_of`)
    return add_cost(usage.cost_usd, cost) > limits.max_cost_usd - margin


def overshoot(limits: Limits, usage: Usage) -> dict[str, Any] | None:
    """How far `usage` is past its token and cost budgets (None: within both): what a
    provider that ignored its call's cap, or billed more input than any request of its
    size could hold, made the run spend beyond them."""
    over: dict[str, Any] = {}
    if usage.tokens > limits.max_tokens:
        over["tokens"] = usage.tokens - limits.max_tokens
    if usage.cost_usd > limits.max_cost_usd:
        over["cost_usd"] = round(usage.cost_usd - limits.max_cost_usd, COST_DIGITS)
    return over or None


def deadline_at(created_at: datetime, limits: Limits) -> datetime:
    return created_at + timedelta(seconds=limits.deadline_s)


def seconds_left(now: datetime, deadline: datetime) -> float:
    return max(0.0, (deadline - now).total_seconds())


def spent_budget(limits: Limits, usage: Usage) -> str | None:
    """The budget used up ("token", "cost", "tool-call"), or None. Tokens or cost at their
    limit leave nothing for another model call, so the run cannot take another step.
    Reaching max_tool_calls exactly is not exhaustion: the model may still answer; a turn
    whose calls would go above it ends the run (see `tool_calls_that_fit`)."""
    if usage.tokens >= limits.max_tokens:
        return "token"
    if usage.cost_usd >= limits.max_cost_usd:
        return "cost"
    if usage.tool_calls > limits.max_tool_calls:
        return "tool-call"
    return None


def exhausted(limits: Limits, usage: Usage) -> bool:
    return spent_budget(limits, usage) is not None


def stop_reason(
    *,
    limits: Limits,
    usage: Usage,
    now: datetime,
    deadline: datetime,
    cancel_requested: bool,
) -> TerminationReason | None:
    """What ends the run before its next model call, checked in the SPEC's order."""
    if cancel_requested:
        return TerminationReason.CANCELLED
    if now >= deadline:
        return TerminationReason.DEADLINE
    if exhausted(limits, usage):
        return TerminationReason.BUDGET
    if usage.steps >= limits.max_steps:
        return TerminationReason.MAX_STEPS
    return None


def tool_calls_that_fit(limits: Limits, usage: Usage, wanted: int) -> int:
    """How many of `wanted` accepted calls may still execute under max_tool_calls."""
    return max(0, min(wanted, limits.max_tool_calls - usage.tool_calls))
