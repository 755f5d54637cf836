"""What a child may be granted of its parent (SPEC §3.5), and what a parent's own steps
may still spend once it holds grants for its children."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from app.domain.limits.budget import Limits
from app.domain.limits.lineage import NoRoom, grant, reservation
from tests.support.run_records import LIMITS, NOW
from tests.support.run_records import run_record as parent


def test_a_grant_is_clamped_to_what_the_parent_has_neither_spent_nor_reserved() -> None:
    busy = parent(
        input_tokens=100,
        output_tokens=10,
        children_input_tokens=40,
        reserved_tokens=300,
        cost_usd=0.25,
        reserved_cost_usd=0.5,
        tool_calls=2,
        children_tool_calls=1,
        reserved_tool_calls=3,
    )
    granted = grant(LIMITS, busy, NOW)
    assert isinstance(granted, Limits)
    assert granted.max_tokens == 1000 - 150 - 300
    assert granted.max_cost_usd == 0.25
    assert granted.max_tool_calls == 10 - 3 - 3
    assert granted.deadline_s == 100  # never past the parent's deadline
    assert granted.max_steps == 8  # steps are not shared
    assert reservation(granted).tokens == granted.max_tokens


def test_a_smaller_ask_is_kept_and_nothing_left_is_refused_by_name() -> None:
    small = replace(LIMITS, max_tokens=50, max_cost_usd=0.1, max_tool_calls=1)
    assert grant(small, parent(), NOW) == replace(small, deadline_s=100)
    full = parent(reserved_tool_calls=10)
    refused = grant(LIMITS, full, NOW)
    assert refused == NoRoom("max_tool_calls", 0)
    assert "no max_tool_calls left" in refused.message
    late = grant(LIMITS, parent(), NOW + timedelta(seconds=101))
    assert isinstance(late, NoRoom) and late.limit == "deadline_s"


def test_a_parents_own_limits_leave_out_its_childrens_share() -> None:
    held = parent(reserved_tokens=300, children_input_tokens=100, reserved_tool_calls=4)
    own = held.own_limits
    assert own.max_tokens == 1000 - 300 - 100
    assert own.max_tool_calls == 10 - 4
    assert own.max_steps == 8
    assert held.total_usage.input_tokens == 100 and held.usage.input_tokens == 0


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"input_tokens": 40, "cost_usd": 0.123457, "tool_calls": 3},
        {"children_output_tokens": 7},
        {"children_cost_usd": 0.25},
        {"children_tool_calls": 1},
        {"reserved_cost_usd": 0.1},
        {"reserved_tokens": 5, "cost_usd": 0.5},
    ],
)
def test_a_runs_own_limits_are_what_the_general_rule_gives(fields: dict[str, object]) -> None:
    from app.domain.limits.budget import own_limits

    run = parent(**fields)
    assert run.own_limits == own_limits(run.limits, run.reserved, run.total_usage, run.usage)
