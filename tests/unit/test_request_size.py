"""A model request's least size is the length of its JSON, counted from each message's
own length (each message encoded once, however many steps send it again)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.adapters.tools.builtin.tech_radar import SPECS
from app.domain.limits.budget import request_size

TOOLS = list(SPECS.values())


def expected(instructions: str, messages: list[Any], tools: list[Any]) -> int:
    size = len(json.dumps([instructions, list(messages)], default=str))
    return size + sum(len(json.dumps(t.input_schema)) + len(t.description) for t in tools)


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
