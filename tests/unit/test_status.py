"""The run and call transition tables, checked pair by pair against a hand-written list."""

from __future__ import annotations

from itertools import product

import pytest

from app.domain.status import (
    ACTIVE_RUN_STATUSES,
    CALL_TRANSITIONS,
    RUN_TRANSITIONS,
    SETTLED_CALL_STATUSES,
    CallStatus,
    InvalidTransition,
    RunStatus,
    check_call_transition,
    check_run_transition,
)

R = RunStatus
C = CallStatus

# Written out by hand from SPEC §2: never derived from the tables under test.
ALLOWED_RUN: frozenset[tuple[RunStatus, RunStatus]] = frozenset(
    {
        (R.QUEUED, R.RUNNING),
        (R.QUEUED, R.FINISHED),
        (R.RUNNING, R.RUNNING),
        (R.RUNNING, R.AWAITING_APPROVAL),
        (R.RUNNING, R.FINISHED),
        (R.AWAITING_APPROVAL, R.RUNNING),
        (R.AWAITING_APPROVAL, R.FINISHED),
    }
)

ALLOWED_CALL: frozenset[tuple[CallStatus, CallStatus]] = frozenset(
    {
        (C.PENDING, C.EXECUTING),
        (C.PENDING, C.REJECTED),
        (C.PENDING, C.AWAITING_APPROVAL),
        (C.PENDING, C.CANCELLED),
        (C.PENDING, C.FAILED),  # it cannot run at all (its tool left the config)
        (C.AWAITING_APPROVAL, C.APPROVED),
        (C.AWAITING_APPROVAL, C.REJECTED),
        (C.AWAITING_APPROVAL, C.CANCELLED),
        (C.AWAITING_APPROVAL, C.FAILED),  # its tool left the config while it waited
        (C.APPROVED, C.EXECUTING),
        (C.APPROVED, C.REJECTED),  # its preview expired before the commit
        (C.APPROVED, C.CANCELLED),
        (C.APPROVED, C.FAILED),
        (C.EXECUTING, C.EXECUTING),
        (C.EXECUTING, C.SUCCEEDED),
        (C.EXECUTING, C.FAILED),
        (C.EXECUTING, C.CANCELLED),
        (C.EXECUTING, C.AWAITING_APPROVAL),  # version conflict: a new preview
    }
)

RUN_PAIRS = list(product(RunStatus, RunStatus))
CALL_PAIRS = list(product(CallStatus, CallStatus))


def _pair_id(pair: tuple[object, object]) -> str:
    return f"{pair[0]}->{pair[1]}"


@pytest.mark.parametrize(("current", "target"), RUN_PAIRS, ids=[_pair_id(p) for p in RUN_PAIRS])
def test_run_transition_allowed_exactly_as_listed(current: RunStatus, target: RunStatus) -> None:
    if (current, target) in ALLOWED_RUN:
        assert check_run_transition(current, target) is target
    else:
        with pytest.raises(InvalidTransition) as info:
            check_run_transition(current, target)
        assert info.value.kind == "run"
        assert info.value.current == current
        assert info.value.target == target
        assert f"{current} -> {target}" in str(info.value)


@pytest.mark.parametrize(("current", "target"), CALL_PAIRS, ids=[_pair_id(p) for p in CALL_PAIRS])
def test_call_transition_allowed_exactly_as_listed(current: CallStatus, target: CallStatus) -> None:
    if (current, target) in ALLOWED_CALL:
        assert check_call_transition(current, target) is target
    else:
        with pytest.raises(InvalidTransition) as info:
            check_call_transition(current, target)
        assert info.value.kind == "call"
        assert info.value.current == current
        assert info.value.target == target
        assert f"{current} -> {target}" in str(info.value)


def test_expected_sets_cover_only_real_statuses() -> None:
    # Guards the hand-written lists themselves against typos after an enum change.
    assert all(pair in RUN_PAIRS for pair in ALLOWED_RUN)
    assert all(pair in CALL_PAIRS for pair in ALLOWED_CALL)
    assert len(RUN_PAIRS) == 16
    assert len(CALL_PAIRS) == 64


def test_every_status_has_a_table_row() -> None:
    assert set(RUN_TRANSITIONS) == set(RunStatus)
    assert set(CALL_TRANSITIONS) == set(CallStatus)


def test_finished_run_has_no_successors() -> None:
    assert RUN_TRANSITIONS[R.FINISHED] == frozenset()
    for target in RunStatus:
        with pytest.raises(InvalidTransition):
            check_run_transition(R.FINISHED, target)


def test_every_non_finished_run_can_finish() -> None:
    for current in RunStatus:
        if current is not R.FINISHED:
            assert check_run_transition(current, R.FINISHED) is R.FINISHED


@pytest.mark.parametrize("terminal", [C.REJECTED, C.SUCCEEDED, C.FAILED, C.CANCELLED])
def test_terminal_call_status_has_no_successors(terminal: CallStatus) -> None:
    assert CALL_TRANSITIONS[terminal] == frozenset()
    for target in CallStatus:
        with pytest.raises(InvalidTransition):
            check_call_transition(terminal, target)


def test_settled_call_statuses_are_exactly_those_without_successors() -> None:
    without_successors = {s for s in CallStatus if not CALL_TRANSITIONS[s]}
    assert without_successors == SETTLED_CALL_STATUSES
    assert {C.REJECTED, C.SUCCEEDED, C.FAILED, C.CANCELLED} == SETTLED_CALL_STATUSES


def test_active_run_statuses() -> None:
    assert {R.QUEUED, R.RUNNING} == ACTIVE_RUN_STATUSES


def test_status_values_are_lower_case_strings() -> None:
    assert [s.value for s in RunStatus] == ["queued", "running", "awaiting_approval", "finished"]
    for status in [*RunStatus, *CallStatus]:
        assert status.value == status.value.lower()
        assert status == status.value


def test_check_accepts_plain_stored_strings() -> None:
    # Rows read from the database carry plain strings; StrEnum keys hash like their values.
    assert check_run_transition("queued", "running") == R.RUNNING  # type: ignore[arg-type]
    assert check_call_transition("executing", "failed") == C.FAILED  # type: ignore[arg-type]
    with pytest.raises(InvalidTransition):
        check_run_transition("finished", "running")  # type: ignore[arg-type]
