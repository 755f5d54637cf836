"""decide(): the next step of a run from its persisted records alone, branch by branch."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from app.domain.lifecycle.status import CallStatus, TerminationReason
from app.domain.lifecycle.steps import CallModel, CallState, ExecuteCalls, Finish, decide, finish
from app.domain.limits.budget import Limits, Usage

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DEADLINE = T0 + timedelta(seconds=120)
LIMITS = Limits(max_steps=5, deadline_s=120, max_tokens=1000, max_cost_usd=1.0, max_tool_calls=4)
SPENT = Usage(steps=5, input_tokens=1000, cost_usd=1.0, tool_calls=5)


def _decide(
    *,
    calls: Sequence[CallState] = (),
    usage: Usage = Usage(),
    now: datetime = T0,
    cancel: bool = False,
    last_step: int = 2,
) -> object:
    return decide(
        limits=LIMITS,
        usage=usage,
        now=now,
        deadline=DEADLINE,
        cancel_requested=cancel,
        last_step=last_step,
        last_calls=calls,
    )


def _failed(
    code: str | None = "boom", *, ends_run: bool = True, message: str | None = "it broke"
) -> CallState:
    return CallState(CallStatus.FAILED, error_code=code, ends_run=ends_run, message=message)


# --- finish() ---------------------------------------------------------------------------


def test_finish_defaults_code_to_reason_and_message_from_table() -> None:
    assert finish(TerminationReason.DEADLINE) == Finish(
        TerminationReason.DEADLINE, "deadline", "the run's deadline passed"
    )
    assert finish(TerminationReason.MAX_STEPS).message == (
        "the step limit was reached without a final answer"
    )


def test_finish_without_table_message_uses_the_reason_value() -> None:
    assert finish(TerminationReason.TOOL_FAILED) == Finish(
        TerminationReason.TOOL_FAILED, "tool_failed", "tool_failed"
    )


def test_finish_keeps_given_code_and_message() -> None:
    assert finish(TerminationReason.TOOL_FAILED, "timeout", "too slow") == Finish(
        TerminationReason.TOOL_FAILED, "timeout", "too slow"
    )


# --- CallState.open ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "is_open"),
    [
        (CallState(CallStatus.PENDING), True),
        (CallState(CallStatus.EXECUTING), True),
        (CallState(CallStatus.SUCCEEDED, unnumbered=True), True),
        (CallState(CallStatus.SUCCEEDED), False),
        (CallState(CallStatus.FAILED), False),
        (CallState(CallStatus.REJECTED), False),
        (CallState(CallStatus.CANCELLED), False),
    ],
)
def test_call_state_open(state: CallState, is_open: bool) -> None:
    assert state.open is is_open


# --- decide(): order of the branches ----------------------------------------------------


def test_cancel_comes_first() -> None:
    result = _decide(
        calls=[_failed(), CallState(CallStatus.PENDING)],
        usage=SPENT,
        now=DEADLINE + timedelta(seconds=1),
        cancel=True,
    )
    assert result == Finish(TerminationReason.CANCELLED, "cancelled", "the run was cancelled")


def test_deadline_beats_failed_calls_and_open_calls() -> None:
    result = _decide(calls=[_failed(), CallState(CallStatus.PENDING)], now=DEADLINE)
    assert result == Finish(TerminationReason.DEADLINE, "deadline", "the run's deadline passed")


def test_just_before_the_deadline_the_run_goes_on() -> None:
    assert _decide(now=DEADLINE - timedelta(microseconds=1)) == CallModel(3)


def test_failed_call_that_ends_run_finishes_tool_failed_with_its_code() -> None:
    calls = [
        CallState(CallStatus.SUCCEEDED),
        _failed("outcome_unknown", message="the outcome is unknown"),
        CallState(CallStatus.PENDING),
    ]
    assert _decide(calls=calls) == Finish(
        TerminationReason.TOOL_FAILED, "outcome_unknown", "the outcome is unknown"
    )


def test_first_run_ending_failure_wins() -> None:
    calls = [_failed("first", message="one"), _failed("second", message="two")]
    assert _decide(calls=calls) == Finish(TerminationReason.TOOL_FAILED, "first", "one")


def test_run_ending_failure_without_code_falls_back_to_reason() -> None:
    result = _decide(calls=[_failed(None, message=None)])
    assert result == Finish(TerminationReason.TOOL_FAILED, "tool_failed", "tool_failed")


def test_failure_that_does_not_end_the_run_goes_back_to_the_model() -> None:
    assert _decide(calls=[_failed(ends_run=False)], last_step=2) == CallModel(3)


def test_ends_run_flag_only_counts_on_failed_calls() -> None:
    calls = [CallState(CallStatus.CANCELLED, error_code="x", ends_run=True)]
    assert _decide(calls=calls) == CallModel(3)


@pytest.mark.parametrize(
    "open_call",
    [
        CallState(CallStatus.PENDING),
        CallState(CallStatus.EXECUTING),
        CallState(CallStatus.SUCCEEDED, unnumbered=True),
    ],
    ids=["pending", "executing", "unnumbered_success"],
)
def test_open_call_executes_calls_of_the_last_step(open_call: CallState) -> None:
    calls = [CallState(CallStatus.SUCCEEDED), open_call, CallState(CallStatus.REJECTED)]
    assert _decide(calls=calls, last_step=4) == ExecuteCalls(4)


def test_open_calls_are_finished_even_when_the_budget_is_spent() -> None:
    calls = [CallState(CallStatus.EXECUTING)]
    assert _decide(calls=calls, usage=SPENT, last_step=3) == ExecuteCalls(3)


def test_open_calls_beat_a_budget_cancelled_call() -> None:
    calls = [CallState(CallStatus.PENDING), CallState(CallStatus.CANCELLED, error_code="budget")]
    assert _decide(calls=calls, last_step=1) == ExecuteCalls(1)


def test_call_cancelled_for_budget_finishes_budget() -> None:
    calls = [CallState(CallStatus.SUCCEEDED), CallState(CallStatus.CANCELLED, error_code="budget")]
    assert _decide(calls=calls) == Finish(
        TerminationReason.BUDGET,
        "budget",
        "the run's budget cannot pay for all of the turn's calls",
    )


def test_call_cancelled_for_another_reason_is_not_a_budget_stop() -> None:
    calls = [CallState(CallStatus.CANCELLED, error_code="cancelled")]
    assert _decide(calls=calls) == CallModel(3)


def test_rejected_with_budget_code_is_not_a_budget_stop() -> None:
    calls = [CallState(CallStatus.REJECTED, error_code="budget")]
    assert _decide(calls=calls) == CallModel(3)


@pytest.mark.parametrize(
    "usage",
    [Usage(input_tokens=600, output_tokens=400), Usage(cost_usd=1.0), Usage(tool_calls=5)],
    ids=["tokens", "cost", "tool_calls"],
)
def test_exhausted_budget_finishes_budget(usage: Usage) -> None:
    assert _decide(usage=usage) == Finish(
        TerminationReason.BUDGET, "budget", "the run's budget is exhausted"
    )


def test_budget_beats_max_steps() -> None:
    assert _decide(usage=SPENT) == Finish(
        TerminationReason.BUDGET, "budget", "the run's budget is exhausted"
    )


def test_max_steps_finishes_max_steps() -> None:
    assert _decide(usage=Usage(steps=5), last_step=5) == Finish(
        TerminationReason.MAX_STEPS,
        "max_steps",
        "the step limit was reached without a final answer",
    )


def test_one_step_left_calls_the_model() -> None:
    assert _decide(usage=Usage(steps=4), last_step=4) == CallModel(5)


def test_otherwise_calls_the_model_for_the_next_step() -> None:
    settled = [
        CallState(CallStatus.SUCCEEDED),
        CallState(CallStatus.REJECTED, error_code="unknown_tool"),
        _failed(ends_run=False),
    ]
    assert _decide(calls=settled, last_step=2) == CallModel(3)


def test_a_new_run_calls_the_model_for_step_one() -> None:
    assert _decide(calls=[], last_step=0) == CallModel(1)


def test_decide_is_pure() -> None:
    calls = (CallState(CallStatus.SUCCEEDED),)
    assert _decide(calls=calls) == _decide(calls=calls) == CallModel(3)
