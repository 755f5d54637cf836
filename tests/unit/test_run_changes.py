"""A run's changes outside a step are typed values that refuse a status their moves do not
make: a creation is queued, or running when leased to its creator; a cancel request and
the sweep take their guards and what they write from the moves."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from app.domain.lifecycle import moves
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.records import Run, RunLease
from app.domain.lifecycle.run_changes import CancelRequest, Creation, Due, Sweep
from app.domain.lifecycle.status import InvalidTransition, RunStatus
from app.domain.limits.budget import Limits
from tests.support.run_records import run_record

AT = datetime(2026, 1, 1, tzinfo=UTC)
QUEUED = run_record(
    tenant_id="t",
    id="run_1",
    root_run_id="run_1",
    status=RunStatus.QUEUED,
    limits=Limits(max_steps=5, deadline_s=60, max_tokens=1000, max_cost_usd=1.0, max_tool_calls=5),
    created_by="user",
    deadline_at=AT,
    created_at=AT,
    updated_at=AT,
)
LEASED = replace(QUEUED, status=RunStatus.RUNNING, lease=RunLease("p", "tok"))
CREATED = ((EventType.RUN_CREATED, {}),)


def test_a_run_is_created_queued_or_leased_running() -> None:
    assert Creation(QUEUED, CREATED).run.status is RunStatus.QUEUED
    assert Creation(LEASED, CREATED, lease_s=30).lease_s == 30


@pytest.mark.parametrize(
    ("record", "lease_s"),
    [
        (replace(QUEUED, status=RunStatus.RUNNING), None),  # running, nobody holds it
        (replace(QUEUED, status=RunStatus.AWAITING_APPROVAL), None),
        (replace(QUEUED, status=RunStatus.FINISHED), None),
        (replace(LEASED, status=RunStatus.FINISHED), 30.0),
        (replace(LEASED, status=RunStatus.QUEUED), 30.0),  # leased but still queued
    ],
)
def test_a_creation_refuses_a_status_no_move_makes(record: Run, lease_s: float | None) -> None:
    with pytest.raises(InvalidTransition):
        Creation(record, CREATED, lease_s=lease_s)


def test_a_creation_is_leased_exactly_when_its_run_has_a_token() -> None:
    with pytest.raises(ValueError):
        Creation(replace(LEASED, lease=None), CREATED, lease_s=30)
    with pytest.raises(ValueError):
        Creation(replace(QUEUED, lease=RunLease("p", "tok")), CREATED)


def test_a_cancel_request_is_taken_by_unfinished_runs_and_wakes_a_parked_one() -> None:
    request = CancelRequest("t", "run_1", "user", AT)
    assert request.guard == moves.RUN_UNFINISHED
    assert RunStatus.FINISHED not in request.guard
    assert request.wake.sources == {RunStatus.AWAITING_APPROVAL}
    assert request.wake.target == RunStatus.RUNNING
    assert request.events == ((EventType.RUN_CANCEL_REQUESTED, {"by": "user"}),)


def test_the_sweep_wakes_parked_runs_for_every_reason_due() -> None:
    sweep = Sweep(at=AT, limit=5)
    assert set(sweep.due) == set(Due)
    assert sweep.move is moves.RUN_WAKE
