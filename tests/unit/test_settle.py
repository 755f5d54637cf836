"""The one settle rule: what a call becomes for each outcome, and its open preview."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from app.domain.errors import ErrorValue
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.records import Call, Preview
from app.domain.lifecycle.settle import UNKNOWN, Found, Outcome, settle
from app.domain.lifecycle.status import (
    CallStatus,
    InvalidTransition,
    PreviewStatus,
    TerminationReason,
)
from app.domain.lifecycle.steps import finish
from app.engine.steps.finish import finish_change

NOW = datetime(2026, 12, 1, tzinfo=UTC)
PREVIEW = Preview(
    tenant_id="acme",
    id="prv_1",
    run_id="run_1",
    call_row_id="call_1",
    call_id="c1",
    step=1,
    tool="ticket",
    arguments={},
    args_hash="sha256:x",
    summary="s",
    impact={},
    cost_usd=0.0,
    resource_version=None,
    content_hash="sha256:y",
    status=PreviewStatus.APPROVED,
    requested_by="svc",
    expires_at=NOW,
    created_at=NOW,
)
CLAIMED = replace(PREVIEW, commit_key="k1")
ERROR = ErrorValue("boom", "it failed")


@pytest.mark.parametrize(
    ("found", "outcome", "status", "event"),
    [
        (
            Found(CallStatus.EXECUTING, 1),
            Outcome.SUCCEEDED,
            CallStatus.SUCCEEDED,
            EventType.CALL_SUCCEEDED,
        ),
        (
            Found(CallStatus.EXECUTING, 1),
            Outcome.WITHHELD,
            CallStatus.SUCCEEDED,
            EventType.CALL_SUCCEEDED,
        ),
        (Found(CallStatus.EXECUTING, 1), Outcome.FAILED, CallStatus.FAILED, EventType.CALL_FAILED),
        (Found(CallStatus.EXECUTING, 1), Outcome.UNKNOWN, CallStatus.FAILED, EventType.CALL_FAILED),
        (
            Found(CallStatus.EXECUTING, 1),
            Outcome.CANCELLED,
            CallStatus.CANCELLED,
            EventType.CALL_CANCELLED,
        ),
        (
            Found(CallStatus.PENDING),
            Outcome.REFUSED,
            CallStatus.CANCELLED,
            EventType.CALL_CANCELLED,
        ),
        (Found(CallStatus.APPROVED), Outcome.EXPIRED, CallStatus.REJECTED, EventType.CALL_REJECTED),
        (
            Found(CallStatus.AWAITING_APPROVAL),
            Outcome.REJECTED,
            CallStatus.REJECTED,
            EventType.CALL_REJECTED_BY_APPROVER,
        ),
    ],
)
def test_each_outcome_gives_its_call_status_and_event(
    found: Found, outcome: Outcome, status: CallStatus, event: EventType
) -> None:
    settled = settle(found, outcome, error=ERROR)
    assert (settled.status, settled.event, settled.preview) == (status, event, None)


def test_an_unknown_outcome_always_ends_the_run_with_its_own_error() -> None:
    settled = settle(Found(CallStatus.EXECUTING, 1), Outcome.UNKNOWN, error=ERROR)
    assert (settled.error, settled.ends_run) == (UNKNOWN, True)
    failed = settle(Found(CallStatus.EXECUTING, 1), Outcome.FAILED, error=ERROR)
    assert (failed.error, failed.ends_run) == (ERROR, False)


@pytest.mark.parametrize(
    ("found", "outcome", "preview", "after"),
    [
        # committed only when a commit was claimed and the request may have left
        (Found(CallStatus.EXECUTING, 1), Outcome.SUCCEEDED, CLAIMED, PreviewStatus.COMMITTED),
        (Found(CallStatus.EXECUTING, 1), Outcome.WITHHELD, CLAIMED, PreviewStatus.COMMITTED),
        (Found(CallStatus.EXECUTING, 1), Outcome.UNKNOWN, CLAIMED, PreviewStatus.COMMITTED),
        (Found(CallStatus.EXECUTING, 1), Outcome.FAILED, CLAIMED, PreviewStatus.COMMITTED),
        # claimed, but nothing left: cancelled first, refused, stopped by a gate
        (Found(CallStatus.EXECUTING, 1), Outcome.CANCELLED, CLAIMED, PreviewStatus.EXPIRED),
        (Found(CallStatus.APPROVED), Outcome.REFUSED, CLAIMED, PreviewStatus.EXPIRED),
        (Found(CallStatus.APPROVED), Outcome.FAILED, CLAIMED, PreviewStatus.EXPIRED),
        (Found(CallStatus.APPROVED), Outcome.CANCELLED, CLAIMED, PreviewStatus.EXPIRED),
        # never claimed: nothing was done under it
        (Found(CallStatus.APPROVED), Outcome.FAILED, PREVIEW, PreviewStatus.EXPIRED),
        (Found(CallStatus.APPROVED), Outcome.EXPIRED, PREVIEW, PreviewStatus.EXPIRED),
        (
            Found(CallStatus.AWAITING_APPROVAL),
            Outcome.REJECTED,
            replace(PREVIEW, status=PreviewStatus.PENDING),
            PreviewStatus.REJECTED,
        ),
        (
            Found(CallStatus.AWAITING_APPROVAL),
            Outcome.CANCELLED,
            replace(PREVIEW, status=PreviewStatus.PENDING),
            PreviewStatus.EXPIRED,
        ),
    ],
)
def test_an_open_preview_follows_its_call(
    found: Found, outcome: Outcome, preview: Preview, after: PreviewStatus
) -> None:
    assert settle(found, outcome, preview=preview, error=ERROR).preview is after


def test_a_settled_preview_is_left_as_it_is() -> None:
    done = replace(CLAIMED, status=PreviewStatus.COMMITTED)
    assert settle(Found(CallStatus.EXECUTING, 1), Outcome.SUCCEEDED, preview=done).preview is None


def test_an_edge_the_tables_lack_is_refused() -> None:
    with pytest.raises(InvalidTransition):
        settle(Found(CallStatus.PENDING), Outcome.SUCCEEDED)
    with pytest.raises(InvalidTransition):
        settle(Found(CallStatus.SUCCEEDED, 1), Outcome.FAILED, error=ERROR)
    with pytest.raises(InvalidTransition):  # a pending preview is never committed
        settle(
            Found(CallStatus.EXECUTING, 1),
            Outcome.SUCCEEDED,
            preview=replace(CLAIMED, status=PreviewStatus.PENDING),
        )


def test_a_finishing_run_commits_the_preview_of_a_call_in_flight() -> None:
    def call(status: CallStatus, attempts: int) -> Call:
        return Call(
            tenant_id="acme",
            id="call_1",
            run_id="run_1",
            step=1,
            position=0,
            call_id="c1",
            tool="lookup",
            status=status,
            arguments={},
            args_hash="sha256:x",
            operation_id="op_1",
            created_at=NOW,
            updated_at=NOW,
            attempts=attempts,
            preview_id=CLAIMED.id,
        )

    decision = finish(TerminationReason.DEADLINE)
    for status, attempts, after in (
        (CallStatus.EXECUTING, 1, PreviewStatus.COMMITTED),  # a read in flight: it may have left
        (CallStatus.APPROVED, 1, PreviewStatus.EXPIRED),  # claimed, not yet sent again
    ):
        settled, closed, _, _ = finish_change(
            decision,
            now=NOW,
            output=None,
            calls=[call(status, attempts)],
            previews={CLAIMED.id: CLAIMED},
            side_effects=lambda _: False,
        )
        assert settled[0].status is CallStatus.CANCELLED
        assert [p.status for p in closed] == [after], status
