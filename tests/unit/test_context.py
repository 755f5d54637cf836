"""build_messages: the model's view of a run, turn by turn, with every observation."""

from __future__ import annotations

import json

from app.domain.context import CallRecord, TurnRecord, build_messages


def _messages(*turns: TurnRecord) -> list[dict]:
    return build_messages(instructions="Be brief.", user_input="What is Kafka?", turns=turns)


def test_system_and_user_come_first() -> None:
    assert _messages() == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is Kafka?"},
    ]


def test_tool_calls_turn_is_an_assistant_message_then_observations() -> None:
    turn = TurnRecord(
        step=1,
        kind="tool_calls",
        calls=[
            CallRecord(
                "c1",
                "search",
                {"query": "kafka"},
                "succeeded",
                output={"hits": [1, 2]},
                source_id="s1",
            ),
            CallRecord(
                "c2",
                "get",
                {"id": "x"},
                "failed",
                error={"code": "not_found", "retryable": False, "message": "no x"},
            ),
        ],
    )
    messages = _messages(turn)
    assert messages[2:] == [
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "name": "search", "arguments": {"query": "kafka"}},
                {"id": "c2", "name": "get", "arguments": {"id": "x"}},
            ],
        },
        {"role": "tool", "call_id": "c1", "content": '{"output":{"hits":[1,2]},"source_id":"s1"}'},
        {
            "role": "tool",
            "call_id": "c2",
            "content": '{"error":{"code":"not_found","message":"no x","retryable":false}}',
        },
    ]


def test_success_observation_carries_source_id_and_output() -> None:
    call = CallRecord("c1", "search", {}, "succeeded", output="ünïcode", source_id="s7")
    [_, _, _, observation] = _messages(TurnRecord(step=1, kind="tool_calls", calls=[call]))
    assert json.loads(observation["content"]) == {"source_id": "s7", "output": "ünïcode"}
    assert "ünïcode" in observation["content"]  # kept as UTF-8, not escaped


def test_failure_observation_carries_only_the_error() -> None:
    call = CallRecord(
        "c1", "search", {}, "rejected", output="ignored", source_id="s1", error={"code": "x"}
    )
    [_, _, _, observation] = _messages(TurnRecord(step=1, kind="tool_calls", calls=[call]))
    assert json.loads(observation["content"]) == {"error": {"code": "x"}}


def test_failure_without_recorded_error_reports_its_status() -> None:
    call = CallRecord("c1", "search", {}, "cancelled")
    [_, _, _, observation] = _messages(TurnRecord(step=1, kind="tool_calls", calls=[call]))
    assert json.loads(observation["content"]) == {"error": {"code": "cancelled"}}


def test_extra_rejections_follow_the_recorded_calls() -> None:
    turn = TurnRecord(
        step=1,
        kind="tool_calls",
        calls=[CallRecord("c1", "search", {"q": 1}, "succeeded", output=1, source_id="s1")],
        extra_rejections=[
            {
                "call_id": "c1",
                "tool": "search",
                "arguments": {"q": 2},
                "error": {"code": "duplicate_call_id", "retryable": True, "message": "dup"},
            }
        ],
    )
    assistant, first, extra = _messages(turn)[2:]
    assert assistant["tool_calls"] == [
        {"id": "c1", "name": "search", "arguments": {"q": 1}},
        {"id": "c1", "name": "search", "arguments": {"q": 2}},
    ]
    assert first["call_id"] == "c1"
    assert json.loads(first["content"]) == {"source_id": "s1", "output": 1}
    assert extra == {
        "role": "tool",
        "call_id": "c1",
        "content": '{"error":{"code":"duplicate_call_id","message":"dup","retryable":true}}',
    }


def test_accepted_final_is_the_last_assistant_message() -> None:
    messages = _messages(TurnRecord(step=1, kind="final", text="Kafka is a log."))
    assert messages[2:] == [{"role": "assistant", "content": "Kafka is a log."}]


def test_final_without_text_is_empty_content() -> None:
    messages = _messages(TurnRecord(step=1, kind="final"))
    assert messages[2:] == [{"role": "assistant", "content": ""}]


def test_rejected_final_is_followed_by_the_rejection() -> None:
    rejection = {"code": "invalid_citation", "retryable": True, "message": "unknown s9"}
    messages = _messages(
        TurnRecord(step=1, kind="final", text="See [source:s9].", rejection=rejection)
    )
    assert messages[2:] == [
        {"role": "assistant", "content": "See [source:s9]."},
        {
            "role": "user",
            "content": '{"code":"invalid_citation","message":"unknown s9","retryable":true}',
        },
    ]


def test_turns_keep_their_order() -> None:
    messages = _messages(
        TurnRecord(
            step=1,
            kind="tool_calls",
            calls=[CallRecord("a", "search", {}, "succeeded", output=None, source_id="s1")],
        ),
        TurnRecord(step=2, kind="final", text="bad", rejection={"code": "invalid_citation"}),
        TurnRecord(
            step=3,
            kind="tool_calls",
            calls=[CallRecord("a", "search", {}, "failed", error={"code": "timeout"})],
        ),
        TurnRecord(step=4, kind="final", text="good"),
    )
    assert [(m["role"], m.get("call_id")) for m in messages] == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "a"),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("tool", "a"),
        ("assistant", None),
    ]
    assert messages[-1] == {"role": "assistant", "content": "good"}


def test_tool_calls_turn_without_calls_has_no_observations() -> None:
    messages = _messages(TurnRecord(step=1, kind="tool_calls"))
    assert messages[2:] == [{"role": "assistant", "tool_calls": []}]
