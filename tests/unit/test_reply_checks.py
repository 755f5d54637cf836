"""A model's reply is checked before any of it is stored: bounds on call ids and final
text, nothing Postgres cannot store, usage in range; the message never repeats it."""

from __future__ import annotations

import pytest

from app.domain.model.replies import (
    MAX_CALL_ID_CHARS,
    MAX_FINAL_TEXT_CHARS,
    FinalAnswer,
    ModelReply,
    ProposedCall,
    TokenUsage,
    ToolCallsProposal,
    clean_text,
    reply_problem,
)


def proposal(*calls: ProposedCall) -> ToolCallsProposal:
    return ToolCallsProposal(calls)


OK = ProposedCall("c1", "search", '{"q": "x"}')


@pytest.mark.parametrize(
    "reply",
    [
        FinalAnswer("fine 😀"),
        FinalAnswer("x" * MAX_FINAL_TEXT_CHARS),
        proposal(OK, ProposedCall("c" * MAX_CALL_ID_CHARS, "search", {"q": "x"})),
        # Escaped in JSON text, a NUL is clean text: the arguments' check refuses it.
        proposal(ProposedCall("c1", "search", '{"q": "\\u0000"}')),
        # A long tool name is an unknown tool, not malformed output.
        proposal(ProposedCall("c1", "s" * 10_000, {})),
    ],
)
def test_a_reply_within_the_bounds_passes(reply: ModelReply) -> None:
    assert reply_problem(reply) is None


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (FinalAnswer("x" * (MAX_FINAL_TEXT_CHARS + 1)), "final text is longer"),
        (FinalAnswer("a\x00"), "final text holds a NUL character"),
        (FinalAnswer("a\udc00"), "final text holds an unpaired surrogate"),
        (proposal(ProposedCall("c" * 129, "s", {})), "tool call 1: its call id is longer"),
        (proposal(OK, ProposedCall("c\x00", "s", {})), "tool call 2: its call id holds a NUL"),
        (proposal(ProposedCall("c1", "s\ud800", {})), "its tool name holds an unpaired"),
        (proposal(ProposedCall("c1", "s", '{"q": "\x00"}')), "its arguments hold a NUL"),
        (proposal(ProposedCall("c1", "s", {"q": ["\ud83d"]})), "its arguments hold an unpaired"),
        (FinalAnswer("x", TokenUsage(-1, 0)), "token usage is out of range"),
        (FinalAnswer("x", TokenUsage(0, 10**9 + 1)), "token usage is out of range"),
    ],
)
def test_a_reply_past_the_bounds_is_malformed(reply: ModelReply, problem: str) -> None:
    found = reply_problem(reply)
    assert found is not None and problem in found
    assert "\x00" not in found and found.encode()  # safe to store itself


def test_clean_text_drops_what_cannot_be_stored_and_marks_a_cut() -> None:
    assert clean_text("a\x00b\ud800c", 10) == "abc"
    assert clean_text("abcdef", 4) == "abc…"
