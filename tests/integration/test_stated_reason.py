"""What the model says beside its calls (its stated reason), kept for approvers: on the
turn and in `turn.completed`'s `text`, from the scripted model and from a provider's
reply alike, with secrets redacted and its length bounded."""

from __future__ import annotations

from typing import Any

from app.domain.model.replies import said as kept_words
from tests.support.approvals import (
    approvals_harness,
    events_of,
    keys,
    move,
    parked_run,
    row,
)
from tests.support.factories import final, run_body, tool_calls
from tests.support.fake_openai import FakeOpenAI, Reply, text
from tests.support.live_model import live_harness, provider

__all__ = ["provider"]  # a fixture: used by name

AWS = "AKIA" + "IOSFODNN7EXAMPLE"


def _completed(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == "turn.completed"]


async def test_a_scripted_turns_words_are_kept_redacted_and_bounded(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, _ = await keys(h)
    kafka = await row(h, "Kafka")
    asked = tool_calls(move(kafka["id"]))
    asked["text"] = f"Kafka is proven in three services (deploy key {AWS}); adopt it."
    run = await parked_run(h, caller, asked, final("ok"))
    [said] = _completed(await events_of(h, caller, run["id"]))
    assert said["kind"] == "tool_calls" and "Kafka is proven" in said["text"]
    assert AWS not in said["text"] and "[REDACTED]" in said["text"]

    # A provider's words are cut at 2,000 characters; a scripted item may not say more.
    assert len(kept_words("why " * 1000) or "") == 2000 and kept_words("  ") is None
    long = tool_calls(move(kafka["id"], call_id="m2"))
    long["text"] = "why " * 1000
    refused = await h.client.post("/v1/runs", headers=caller, json=run_body(long, final("ok")))
    assert refused.status_code == 422 and refused.json()["code"] == "validation-error"

    silent = await parked_run(h, caller, tool_calls(move(kafka["id"], call_id="m3")), final("ok"))
    [nothing] = _completed(await events_of(h, caller, silent["id"]))
    assert "text" not in nothing


async def test_a_providers_words_beside_its_calls_are_kept(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    message = {
        "role": "assistant",
        "content": "Looking Redis up first: the user asked about its ring.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search_technologies", "arguments": '{"query": "redis"}'},
            }
        ],
    }
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-test-2026",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    provider.answer(Reply(200, body), text("Redis is in adopt [source:s1]"))
    headers = await h.key()
    answer = await h.client.post(
        "/v1/runs", headers=headers, json={"agent": "live", "input": "Redis?", "wait_s": 10}
    )
    assert answer.status_code == 201 and answer.json()["termination_reason"] == "final"
    events = await events_of(h, headers, answer.json()["id"])
    calls, final_turn = _completed(events)
    assert calls["text"] == "Looking Redis up first: the user asked about its ring."
    assert "text" not in final_turn  # a final answer's text is the run's output
