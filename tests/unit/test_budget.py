"""Limits are only ever narrowed; the pre-step checks stop a run in the SPEC's order."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.domain.lifecycle.status import TerminationReason
from app.domain.limits.budget import (
    COST_UNIT,
    MIN_OUTPUT_TOKENS,
    Ceiling,
    Limits,
    Spend,
    Usage,
    clamped,
    deadline_at,
    exhausted,
    narrow_limits,
    output_ceiling,
    overshoot,
    seconds_left,
    spend_of,
    spent_budget,
    stop_reason,
    tool_calls_that_fit,
)
from app.domain.limits.input_bound import TEMPLATE_TOKENS, most_input_tokens

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def limits(**overrides: Any) -> Limits:
    values: dict[str, Any] = {
        "max_steps": 8,
        "deadline_s": 120.0,
        "max_tokens": 1000,
        "max_cost_usd": 1.0,
        "max_tool_calls": 10,
    }
    return Limits(**{**values, **overrides})


# --- Limits / Usage -------------------------------------------------------------------


def test_limits_round_trip_through_dict() -> None:
    caps = limits()
    assert caps.as_dict() == {
        "max_steps": 8,
        "deadline_s": 120.0,
        "max_tokens": 1000,
        "max_cost_usd": 1.0,
        "max_tool_calls": 10,
    }
    assert Limits.from_dict(caps.as_dict()) == caps


def test_limits_from_dict_ignores_extra_keys_and_requires_all_fields() -> None:
    assert Limits.from_dict({**limits().as_dict(), "other": 1}) == limits()
    partial = limits().as_dict()
    del partial["max_tokens"]
    with pytest.raises(KeyError):
        Limits.from_dict(partial)


def test_usage_tokens_sum_input_and_output() -> None:
    usage = Usage(steps=2, input_tokens=11, output_tokens=7, cost_usd=0.75, tool_calls=2)
    assert usage.tokens == 18
    assert usage.as_dict() == {
        "steps": 2,
        "input_tokens": 11,
        "output_tokens": 7,
        "cost_usd": 0.75,
        "tool_calls": 2,
    }


# --- narrow_limits ----------------------------------------------------------------------


def test_narrow_limits_lowers_a_limit() -> None:
    assert narrow_limits(limits(), {"max_steps": 3}) == limits(max_steps=3)


def test_narrow_limits_never_raises_a_limit() -> None:
    assert narrow_limits(limits(), {"max_steps": 99, "max_cost_usd": 5.0}) == limits()


def test_narrow_limits_equal_value_is_kept() -> None:
    assert narrow_limits(limits(), {"max_tokens": 1000}) == limits()


def test_narrow_limits_ignores_none_values_and_none_overrides() -> None:
    assert narrow_limits(limits(), None, {"max_steps": None}, {}) == limits()


def test_narrow_limits_ignores_unknown_names() -> None:
    assert narrow_limits(limits(), {"max_widgets": 1}) == limits()


def test_narrow_limits_with_no_overrides_is_the_caps() -> None:
    assert narrow_limits(limits()) == limits()


def test_clamped_names_each_limit_asked_above_what_was_granted_with_both_values() -> None:
    asked = {"max_steps": 99, "deadline_s": 30.0, "max_tokens": 1000, "max_cost_usd": None}
    granted = narrow_limits(limits(), asked)
    assert clamped(asked, granted) == {"max_steps": {"asked": 99, "granted": 8}}


def test_nothing_is_clamped_when_every_limit_asked_was_granted() -> None:
    assert clamped({}, limits()) == {}
    assert clamped({"max_steps": 3, "max_widgets": 9}, limits(max_steps=3)) == {}


def test_narrow_limits_applies_several_overrides_in_turn() -> None:
    agent = {"max_steps": 5, "deadline_s": 60.0, "max_tokens": 5000}
    request = {"max_steps": 6, "deadline_s": 30.0, "max_tool_calls": 4}
    narrowed = narrow_limits(limits(), agent, None, request)
    assert narrowed == limits(max_steps=5, deadline_s=30.0, max_tool_calls=4)


def test_narrow_limits_later_override_cannot_undo_an_earlier_narrowing() -> None:
    narrowed = narrow_limits(limits(), {"max_steps": 2}, {"max_steps": 7})
    assert narrowed.max_steps == 2


def test_narrow_limits_does_not_change_the_caps() -> None:
    caps = limits()
    narrow_limits(caps, {"max_steps": 1})
    assert caps == limits()


# --- deadline ---------------------------------------------------------------------------


def test_deadline_at_adds_the_deadline_seconds() -> None:
    assert deadline_at(T0, limits(deadline_s=120.0)) == T0 + timedelta(seconds=120)
    assert deadline_at(T0, limits(deadline_s=0.5)) == T0 + timedelta(milliseconds=500)


def test_seconds_left_before_at_and_after_the_deadline() -> None:
    deadline = T0 + timedelta(seconds=30)
    assert seconds_left(T0, deadline) == 30.0
    assert seconds_left(T0 + timedelta(seconds=29.5), deadline) == 0.5
    assert seconds_left(deadline, deadline) == 0.0
    assert seconds_left(deadline + timedelta(seconds=5), deadline) == 0.0


# --- exhausted --------------------------------------------------------------------------


def test_fresh_usage_is_not_exhausted() -> None:
    assert not exhausted(limits(), Usage())


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (Usage(input_tokens=600, output_tokens=399), False),
        (Usage(input_tokens=600, output_tokens=400), True),
        (Usage(input_tokens=1000), True),
        (Usage(output_tokens=1500), True),
    ],
)
def test_exhausted_by_tokens_counts_input_and_output(usage: Usage, expected: bool) -> None:
    assert exhausted(limits(max_tokens=1000), usage) is expected


@pytest.mark.parametrize(("cost", "expected"), [(0.99, False), (1.0, True), (1.5, True)])
def test_exhausted_by_cost(cost: float, expected: bool) -> None:
    assert exhausted(limits(max_cost_usd=1.0), Usage(cost_usd=cost)) is expected


@pytest.mark.parametrize(("calls", "expected"), [(9, False), (10, False), (11, True)])
def test_exhausted_only_above_max_tool_calls(calls: int, expected: bool) -> None:
    assert exhausted(limits(max_tool_calls=10), Usage(tool_calls=calls)) is expected


def test_steps_do_not_count_as_budget() -> None:
    assert not exhausted(limits(max_steps=1), Usage(steps=50))


@pytest.mark.parametrize(
    ("usage", "spent"),
    [
        (Usage(input_tokens=999), None),
        (Usage(input_tokens=600, output_tokens=400), "token"),
        (Usage(cost_usd=1.0), "cost"),
        (Usage(tool_calls=11), "tool-call"),
    ],
)
def test_spent_budget_names_the_budget_used_up(usage: Usage, spent: str | None) -> None:
    bounds = limits(max_tokens=1000, max_cost_usd=1.0, max_tool_calls=10)
    assert spent_budget(bounds, usage) == spent


def test_a_spend_adds_tokens_and_cost_at_the_columns_scale() -> None:
    spend = spend_of(1_000, 500, input_per_mtok=0.1, output_per_mtok=0.2)
    assert spend == Spend(1_000, 500, 0.0002)
    total = Usage(steps=2, input_tokens=5, cost_usd=0.7).plus(Spend(cost_usd=0.1))
    assert total == Usage(steps=2, input_tokens=5, cost_usd=0.8)  # not 0.7999999999999999


# --- stop_reason ------------------------------------------------------------------------

DEADLINE = T0 + timedelta(seconds=60)
SPENT = Usage(steps=8, input_tokens=1000, cost_usd=1.0, tool_calls=11)


def _stop(
    *, usage: Usage = Usage(), now: datetime = T0, cancel: bool = False
) -> TerminationReason | None:
    return stop_reason(
        limits=limits(), usage=usage, now=now, deadline=DEADLINE, cancel_requested=cancel
    )


def test_stop_reason_none_when_nothing_is_used_up() -> None:
    assert _stop() is None
    assert _stop(usage=Usage(steps=7, input_tokens=999, cost_usd=0.99, tool_calls=9)) is None


def test_cancel_beats_everything() -> None:
    assert _stop(usage=SPENT, now=DEADLINE, cancel=True) is TerminationReason.CANCELLED
    assert _stop(cancel=True) is TerminationReason.CANCELLED


def test_deadline_beats_budget_and_steps() -> None:
    assert _stop(usage=SPENT, now=DEADLINE) is TerminationReason.DEADLINE


def test_deadline_counts_from_the_exact_instant() -> None:
    assert _stop(now=DEADLINE - timedelta(microseconds=1)) is None
    assert _stop(now=DEADLINE) is TerminationReason.DEADLINE
    assert _stop(now=DEADLINE + timedelta(hours=1)) is TerminationReason.DEADLINE


def test_budget_beats_max_steps() -> None:
    assert _stop(usage=SPENT) is TerminationReason.BUDGET


@pytest.mark.parametrize(
    "usage",
    [Usage(input_tokens=1000), Usage(cost_usd=1.0), Usage(tool_calls=11)],
    ids=["tokens", "cost", "tool_calls"],
)
def test_each_budget_stops_with_budget(usage: Usage) -> None:
    assert _stop(usage=usage) is TerminationReason.BUDGET


def test_max_steps_when_step_limit_reached() -> None:
    assert _stop(usage=Usage(steps=7)) is None
    assert _stop(usage=Usage(steps=8)) is TerminationReason.MAX_STEPS
    assert _stop(usage=Usage(steps=9)) is TerminationReason.MAX_STEPS


# --- tool_calls_that_fit ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("used", "wanted", "fit"),
    [
        (0, 3, 3),
        (0, 10, 10),
        (0, 11, 10),
        (7, 3, 3),
        (7, 5, 3),
        (9, 2, 1),
        (10, 1, 0),
        (12, 4, 0),
        (3, 0, 0),
    ],
)
def test_tool_calls_that_fit(used: int, wanted: int, fit: int) -> None:
    assert tool_calls_that_fit(limits(max_tool_calls=10), Usage(tool_calls=used), wanted) == fit


def test_a_calls_output_cap_is_what_the_token_budget_leaves_after_its_input() -> None:
    used = Usage(steps=1, input_tokens=600, output_tokens=100)
    tight = limits(max_tokens=1000)
    ceiling = output_ceiling(tight, used, input_tokens=200, input_per_mtok=0, output_per_mtok=0)
    assert ceiling == Ceiling(100, "token", room=True)
    # Less than MIN_OUTPUT_TOKENS left after the input: the call is not made.
    short = output_ceiling(
        tight, used, input_tokens=300 - MIN_OUTPUT_TOKENS + 1, input_per_mtok=0, output_per_mtok=0
    )
    assert short.room is False and short.by == "token"
    assert most_input_tokens(800) == 800 + TEMPLATE_TOKENS  # a token is at least one byte


def test_the_cost_budget_caps_the_output_to_the_last_affordable_token() -> None:
    # $0.01 left after $0.002 of input at $2/Mtok; output at $10/Mtok: 1,000 tokens.
    used = Usage(steps=1, cost_usd=0.988)
    ceiling = output_ceiling(
        limits(max_tokens=10**6), used, input_tokens=1000, input_per_mtok=2, output_per_mtok=10
    )
    assert ceiling == Ceiling(1000, "cost", room=True)
    after = used.plus(spend_of(1000, 1000, input_per_mtok=2, output_per_mtok=10))
    assert after.cost_usd <= 1.0 and overshoot(limits(max_tokens=10**6), after) is None
    one_more = used.plus(spend_of(1000, 1001, input_per_mtok=2, output_per_mtok=10))
    assert overshoot(limits(max_tokens=10**6), one_more) == {"cost_usd": 1e-05}
    # The input alone costs more than is left.
    broke = output_ceiling(
        limits(), Usage(cost_usd=0.9999), input_tokens=1000, input_per_mtok=200, output_per_mtok=1
    )
    assert broke.room is False and broke.by == "cost"


@pytest.mark.parametrize("seed", range(5))
def test_a_call_within_its_cap_never_takes_usage_past_the_limits(seed: int) -> None:
    """Whatever the prices and limits (to the column's last digit), and with a classifier's
    charge owed beside the call's, added to the run in either order."""
    rng = random.Random(seed)
    for _ in range(3000):
        cap = limits(max_tokens=rng.randint(1, 50_000), max_cost_usd=round(rng.uniform(1e-6, 3), 8))
        used = Usage(
            input_tokens=rng.randint(0, cap.max_tokens),
            cost_usd=round(rng.uniform(0, cap.max_cost_usd), 8),
        )
        prices = {
            "input_per_mtok": rng.choice([0, 0.15, 3, round(rng.uniform(0, 90), 3)]),
            "output_per_mtok": rng.choice([0, 0.6, 15, round(rng.uniform(0, 300), 3)]),
        }
        owed = spend_of(rng.randint(0, 200), rng.randint(0, 20), **prices)
        billed_input = rng.randint(0, 5000)
        ceiling = output_ceiling(
            cap, used.plus(owed), input_tokens=billed_input, margin=COST_UNIT, **prices
        )
        if not ceiling.room:
            continue
        output = rng.choice([ceiling.output_tokens, rng.randint(0, ceiling.output_tokens)])
        spend = spend_of(billed_input, output, **prices)
        for after in (used.plus(owed).plus(spend), used.plus(spend).plus(owed)):
            assert overshoot(cap, after) is None, (cap, used, owed, billed_input, output)
