"""A model request's size is the length of its ASCII-escaped JSON, counted from each
message's own length (each message encoded once, however many steps send it again): never
less than the UTF-8 bytes of what a provider tokenizes, so that it bounds the input
tokens from above (`most_input_tokens`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.adapters.tools.builtin.tech_radar import SPECS
from app.domain.limits.budget import request_size

TOOLS = list(SPECS.values())


def expected(instructions: str, messages: list[Any], tools: list[Any]) -> int:
    size = len(json.dumps([instructions, list(messages)], default=str))
    return size + sum(
        len(json.dumps(t.input_schema)) + len(json.dumps(t.name)) + len(json.dumps(t.description))
        for t in tools
    )


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [{"role": "user", "content": "hé"}],
        [
            {"role": "system", "content": "be brief"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "arguments": {"q": "ü"}}]},
            {"role": "tool", "content": {"items": [1, 2.5, None, True]}},
        ],
    ],
)
def test_the_size_is_the_requests_json_length(messages: list[Any]) -> None:
    for tools in ([], TOOLS):
        assert request_size("instructions ✓", messages, tools) == expected(
            "instructions ✓", messages, tools
        )
        # Asked again (a later step sends the same messages): the same answer.
        assert request_size("instructions ✓", messages, tools) == expected(
            "instructions ✓", messages, tools
        )


def test_the_size_is_never_less_than_the_utf8_bytes_of_the_text_sent() -> None:
    text = "ünïcödé ✓ 𝄞 " * 50
    messages = [{"role": "user", "content": text}, {"role": "tool", "content": text}]
    sent = [text, *(m["content"] for m in messages)]
    sent += [t.name + t.description + json.dumps(t.input_schema) for t in TOOLS]
    assert request_size(text, messages, TOOLS) >= sum(len(s.encode()) for s in sent)
