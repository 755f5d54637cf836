"""What a model says is untrusted input: call ids, tool names, arguments and final text
are bounded and checked before anything of them is stored. Output Postgres cannot store
(a NUL, an unpaired surrogate) or past the bounds is the model's error `malformed_output`,
retried like any model error; an unknown, overlong tool name is an `unknown_tool`
observation stored cut. Nothing of it is a failed write or a 500."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fake_openai import FakeOpenAI, calls, text
from tests.support.harness import Harness

# The OpenAI provider's fixture (a fake provider on loopback) and its agent "live".
from tests.support.live_model import events_of, live_harness, provider, start
from tests.support.runs import calls_of

__all__ = ["provider"]  # a fixture: used by name


async def post_run(h: Harness, body: dict[str, Any]) -> dict[str, Any]:
    headers = await h.key()
    response = await h.client.post("/v1/runs", headers=headers, json=body)
    assert response.status_code == 201, response.text
    return response.json()


async def failures(h: Harness, run_id: str) -> list[str]:
    return [e["data"]["code"] for e in await events_of(h, run_id) if e["type"] == "turn.failed"]


#: The bounds documented in docs/decisions.md ("Model-side gates").
MAX_CALL_ID_CHARS, MAX_TOOL_NAME_CHARS = 128, 128
LONG_ID = "c" * (MAX_CALL_ID_CHARS + 1)
SEARCH = ("c1", "search_technologies", {"query": "database"})


async def test_an_overlong_call_id_is_the_models_error_and_retried(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory()
    await seed_radar(h)
    bad = tool_calls((LONG_ID, "search_technologies", {"query": "database"}), usage=(10, 1))
    run = await post_run(h, run_body(bad, tool_calls(SEARCH), final("found [source:s1]")))
    assert run["termination_reason"] == "final", run
    assert await failures(h, run["id"]) == ["malformed_output"]
    # The refused reply is not a turn, but its tokens were spent: they count.
    assert run["usage"]["steps"] == 2 and run["usage"]["input_tokens"] == 10
    assert [c["call_id"] for c in await calls_of(h, run["id"])] == ["c1"]


async def test_malformed_output_that_persists_ends_the_run_model_failed(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory()
    bad = tool_calls((LONG_ID, "search_technologies", {"query": "database"}))
    run = await post_run(h, run_body(bad, bad, bad, final("never")))
    assert run["termination_reason"] == "model_failed"
    assert run["error"]["code"] == "malformed_output"
    assert "call id" in run["error"]["message"]
    assert await failures(h, run["id"]) == ["malformed_output"] * 3  # the route's attempts
    assert run["usage"]["steps"] == 0


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (run_body(final("a\ud800b")), "script.0.text"),
        ({**run_body(final("x")), "input": "\udfff"}, "input"),
        (run_body(tool_calls(("c\ud800", "search_technologies", {}))), "script.0.calls.0.id"),
        (
            run_body(tool_calls(("c1", "search_technologies", '{"query": "\ud800"}'))),
            "script.0.calls.0.arguments",
        ),
    ],
    ids=["final", "input", "call_id", "arguments"],
)
async def test_a_script_with_an_unpaired_surrogate_is_refused_at_creation(
    harness: Harness, body: dict[str, Any], path: str
) -> None:
    headers = {**await harness.key(), "Content-Type": "application/json"}
    # ASCII-escaped: UTF-8 text cannot carry an unpaired surrogate, JSON's escapes can.
    content = json.dumps(body).encode()
    response = await harness.client.post("/v1/runs", headers=headers, content=content)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["path"].startswith(path)


async def test_an_overlong_tool_name_is_an_unknown_tool_stored_cut(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider, max_attempts=2)
    provider.answer(calls(("c1", "x" * 10_000, "{}")), text("sorry"))
    run = await start(h)
    assert run["termination_reason"] == "final", run
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "rejected" and call["error"]["code"] == "unknown_tool"
    assert len(call["tool"]) == MAX_TOOL_NAME_CHARS and call["tool"].endswith("…")
    # The model hears of it with the name cut too.
    replayed = provider.requests[1]["messages"][-2]["tool_calls"][0]["function"]["name"]
    assert replayed == call["tool"]


@pytest.mark.parametrize(
    "reply",
    [
        calls(("c\x001", "search_technologies", '{"query": "db"}')),
        calls(("c1", "search\x00_technologies", '{"query": "db"}')),
        calls(("c1", "search_technologies", '{"query": "d\x00b"}')),
        text("the answer\x00"),
        calls(("c\ud800", "search_technologies", '{"query": "db"}')),
        calls(("c1", "search_technologies\udfff", '{"query": "db"}')),
        calls(("c1", "search_technologies", '{"query": "\ud83d"}')),
        text("the answer \udc00"),
    ],
    ids=[
        "nul-call-id",
        "nul-tool-name",
        "nul-arguments",
        "nul-final",
        "surrogate-call-id",
        "surrogate-tool-name",
        "surrogate-arguments",
        "surrogate-final",
    ],
)
async def test_what_postgres_cannot_store_is_the_models_error(
    harness_factory, provider: FakeOpenAI, reply: Any
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider, max_attempts=2)
    provider.answer(reply, reply)
    run = await start(h)
    assert run["termination_reason"] == "model_failed", run
    assert run["error"]["code"] == "malformed_output"
    assert await failures(h, run["id"]) == ["malformed_output", "malformed_output"]
    assert len(provider.requests) == 2 and await calls_of(h, run["id"]) == []


async def test_a_retry_after_malformed_output_goes_on(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider, max_attempts=2)
    provider.answer(text("bad\x00"), text("good"))
    run = await start(h)
    assert run["termination_reason"] == "final" and run["output"]["text"] == "good"
    assert await failures(h, run["id"]) == ["malformed_output"]


@pytest.mark.parametrize("escaped", ['{"query": "\\u0000"}', '{"query": "\\ud800"}'])
async def test_arguments_that_decode_to_what_postgres_cannot_store_are_invalid(
    harness_factory, provider: FakeOpenAI, escaped: str
) -> None:  # type: ignore[no-untyped-def]
    """Escaped in valid JSON, the text itself is clean: the decoded value is refused as
    invalid arguments, an observation the model can correct."""
    h = await live_harness(harness_factory, provider, max_attempts=2)
    provider.answer(calls(("c1", "search_technologies", escaped)), text("sorry"))
    run = await start(h)
    assert run["termination_reason"] == "final", run
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "rejected" and call["error"]["code"] == "invalid_arguments"
    assert call["arguments"] == escaped  # kept as the model's text, which is clean
