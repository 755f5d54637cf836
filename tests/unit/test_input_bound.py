"""The most a model request can be billed: its size when nothing is known of it, and what
the run's previous request was billed plus what this one adds, when it only adds."""

from __future__ import annotations

from typing import Any

from app.adapters.tools.builtin.tech_radar import SPECS
from app.domain.limits.budget import message_json_size
from app.domain.limits.input_bound import (
    MESSAGE_TOKENS,
    TEMPLATE_TOKENS,
    Billed,
    Prompt,
    most_input_tokens,
)

TOOLS = tuple(SPECS.values())
OPENING = ({"role": "system", "content": "be brief"}, {"role": "user", "content": "which?"})


def prompt(
    route: str = "live",
    instructions: str = "be brief",
    tools: Any = TOOLS,
    schema: Any = None,
    messages: Any = OPENING,
) -> Prompt:
    return Prompt(route, instructions, tools, schema, messages, size=0)


def billed() -> Billed:
    return Billed(prompt(), 700)


def test_a_request_that_only_adds_messages_is_bounded_by_what_the_last_was_billed() -> None:
    added = [{"role": "tool", "call_id": "c1", "content": "x" * 500}]
    messages = [*OPENING, *added]
    bound = billed().bound(prompt(tools=list(TOOLS), messages=messages))
    assert bound == 700 + message_json_size(added[0]) + MESSAGE_TOKENS
    # Asked again with the same messages (a retry): what it was billed.
    assert billed().bound(prompt(messages=list(OPENING))) == 700
    assert most_input_tokens(1000) == 1000 + TEMPLATE_TOKENS


def test_a_request_that_changes_anything_else_is_not_bounded_by_the_last() -> None:
    last = billed()
    rewritten = [OPENING[0], {"role": "user", "content": "which?"}]  # equal, not the same
    assert last.bound(prompt(messages=rewritten)) is None
    assert last.bound(prompt(messages=[OPENING[0]])) is None  # a message dropped
    assert last.bound(prompt(route="other")) is None
    assert last.bound(prompt(tools=TOOLS[:1])) is None
    assert last.bound(prompt(instructions="be long")) is None
    assert last.bound(prompt(schema={"type": "object"})) is None
