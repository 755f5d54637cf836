"""The run and call transition tables, checked pair by pair against a hand-written list;
and `move`, which declares a statement's status change, refusing an edge the tables lack
(every move is declared at import, so a move outside its table fails the import)."""

from __future__ import annotations

from itertools import product

import pytest

from app.domain.lifecycle.status import (
    ACTIVE_RUN_STATUSES,
    CALL_TRANSITIONS,
    RUN_TRANSITIONS,
    SETTLED_CALL_STATUSES,
    CallStatus,
    InvalidTransition,
    RunStatus,
    move,
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
        (C.AWAITING_APPROVAL, C.AWAITING_APPROVAL),  # revised: a new preview
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


def _edges(table: dict) -> set[tuple[object, object]]:
    return {(current, target) for current, targets in table.items() for target in targets}


def test_run_table_is_exactly_as_listed() -> None:
    assert _edges(RUN_TRANSITIONS) == ALLOWED_RUN


def test_call_table_is_exactly_as_listed() -> None:
    assert _edges(CALL_TRANSITIONS) == ALLOWED_CALL


REFUSED = [("run", p) for p in RUN_PAIRS if p not in ALLOWED_RUN] + [
    ("call", p) for p in CALL_PAIRS if p not in ALLOWED_CALL
]


@pytest.mark.parametrize(
    ("kind", "pair"), REFUSED, ids=[f"{kind}:{_pair_id(pair)}" for kind, pair in REFUSED]
)
def test_a_move_outside_the_table_is_refused(kind: str, pair: tuple) -> None:
    current, target = pair
    with pytest.raises(InvalidTransition) as info:
        move(kind, "outside-the-table", [current], [target])
    assert info.value.kind == kind
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


def test_every_non_finished_run_can_finish() -> None:
    for current in RunStatus:
        if current is not R.FINISHED:
            assert R.FINISHED in RUN_TRANSITIONS[current]


@pytest.mark.parametrize("terminal", [C.REJECTED, C.SUCCEEDED, C.FAILED, C.CANCELLED])
def test_terminal_call_status_has_no_successors(terminal: CallStatus) -> None:
    assert CALL_TRANSITIONS[terminal] == frozenset()


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


def test_tables_answer_plain_stored_strings() -> None:
    # Rows read from the database carry plain strings; StrEnum keys hash like their values.
    assert "running" in RUN_TRANSITIONS["queued"]  # type: ignore[index]
    assert "failed" in CALL_TRANSITIONS["executing"]  # type: ignore[index]
    assert "running" not in RUN_TRANSITIONS["finished"]  # type: ignore[index]
