"""The pure rules of approvals: what the content hash covers, when a preview expires, who
may approve, and the preview's status as of a given time."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from app.domain.approvals.previews import PreviewBody, content_hash, expires_at, self_approval
from app.domain.lifecycle.records import Preview
from app.domain.lifecycle.status import (
    PREVIEW_TRANSITIONS,
    InvalidTransition,
    PreviewStatus,
    check_preview_transition,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BODY = PreviewBody("Move Kafka", {"ring": {"before": "trial"}}, 0.0, "4", None)
ARGS = {"technology_id": "t1", "ring": "adopt"}


@pytest.mark.parametrize(
    "changed",
    [
        ("other_tool", ARGS, BODY),
        ("move", {**ARGS, "ring": "hold"}, BODY),
        ("move", ARGS, replace(BODY, summary="Move Kafka!")),
        ("move", ARGS, replace(BODY, impact={"ring": {"before": "assess"}})),
        ("move", ARGS, replace(BODY, cost_usd=0.5)),
        ("move", ARGS, replace(BODY, resource_version="5")),
    ],
)
def test_the_content_hash_covers_everything_an_approver_sees(changed: tuple) -> None:  # type: ignore[type-arg]
    base = content_hash("move", ARGS, BODY)
    assert base.startswith("sha256:")
    assert content_hash(*changed) != base
    assert content_hash("move", dict(reversed(list(ARGS.items()))), BODY) == base


def test_a_preview_expires_at_the_earliest_of_ttl_tool_and_deadline() -> None:
    far = NOW + timedelta(hours=1)
    assert expires_at(NOW, ttl_s=900, expires_in_s=None, deadline=far) == NOW + timedelta(
        seconds=900
    )
    assert expires_at(NOW, ttl_s=900, expires_in_s=60, deadline=far) == NOW + timedelta(seconds=60)
    soon = NOW + timedelta(seconds=30)
    assert expires_at(NOW, ttl_s=900, expires_in_s=60, deadline=soon) == soon


def test_self_approval_is_refused_unless_allowed() -> None:
    assert self_approval("svc", "svc", allowed=False) is True
    assert self_approval("svc", "svc", allowed=True) is False
    assert self_approval("alice", "svc", allowed=False) is False


def test_an_open_preview_reads_expired_once_its_time_is_past() -> None:
    preview = Preview(
        tenant_id="acme",
        id="prv_1",
        run_id="run_1",
        call_row_id="call_1",
        call_id="m1",
        step=1,
        tool="move",
        arguments=ARGS,
        args_hash="sha256:a",
        summary="Move Kafka",
        impact={},
        cost_usd=0.0,
        resource_version="4",
        content_hash="sha256:c",
        status=PreviewStatus.PENDING,
        requested_by="svc",
        expires_at=NOW,
        created_at=NOW - timedelta(minutes=5),
    )
    assert preview.status_at(NOW - timedelta(seconds=1)) is PreviewStatus.PENDING
    assert preview.status_at(NOW) is PreviewStatus.EXPIRED
    approved = replace(preview, status=PreviewStatus.APPROVED)
    assert approved.status_at(NOW) is PreviewStatus.EXPIRED
    committed = replace(preview, status=PreviewStatus.COMMITTED)
    assert committed.status_at(NOW + timedelta(days=1)) is PreviewStatus.COMMITTED


def test_decided_previews_are_final() -> None:
    for status in (PreviewStatus.REJECTED, PreviewStatus.EXPIRED, PreviewStatus.COMMITTED):
        assert PREVIEW_TRANSITIONS[status] == frozenset()
        with pytest.raises(InvalidTransition):
            check_preview_transition(status, PreviewStatus.APPROVED)
    assert check_preview_transition(PreviewStatus.APPROVED, PreviewStatus.SUPERSEDED)
    with pytest.raises(InvalidTransition):
        check_preview_transition(PreviewStatus.PENDING, PreviewStatus.COMMITTED)
