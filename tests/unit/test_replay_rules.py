"""What a replay compares and what it plays: the normalization of a run's transitions, the
first difference, the decision made again on a preview, the script rebuilt from a run's
records, and the config a replay runs with."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from app.domain.forensics.replay import (
    Decision,
    decision_for,
    first_difference,
    stable_data,
    transitions,
)
from app.domain.forensics.replay_script import NotRecorded, rebuild_script
from app.domain.lifecycle.records import Call, Turn
from app.domain.lifecycle.status import CallStatus, PreviewStatus
from app.replay_cli import replay_config, report

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def timeline(*events: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"seq": n, "type": t, "data": d} for n, (t, d) in enumerate(events, 1)]


def call_event(kind: str, call_id: str, **data: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"step": 1, "call_id": call_id, "tool": "search", **data}


def test_ids_and_times_are_left_out_at_any_depth() -> None:
    data = {
        "preview_id": "prv_1",
        "content_hash": "sha256:x",
        "expires_at": "2026-01-01T00:00:00Z",
        "error": {"code": "x", "operation_id": "op_1"},
        "items": [{"observed_at": "t", "v": 1}],
    }
    assert stable_data(data) == {
        "content_hash": "sha256:x",
        "error": {"code": "x"},
        "items": [{"v": 1}],
    }


def test_process_events_are_left_out_and_seqs_are_kept() -> None:
    kept = transitions(
        timeline(
            ("run.created", {"agent": "a"}),
            ("run.claimed", {"after_step": 0}),
            ("step.failed", {"failures": 1}),
            ("run.finished", {"termination_reason": "final", "error": None}),
        )
    )
    assert [(t.seq, t.type) for t in kept] == [(1, "run.created"), (4, "run.finished")]


def test_concurrent_calls_compare_in_proposal_order_whatever_order_they_finished_in() -> None:
    proposed = [call_event("call.proposed", "a"), call_event("call.proposed", "b")]
    one = timeline(
        *proposed,
        call_event("call.started", "a", attempt=1),
        call_event("call.started", "b", attempt=1),
        call_event("call.succeeded", "b", attempts=1),
        call_event("call.succeeded", "a", attempts=1),
    )
    other = timeline(
        *proposed,
        call_event("call.started", "b", attempt=1),
        call_event("call.started", "a", attempt=1),
        call_event("call.succeeded", "a", attempts=1),
        call_event("call.succeeded", "b", attempts=1),
    )
    mine, theirs = transitions(one), transitions(other)
    assert first_difference(mine, theirs) is None
    # Each call's own events keep their order: started before succeeded.
    assert [(t.type, t.data["call_id"]) for t in mine[2:]] == [
        ("call.started", "a"),
        ("call.succeeded", "a"),
        ("call.started", "b"),
        ("call.succeeded", "b"),
    ]


def test_the_first_difference_names_both_sides_or_the_side_that_ended() -> None:
    base = timeline(("run.created", {"tools": ["x"]}), ("run.finished", {"error": None}))
    changed = timeline(("run.created", {"tools": ["x"]}), ("run.finished", {"error": "e"}))
    difference = first_difference(transitions(base), transitions(changed))
    assert difference is not None and difference.seq == 2
    assert difference.recorded and difference.recorded.data == {"error": None}
    shorter = first_difference(transitions(base), transitions(base[:1]))
    assert shorter is not None and shorter.seq == 2 and shorter.replayed is None
    text, code = report(shorter, "the run was not created: no agent")
    assert code == 1 and text.splitlines()[0] == "first difference at seq 2"
    assert report(None, None) == ("no difference", 0)


@pytest.mark.parametrize(
    ("status", "decision"),
    [
        (PreviewStatus.COMMITTED, Decision.COMMIT),
        (PreviewStatus.SUPERSEDED, Decision.COMMIT),
        (PreviewStatus.REJECTED, Decision.REJECT),
        (PreviewStatus.APPROVED, Decision.APPROVE),
        (PreviewStatus.EXPIRED, Decision.STOP),
        (PreviewStatus.PENDING, Decision.STOP),
        (None, Decision.STOP),
    ],
)
def test_a_recorded_decision_is_made_again_or_the_replay_stops(
    status: PreviewStatus | None, decision: Decision
) -> None:
    assert decision_for(status) is decision


def turn(step: int, kind: str, tokens: tuple[int, int], **fields: Any) -> Turn:
    return Turn(
        tenant_id="t",
        run_id="r",
        step=step,
        route="scripted",
        model="m",
        instructions_hash="h",
        tool_schema_hash="h",
        kind=kind,
        attempts=1,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cost_usd=0.0,
        created_at=NOW,
        **fields,
    )


def call(step: int, position: int, call_id: str, tool: str, arguments: Any) -> Call:
    return Call(
        tenant_id="t",
        id=f"call_{step}_{position}",
        run_id="r",
        step=step,
        position=position,
        call_id=call_id,
        tool=tool,
        status=CallStatus.SUCCEEDED,
        arguments=arguments,
        args_hash="h",
        operation_id="op",
        created_at=NOW,
        updated_at=NOW,
    )


def test_the_script_is_rebuilt_from_turns_calls_and_events() -> None:
    events = timeline(
        ("run.created", {}),
        ("turn.failed", {"step": 1, "code": "rate_limited", "message": "slow", "retryable": True}),
        ("turn.completed", {"step": 1, "kind": "tool_calls"}),
        ("call.proposed", {"step": 1, "call_id": "c1", "tool": "search"}),
        ("call.proposed", {"step": 1, "call_id": "c1", "tool": "search"}),
        ("call.proposed", {"step": 1, "call_id": "c2", "tool": "get"}),
        ("call.rejected", {"step": 1, "call_id": "c1", "code": "duplicate_call_id"}),
        ("call.succeeded", {"step": 1, "call_id": "c1"}),
        ("turn.completed", {"step": 2, "kind": "final"}),
        ("run.finished", {}),
    )
    repeated = {"call_id": "c1", "tool": "search", "arguments": {"q": "b"}, "error": {}}
    turns = [
        turn(1, "tool_calls", (10, 2), extra_rejections=(repeated,)),
        turn(2, "final", (30, 4), text="Done [source:s1]"),
    ]
    # Arguments kept as text (unparseable) go back as text, to be refused again.
    calls = [call(1, 0, "c1", "search", {"q": "a"}), call(1, 1, "c2", "get", "{not json")]
    assert rebuild_script(events, turns, calls) == [
        {"type": "error", "code": "rate_limited", "retryable": True, "message": "slow"},
        {
            "type": "tool_calls",
            "calls": [
                {"id": "c1", "name": "search", "arguments": {"q": "a"}},
                {"id": "c1", "name": "search", "arguments": {"q": "b"}},
                {"id": "c2", "name": "get", "arguments": "{not json"},
            ],
            "usage": {"input_tokens": 10, "output_tokens": 2},
        },
        {
            "type": "final",
            "text": "Done [source:s1]",
            "usage": {"input_tokens": 30, "output_tokens": 4},
        },
    ]


def test_a_script_that_its_records_cannot_give_is_refused() -> None:
    events = timeline(("turn.completed", {"step": 1, "kind": "final"}))
    with pytest.raises(NotRecorded):
        rebuild_script(events, [], [])


def test_a_replay_scripts_every_route_that_calls_a_model_and_keeps_its_prices() -> None:
    config = parse_config(
        {
            "models": {
                "small": {
                    "provider": "openai",
                    "model": "gpt-4o-mini",
                    "api_key_env": "OPENAI_API_KEY",
                    "input_cost_per_mtok": 0.15,
                    "output_cost_per_mtok": 0.6,
                    "tags": ["external"],
                    "max_attempts": 2,
                },
                "auto": {"provider": "router", "candidates": ["small"], "default": "small"},
            },
            "agents": {"a": {"model": "small"}},
        },
        builtin_tools=SPECS,
    )
    models = replay_config(config).models
    small = models["small"]
    assert (small.provider, small.model, small.api_key_env) == ("scripted", None, None)
    assert (small.input_cost_per_mtok, small.output_cost_per_mtok) == (0.15, 0.6)
    assert (small.tags, small.max_attempts) == (["external"], 2)
    assert models["auto"].provider == "router"
