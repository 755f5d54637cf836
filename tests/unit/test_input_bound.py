"""The most a model request can be billed: its size when nothing is known of it, and what
the run's previous request was billed plus what this one adds, when it only adds."""

from __future__ import annotations

from app.adapters.tools.builtin.tech_radar import SPECS
from app.domain.limits.budget import message_json_size
from app.domain.limits.input_bound import MESSAGE_TOKENS, TEMPLATE_TOKENS, Billed, most_input_tokens

TOOLS = tuple(SPECS.values())
OPENING = ({"role": "system", "content": "be brief"}, {"role": "user", "content": "which?"})


def billed(**changes: object) -> Billed:
    fields: dict[str, object] = {
        "route": "live",
        "instructions": "be brief",
        "tools": TOOLS,
        "schema": None,
        "messages": OPENING,
        "input_tokens": 700,
    }
    return Billed(**{**fields, **changes})  # type: ignore[arg-type]


def test_a_request_that_only_adds_messages_is_bounded_by_what_the_last_was_billed() -> None:
    added = [{"role": "tool", "call_id": "c1", "content": "x" * 500}]
    messages = [*OPENING, *added]
    bound = billed().bound("live", "be brief", list(TOOLS), None, messages)
    assert bound == 700 + message_json_size(added[0]) + MESSAGE_TOKENS
    # Asked again with the same messages (a retry): what it was billed.
    assert billed().bound("live", "be brief", TOOLS, None, list(OPENING)) == 700
    assert most_input_tokens(1000) == 1000 + TEMPLATE_TOKENS


def test_a_request_that_changes_anything_else_is_not_bounded_by_the_last() -> None:
    last = billed()
    same = ("live", "be brief", TOOLS, None)
    rewritten = [OPENING[0], {"role": "user", "content": "which?"}]  # equal, not the same
    assert last.bound(*same, rewritten) is None
    assert last.bound(*same, [OPENING[0]]) is None  # a message dropped
    assert last.bound("other", "be brief", TOOLS, None, list(OPENING)) is None
    assert last.bound("live", "be brief", TOOLS[:1], None, list(OPENING)) is None
    assert last.bound("live", "be long", TOOLS, None, list(OPENING)) is None
    assert last.bound("live", "be brief", TOOLS, {"type": "object"}, list(OPENING)) is None
